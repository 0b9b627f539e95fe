"""Every model's parameter total agrees with its architecture, or says why not."""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from catalog.model_files.params import architecture_params, params_deviation
from core.models import AttentionKind, ModelSpec, Provenance

TOLERANCE = 0.03
MODELS = load_facts().models


@pytest.mark.parametrize("model", MODELS, ids=[m.id for m in MODELS])
def test_parameters_match_the_architecture(model: ModelSpec) -> None:
    deviation = params_deviation(model)
    if model.params_note:
        return  # explained: MTP layers, lookup tables, hybrid layers, vision encoders
    assert deviation is not None, f"{model.id}: a width is missing (intermediate_size / moe_intermediate_size)"
    assert abs(deviation) <= TOLERANCE, f"{model.id}: catalog total differs from the architecture by {deviation:+.1%}"


def test_most_models_are_checked_not_excused() -> None:
    excused = [m.id for m in MODELS if m.params_note and not abs(params_deviation(m) or 1.0) <= TOLERANCE]
    assert len(excused) <= 0.12 * len(MODELS), excused


def _spec(**kw: object) -> ModelSpec:
    base: dict[str, object] = dict(
        id="t",
        name="t",
        family="t",
        total_params=1,
        active_params=1,
        n_layers=32,
        hidden_size=4096,
        n_heads=32,
        n_kv_heads=8,
        head_dim=128,
        vocab_size=128256,
        max_context=8192,
        intermediate_size=14336,
        provenance=Provenance(source="test", as_of="2026-11-30"),
    )
    return ModelSpec(**(base | kw))  # type: ignore[arg-type]


def test_llama_3_1_8b_arithmetic() -> None:
    # embed 525M + head 525M + 32 x (attention 42M + FFN 176M) = 8.03B (the checkpoint holds 8,030,261,248)
    assert architecture_params(_spec()) == pytest.approx(8_030_261_248, rel=0.001)


def test_tied_embeddings_and_two_matrix_mlp_count_less() -> None:
    full = architecture_params(_spec())
    assert full is not None
    assert architecture_params(_spec(tied_embeddings=True)) == full - 128256 * 4096
    assert architecture_params(_spec(gated_ffn=False)) == full - 32 * 4096 * 14336


def test_deepseek_v3_mla_moe_arithmetic() -> None:
    v3 = _spec(
        n_layers=61,
        hidden_size=7168,
        n_heads=128,
        n_kv_heads=128,
        head_dim=192,
        v_head_dim=128,
        attention=AttentionKind.MLA,
        kv_lora_rank=512,
        q_lora_rank=1536,
        qk_rope_head_dim=64,
        vocab_size=129280,
        intermediate_size=18432,
        n_dense_layers=3,
        n_experts=256,
        experts_per_token=8,
        n_shared_experts=1,
        moe_intermediate_size=2048,
    )
    assert architecture_params(v3) == pytest.approx(671.0e9, rel=0.005)


def test_missing_width_is_reported_as_unknown() -> None:
    assert architecture_params(_spec(intermediate_size=None)) is None
