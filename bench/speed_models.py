"""Architectures of the speed-calibration models (``bench/speed_data.py`` maps each CSV row to one by its
``model`` prefix): hand-written from shared/calibration/configs.csv for the original set, the catalog's own rows
(catalog/facts/models.toml) for the models issue 37 added."""

from __future__ import annotations

from typing import Any

from catalog.facts import FACTS_DIR, converted_rows, model_from_row
from catalog.importers.model_configs import config_geometry, stored_config
from catalog.model_files.params import routed_expert_params
from core.models import AttentionKind, ModelSpec, Provenance

PROV = Provenance(source="shared/calibration/configs.csv (HF config.json copies) / model cards", as_of="2026-11")


def _m(mid: str, total: float, active: float | None = None, **kw: Any) -> ModelSpec:
    return ModelSpec(
        id=mid,
        name=mid,
        family=mid.split("-")[0],
        total_params=round(total * 1e9),
        active_params=round((active or total) * 1e9),
        provenance=PROV,
        **kw,
    )


def _experts(repo: str) -> int | None:
    """Routed-expert weights counted from the catalog's stored config.json of ``repo`` (catalog/configs/), as the
    catalog rows get them; a MoE without one (GLM-4.7-Flash) splits by its total and active counts."""
    return routed_expert_params(stored_config(repo), config_geometry(repo))


# Architectures of the calibration models (configs.csv; GLM-4.7-Flash from its HF config.json).
LLAMA2_7B = _m(
    "llama-2-7b",
    6.74,
    n_layers=32,
    hidden_size=4096,
    n_heads=32,
    n_kv_heads=32,
    head_dim=128,
    vocab_size=32000,
    max_context=4096,
)
LLAMA3_8B = _m(
    "llama-3-8b",
    8.03,
    n_layers=32,
    hidden_size=4096,
    n_heads=32,
    n_kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=131072,
)
LLAMA3_70B = _m(
    "llama-3-70b",
    70.55,
    n_layers=80,
    hidden_size=8192,
    n_heads=64,
    n_kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=8192,
)
QWEN25_7B = _m(
    "qwen2.5-7b",
    7.62,
    n_layers=28,
    hidden_size=3584,
    n_heads=28,
    n_kv_heads=4,
    head_dim=128,
    vocab_size=152064,
    max_context=131072,
)
QWEN3_30B_A3B = _m(
    "qwen3-30b-a3b",
    30.53,
    3.35,
    n_layers=48,
    hidden_size=2048,
    n_heads=32,
    n_kv_heads=4,
    head_dim=128,
    n_experts=128,
    experts_per_token=8,
    moe_intermediate_size=768,
    expert_params=_experts("Qwen/Qwen3-30B-A3B"),
    vocab_size=151936,
    max_context=262144,
)
GEMMA3_4B = _m(
    "gemma-3-4b",
    3.88,
    n_layers=34,
    hidden_size=2560,
    n_heads=8,
    n_kv_heads=4,
    head_dim=256,
    sliding_window=1024,
    n_sliding_layers=29,
    vocab_size=262144,
    max_context=131072,
    tied_embeddings=True,
)
GPT_OSS_20B = _m(
    "gpt-oss-20b",
    20.91,
    3.61,
    n_layers=24,
    hidden_size=2880,
    n_heads=64,
    n_kv_heads=8,
    head_dim=64,
    sliding_window=128,
    n_sliding_layers=12,
    n_experts=32,
    experts_per_token=4,
    moe_intermediate_size=2880,
    expert_params=_experts("openai/gpt-oss-20b"),
    vocab_size=201088,
    max_context=131072,
    native_dtype="mxfp4",
)
GPT_OSS_120B = _m(
    "gpt-oss-120b",
    116.83,
    5.13,
    n_layers=36,
    hidden_size=2880,
    n_heads=64,
    n_kv_heads=8,
    head_dim=64,
    sliding_window=128,
    n_sliding_layers=18,
    n_experts=128,
    experts_per_token=4,
    moe_intermediate_size=2880,
    expert_params=_experts("openai/gpt-oss-120b"),
    vocab_size=201088,
    max_context=131072,
    native_dtype="mxfp4",
)
GLM47_FLASH = _m(
    "glm-4.7-flash",
    29.94,
    3.9,
    n_layers=47,
    hidden_size=2048,
    n_heads=20,
    n_kv_heads=20,
    head_dim=256,
    v_head_dim=256,
    attention=AttentionKind.MLA,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    n_experts=64,
    experts_per_token=4,
    n_shared_experts=1,
    moe_intermediate_size=1536,
    vocab_size=154880,
    max_context=202752,
)


def _catalog_model(mid: str) -> ModelSpec:
    """A calibration model whose architecture comes from the catalog row (catalog/facts/models.toml)."""
    spec: ModelSpec = next(m for m in converted_rows(FACTS_DIR, "models.toml", "model", model_from_row) if m.id == mid)
    return spec


# Issue 37 models: the catalog's rows (DeepSeek-V3 with its MLA, 3 dense + 58 MoE layers; Llama-3.2-1B; Llama-3.1-405B).
DEEPSEEK_V3 = _catalog_model("deepseek-v3")
LLAMA32_1B = _catalog_model("llama-3.2-1b-instruct")
LLAMA31_405B = _catalog_model("llama-3.1-405b-instruct")
MODELS = [  # (row "model" prefix, lower case) -> spec
    ("meta-llama/llama-2-7b", LLAMA2_7B),
    ("meta-llama-3-8b", LLAMA3_8B),
    ("meta-llama/llama-3.1-8b", LLAMA3_8B),
    ("llama 8b", LLAMA3_8B),
    ("meta-llama-3-70b", LLAMA3_70B),
    ("ggml-org/qwen2.5-coder-7b", QWEN25_7B),
    ("ggml-org/qwen3-coder-30b", QWEN3_30B_A3B),
    ("qwen/qwen3-30b-a3b", QWEN3_30B_A3B),
    ("qwen/qwen3-coder-30b", QWEN3_30B_A3B),  # same architecture as Qwen3-30B-A3B (48 layers, 128 experts, top-8)
    ("deepseek-ai/deepseek-r1-distill-qwen-7b", QWEN25_7B),  # a Qwen2.5-Math-7B fine-tune: the qwen2 7B architecture
    ("ggml-org/gemma-3-4b", GEMMA3_4B),
    ("ggml-org/gpt-oss-20b", GPT_OSS_20B),
    ("ggml-org/gpt-oss-120b", GPT_OSS_120B),
    ("ggml-org/glm-4.7-flash", GLM47_FLASH),
    ("deepseek-ai/deepseek-v3 ", DEEPSEEK_V3),
    ("meta-llama/llama-3.2-1b", LLAMA32_1B),
    # Shisa V2 fine-tunes keep their base's architecture (llama-bench prints 405.85 B and 70.55 B parameters)
    ("shisa-ai/shisa-v2-llama3.1-405b", LLAMA31_405B),
    ("shisa-ai/shisa-v2-llama3.3-70b", LLAMA3_70B),
]
