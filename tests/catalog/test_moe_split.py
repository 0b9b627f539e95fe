"""Every MoE in the catalog splits into embedding, output, dense and routed-expert weights from primary facts.

Generated over the catalog, not examples: where a config.json is stored the routed experts are the
config's count (``catalog.model_files.params.routed_expert_params``), the four groups add up to the
catalog total, and the dense part holds at least the attention weights wherever ``core.weights.attention_params``
counts attention plainly. Rows without a stored config fall back to the publisher's total/active counts
(``core.weights.split_params``) and are only held to the sum.

gpt-oss is the case the fallback got wrong: OpenAI's active counts leave the embedding out, so
(total - active) / (1 - k/E) took the attention into the experts (gpt-oss-20b had no dense weights at all).
"""

from __future__ import annotations

import tomllib

import pytest

from catalog.fact_files import FACTS_DIR
from catalog.facts import load_facts
from catalog.importers.model_configs import config_geometry, stored_config
from catalog.model_files.params import routed_expert_params
from core.models import AttentionKind, ModelSpec
from core.weights import attention_params, split_params

CATALOG = load_facts()
ROWS = {r["id"]: r for r in tomllib.loads((FACTS_DIR / "models.toml").read_text(encoding="utf-8"))["model"]}
MOES = [m for m in CATALOG.models if m.is_moe]
WITH_CONFIG = [m for m in MOES if ROWS[m.id].get("config")]
IDS = [m.id for m in MOES]
# typed totals are rounded (20.91B is gpt-oss-20b's 20,914,757,184): the dense remainder carries that rounding
TOTAL_ROUNDING = 0.0025


def plain_attention(model: ModelSpec) -> str | None:
    """Why ``attention_params`` (hidden x heads x head_dim per layer, one layout) does not count this model's
    attention, or None when it does."""
    if model.attention is not AttentionKind.GQA:
        return "MLA: q/kv are compressed through q_lora_rank/kv_lora_rank, the plain count is far too high"
    if model.pooled_kv_elements:
        return "pooled (compressed) attention with its own projections"
    if model.sliding_kv_heads or model.sliding_head_dim or model.global_head_dim or model.global_kv_heads:
        return "sliding and full layers have their own head layouts; the plain count uses one for all"
    return None


def test_most_moes_have_a_stored_config() -> None:
    assert len(MOES) >= 70
    assert len(WITH_CONFIG) >= 40


@pytest.mark.parametrize("model", MOES, ids=IDS)
def test_the_split_adds_up_to_the_total(model: ModelSpec) -> None:
    groups = split_params(model)
    assert groups.total == model.total_params
    assert groups.experts > 0, groups
    if ROWS[model.id].get("config"):  # the fallback can leave nothing dense (gpt-oss-safeguard-20b: no config)
        assert groups.dense > 0, groups


@pytest.mark.parametrize("model", WITH_CONFIG, ids=[m.id for m in WITH_CONFIG])
def test_experts_come_from_the_stored_config(model: ModelSpec) -> None:
    repo = ROWS[model.id]["config"]
    counted = routed_expert_params(stored_config(repo), config_geometry(repo))
    assert counted is not None
    assert model.expert_params == counted
    assert split_params(model).experts == counted


@pytest.mark.parametrize("model", MOES, ids=IDS)
def test_rows_without_a_config_use_the_fallback(model: ModelSpec) -> None:
    if ROWS[model.id].get("config"):
        return
    assert model.expert_params is None
    share = model.experts_per_token / model.n_experts  # type: ignore[operator]
    groups = split_params(model)
    formula = round((model.total_params - model.active_params) / (1 - share))
    assert groups.experts == min(formula, model.total_params - groups.embed - groups.output)  # clamped to the total


@pytest.mark.parametrize("model", WITH_CONFIG, ids=[m.id for m in WITH_CONFIG])
def test_dense_holds_at_least_the_attention(model: ModelSpec) -> None:
    if plain_attention(model) is not None:
        return
    dense, attention = split_params(model).dense, attention_params(model)
    assert dense >= attention - TOTAL_ROUNDING * model.total_params, (
        f"{model.id}: dense {dense / 1e9:.3f}B < attention {attention / 1e9:.3f}B"
    )


def test_the_exceptions_are_few() -> None:
    excused = [m.id for m in WITH_CONFIG if plain_attention(m) is not None]
    assert len(excused) <= 0.5 * len(WITH_CONFIG), excused


# OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", arXiv 2508.10925, Table 1 (parameter counts, billions):
# model: (MLP, attention, embed + unembed, total). MLP is the experts with their router; active = attention +
# k/E of the MLP + unembed (5.13B, 3.61B), which is why total/active cannot split it.
MODEL_CARD = {
    "gpt-oss-120b": (114.71, 0.96, 1.16, 116.83),
    "gpt-oss-20b": (19.12, 0.64, 1.16, 20.91),
}


@pytest.mark.parametrize("model_id", sorted(MODEL_CARD))
def test_gpt_oss_matches_the_model_card(model_id: str) -> None:
    model = CATALOG.model(model_id)
    assert model is not None
    mlp, attention, embeddings, total = MODEL_CARD[model_id]
    groups = split_params(model)
    assert model.n_experts is not None
    router = model.n_layers * (model.hidden_size + 1) * model.n_experts  # the card counts it in the MLP, we in dense
    assert model.total_params / 1e9 == pytest.approx(total, abs=0.005)
    assert (groups.embed + groups.output) / 1e9 == pytest.approx(embeddings, abs=0.005)
    assert (groups.experts + router) / 1e9 == pytest.approx(mlp, abs=0.005)
    # dense = attention (with its biases and sinks) and norms; the typed total's rounding lands here too
    assert (groups.dense - router) / 1e9 == pytest.approx(attention, abs=0.01)
    assert attention_params(model) / 1e9 == pytest.approx(attention, abs=0.01)
