"""Model geometry comes from stored config.json copies through the importer, never typed by hand."""

from __future__ import annotations

import re
from typing import Any

import pytest

from catalog.facts import FACTS_DIR, load_facts, raw_rows
from catalog.importers.model_configs import (
    CONFIG_DIR,
    GEOMETRY_KEYS,
    UNVERIFIED_GEOMETRY,
    ConfigSourceError,
    apply_config,
    config_geometry,
    sources,
    stored_config,
)
from catalog.model_files.config import checked_geometry
from catalog.model_files.geometry import BLOCK_TYPES, geometry, gguf_mtp_layers, model_type, mtp_layers, text_config
from catalog.model_files.layers import LFM2
from catalog.model_files.params import config_params, embedding_params, mtp_layer_params
from catalog.model_files.values import GeometryError

ROWS = raw_rows(FACTS_DIR, "models.toml", "model")
WITH_CONFIG = [r for r in ROWS if "config" in r]
CATALOG = load_facts()
TOTAL_TOLERANCE = 0.03
# publishers count active parameters with or without embeddings; a formula-made figure is off by far more
ACTIVE_TOLERANCE = 0.2


def test_every_stored_config_has_a_cited_source_and_every_source_a_file() -> None:
    stored = {str(p.relative_to(CONFIG_DIR))[: -len(".json")] for p in CONFIG_DIR.rglob("*.json")}
    assert stored == set(sources())
    for repo, src in sources().items():
        assert re.match(r"^https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/", src["url"]), repo
        assert re.match(r"^\d{4}-\d{2}(-\d{2})?$", src["as_of"]), repo


def test_rows_with_a_config_type_no_geometry() -> None:
    assert len(WITH_CONFIG) >= 30
    for row in WITH_CONFIG:
        typed = [k for k in GEOMETRY_KEYS if k in row]
        assert not typed, f"{row['id']}: geometry typed by hand next to its config: {typed}"


def test_rows_without_a_config_are_marked_unverified() -> None:
    configured = {r["id"] for r in WITH_CONFIG}
    for model in CATALOG.models:
        marked = UNVERIFIED_GEOMETRY in model.provenance.unverified
        assert marked is (model.id not in configured), model.id


def test_typed_geometry_next_to_a_config_is_refused() -> None:
    row = {"id": "x", "config": "Qwen/Qwen3-8B", "n_layers": 36, "source": "s", "as_of": "2026-12"}
    with pytest.raises(ConfigSourceError, match="n_layers"):
        apply_config(row)


@pytest.mark.parametrize("row", WITH_CONFIG, ids=[r["id"] for r in WITH_CONFIG])
def test_parameters_recomputed_from_the_stored_config(row: dict[str, Any]) -> None:
    """The publisher's totals agree with what the stored config implies (or the row says why not)."""
    g = config_geometry(row["config"])
    total, active = config_params(stored_config(row["config"]), g)
    model = CATALOG.model(row["id"])
    assert model is not None
    if not model.params_note:
        assert abs(model.total_params - total) / model.total_params <= TOTAL_TOLERANCE, (model.id, total)
    miss = min(abs(model.active_params - a) for a in (active, active - embedding_params(g)))
    assert miss / model.active_params <= ACTIVE_TOLERANCE, (model.id, active)


BLOCK_ROWS = [r for r in WITH_CONFIG if model_type(text_config(stored_config(r["config"]))) in BLOCK_TYPES | {LFM2}]


@pytest.mark.parametrize("row", BLOCK_ROWS, ids=[r["id"] for r in BLOCK_ROWS])
def test_per_block_configs_count_the_publishers_totals(row: dict[str, Any]) -> None:
    """Nemotron-H, Nemotron-NAS and LFM2 rows are excused from the per-layer formula, not from their config's count."""
    total, _ = config_params(stored_config(row["config"]), config_geometry(row["config"]))
    model = CATALOG.model(row["id"])
    assert model is not None and model.params_note
    assert abs(model.total_params - total) / model.total_params <= TOTAL_TOLERANCE, (model.id, total)


def test_nemotron_h_blocks_are_read() -> None:
    nano = config_geometry("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")  # hybrid_override_pattern
    assert (nano["n_layers"], nano["n_full_attention_layers"], nano["n_linear_layers"]) == (52, 6, 23)
    # Mamba2 state: 64 heads x 64 x 128 state x 4 B + conv (4 - 1) x (4096 + 2 x 8 x 128) x 4 B
    assert nano["linear_state_bytes"] == 64 * 64 * 128 * 4 + 3 * (4096 + 2 * 8 * 128) * 4
    assert (nano["gated_ffn"], nano["n_experts"], nano["shared_expert_intermediate_size"]) == (False, 128, 3712)
    ultra = config_geometry("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16")  # layers_block_type, no layer count
    assert (ultra["n_layers"], ultra["n_full_attention_layers"], ultra["n_linear_layers"]) == (108, 12, 48)
    total, active = config_params(stored_config("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"), ultra)
    assert round(total / 1e9) == 549 and round(active / 1e9) == 56  # latent experts (moe_latent_size 2048)
    dense = config_geometry("nvidia/Nemotron-H-56B-Base-8K")  # "-" blocks: ReLU^2 MLP, no experts
    assert (dense["n_full_attention_layers"], dense["intermediate_size"], dense.get("n_experts")) == (10, 32768, None)


def test_nemotron_nas_blocks_are_read() -> None:
    g = config_geometry("nvidia/Llama-3_3-Nemotron-Super-49B-v1")  # block_configs: 31 blocks without attention
    assert (g["n_layers"], g["n_full_attention_layers"], g["n_kv_heads"]) == (80, 49, 8)
    total, active = config_params(stored_config("nvidia/Llama-3_3-Nemotron-Super-49B-v1"), g)
    assert total == active and round(total / 1e8) == 499
    bad = stored_config("nvidia/Llama-3_3-Nemotron-Super-49B-v1") | {"block_configs": [{"ffn": {"ffn_mult": "x"}}]}
    with pytest.raises(GeometryError, match="ffn_mult"):
        config_params(bad, geometry(bad))


def test_gemma_4_full_layers_have_their_own_heads_and_the_kv_cache_uses_them() -> None:
    from core.memory import kv_cache_bytes
    from core.models import Workload

    g = config_geometry("google/gemma-4-26B-A4B")
    assert (g["n_kv_heads"], g["head_dim"], g["global_kv_heads"], g["global_head_dim"]) == (8, 256, 2, 512)
    assert (g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (5, 25, 1024)
    assert (g["n_shared_experts"], g["shared_expert_intermediate_size"]) == (1, 2112)  # the dense MLP next to experts
    total, active = config_params(stored_config("google/gemma-4-26B-A4B"), g)
    assert round(total / 1e8) == 252 and round(active / 1e8) == 38  # text only; K = V: no V projection in full layers
    model = CATALOG.model("gemma-4-26b-a4b")
    assert model is not None and model.global_kv_heads == 2
    work = Workload(context=131072)
    uniform = model.model_copy(update={"global_kv_heads": None, "global_head_dim": None})
    full_share = 5 * 131072 * 2  # 5 full layers, f16
    assert kv_cache_bytes(uniform, work) - kv_cache_bytes(model, work) == full_share * (8 * 512 - 2 * 2 * 512)


def test_hybrid_linear_layers_are_read() -> None:
    g = config_geometry("Qwen/Qwen3.5-27B")  # full_attention_interval 4
    assert (g["n_full_attention_layers"], g["n_linear_layers"], g["n_sliding_layers"]) == (16, 48, 0)
    assert g["linear_state_bytes"] > 0


def test_sliding_windows_are_read() -> None:
    mimo = config_geometry("XiaomiMiMo/MiMo-V2-Flash")  # hybrid_layer_pattern: 1 = sliding window
    assert (mimo["n_full_attention_layers"], mimo["n_sliding_layers"], mimo["sliding_window"]) == (9, 39, 128)
    oss = config_geometry("openai/gpt-oss-120b")  # layer_types
    assert (oss["n_full_attention_layers"], oss["n_sliding_layers"], oss["sliding_window"]) == (18, 18, 128)
    exaone = {  # EXAONE 4.0 writes its 3:1 local/global pattern as a string
        "model_type": "exaone4",
        "num_hidden_layers": 64,
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "vocab_size": 102400,
        "sliding_window": 4096,
        "sliding_window_pattern": "LLLG",
    }
    g = geometry(exaone)
    assert (g["n_full_attention_layers"], g["n_sliding_layers"]) == (16, 48)


def test_mla_ranks_and_shared_experts_are_read() -> None:
    g = config_geometry("deepseek-ai/DeepSeek-V3")
    assert (g["attention"].value, g["kv_lora_rank"], g["q_lora_rank"], g["qk_rope_head_dim"]) == ("mla", 512, 1536, 64)
    assert (g["head_dim"], g["v_head_dim"], g["n_shared_experts"], g["n_dense_layers"]) == (192, 128, 1, 3)


def test_context_is_the_config_length_not_times_the_rope_factor() -> None:
    cfg = stored_config("meta-llama/Meta-Llama-3.1-8B")
    assert cfg["rope_scaling"]["factor"] == 8.0
    assert config_geometry("meta-llama/Meta-Llama-3.1-8B")["max_context"] == cfg["max_position_embeddings"] == 131072


def test_lfm2_conv_blocks_are_read_and_counted() -> None:
    g = config_geometry("LiquidAI/LFM2-1.2B")  # full_attn_idxs [2, 5, 8, 10, 12, 14]; no tie_word_embeddings key
    assert (g["n_layers"], g["n_full_attention_layers"], g["n_linear_layers"]) == (16, 6, 10)
    assert g["linear_state_bytes"] == 2 * 2048 * 4  # conv_L_cache 3: the last two inputs per channel, f32
    assert (g["intermediate_size"], g["tied_embeddings"]) == (8192, True)  # 2/3 x block_ff_dim 12288
    total, active = config_params(stored_config("LiquidAI/LFM2-1.2B"), g)
    assert total == active and abs(total - 1_170_340_608) / 1_170_340_608 < 0.001  # the card's count (norms aside)
    newer = {k: v for k, v in stored_config("LiquidAI/LFM2-1.2B").items() if k != "full_attn_idxs"}
    newer["layer_types"] = ["full_attention" if i in (2, 5, 8, 10, 12, 14) else "conv" for i in range(16)]
    assert checked_geometry(newer)["n_linear_layers"] == 10
    with pytest.raises(GeometryError, match="full_attn_idxs"):
        checked_geometry({k: v for k, v in newer.items() if k != "layer_types"})


def test_hunyuan_per_layer_lists_are_read() -> None:
    cfg = stored_config("tencent/Hunyuan-A13B-Instruct")  # moe_topk, num_shared_expert, widths: one per layer
    g = config_geometry("tencent/Hunyuan-A13B-Instruct")
    moe = (g["n_experts"], g["experts_per_token"], g["n_shared_experts"], g["moe_intermediate_size"])
    assert moe == (64, 8, 1, 3072)
    total, _ = config_params(cfg, g)
    assert round(total / 1e8) == 804  # 80,393,183,232 per llama-bench (the row's source)
    uneven = cfg | {"moe_topk": [8] * 31 + [2]}
    with pytest.raises(GeometryError, match="moe_topk"):
        checked_geometry(uneven)


def test_arcee_mlp_has_two_matrices() -> None:
    """AFM (model_type arcee) uses a ReLU^2 up/down MLP: counted gated, a live AFM-4.5B would come out 5.9B."""
    afm = {  # the AFM-4.5B row's geometry, as a hub config would write it
        "model_type": "arcee",
        "num_hidden_layers": 36,
        "hidden_size": 2560,
        "num_attention_heads": 20,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "intermediate_size": 18432,
        "vocab_size": 128005,
        "tie_word_embeddings": False,
    }
    g = checked_geometry(afm)
    total, _ = config_params(afm, g)
    assert g["gated_ffn"] is False and round(total / 1e8) == 46  # the published 4.62B


def _granite_hybrid(experts: int) -> dict[str, Any]:
    """A Granite 4.0-H style config (keys as transformers' GraniteMoeHybridConfig writes them; sizes made up)."""
    return {
        "model_type": "granitemoehybrid",
        "architectures": ["GraniteMoeHybridForCausalLM"],
        "num_hidden_layers": 8,
        "layer_types": ["mamba", "mamba", "mamba", "attention"] * 2,
        "hidden_size": 1024,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "vocab_size": 1000,
        "tie_word_embeddings": True,
        "num_local_experts": experts,
        "num_experts_per_tok": 2,
        "intermediate_size": 256,
        "shared_intermediate_size": 512,
        "mamba_n_heads": 32,
        "mamba_d_head": "auto",  # expand 2 x hidden 1024 / 32 heads = 64
        "mamba_d_state": 128,
        "mamba_n_groups": 1,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
    }


def test_granite_hybrid_mamba_layers_and_shared_mlp_are_read() -> None:
    moe = checked_geometry(_granite_hybrid(experts=8))
    assert (moe["n_full_attention_layers"], moe["n_linear_layers"]) == (2, 6)
    assert moe["linear_state_bytes"] == (2048 * 128 + 3 * (2048 + 2 * 128)) * 4  # SSM state + conv window, f32
    assert (moe["n_experts"], moe["n_shared_experts"], moe["shared_expert_intermediate_size"]) == (8, 1, 512)
    h, inner = 1024, 2048
    attention = 2 * h * 1024 + 2 * h * 256
    mamba = h * (2 * inner + 256 + 32) + (inner + 256) * 4 + inner * h + 3 * 32 + inner
    ffn = 3 * h * (8 * 256 + 512) + h * 8  # routed experts, shared MLP, router
    total, active = config_params(_granite_hybrid(experts=8), moe)
    assert total == 1000 * h + 2 * attention + 6 * mamba + 8 * ffn
    assert total - active == 8 * 3 * h * 6 * 256  # 6 of 8 experts idle per token in every layer
    dense = checked_geometry(_granite_hybrid(experts=0))  # H-Micro: the shared MLP is the dense FFN
    assert (dense.get("n_experts"), dense["intermediate_size"], dense["n_linear_layers"]) == (None, 512, 6)


def test_gemma_3_multimodal_configs_get_transformers_defaults() -> None:
    """google/gemma-3-4b-it gives no heads, vocabulary, context or layer pattern: transformers' defaults apply."""
    g = config_geometry("google/gemma-3-4b-it")
    assert (g["n_heads"], g["n_kv_heads"], g["head_dim"], g["vocab_size"]) == (8, 4, 256, 262208)
    assert (g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (5, 29, 1024)
    assert g["max_context"] == 131072 and g["tied_embeddings"]
    big = config_geometry("google/gemma-3-27b-it")  # the keys it does give win over the defaults
    assert (big["n_heads"], big["n_kv_heads"], big["head_dim"], big["n_sliding_layers"]) == (32, 16, 128, 52)


def test_llama_vision_cross_attention_layers_keep_no_text_kv() -> None:
    g = config_geometry("meta-llama/Llama-3.2-90B-Vision-Instruct")
    assert (g["n_layers"], g["n_full_attention_layers"], g["n_kv_heads"]) == (100, 80, 8)
    total, _ = config_params(stored_config("meta-llama/Llama-3.2-90B-Vision-Instruct"), g)
    assert round(total / 1e8) == 877  # text only: the 20 cross-attention layers count like the others
    model = CATALOG.model("llama-3.2-90b-vision-instruct")
    assert model is not None and model.kv_layers == 80


def test_exaone_4_32b_keeps_kv_only_in_its_global_layers_and_the_window() -> None:
    """EXAONE 4.0 32B: 3 sliding (4,096) : 1 global; at 128K its KV is about a quarter of an all-global count."""
    from core.memory import kv_cache_bytes
    from core.models import Workload

    g = config_geometry("LGAI-EXAONE/EXAONE-4.0-32B")  # layer_types and "LLLG" agree
    assert (g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (16, 48, 4096)
    model = CATALOG.model("exaone-4.0-32b")
    assert model is not None
    work = Workload(context=131072)
    all_global = model.model_copy(update={"n_sliding_layers": 0, "n_full_attention_layers": 64})
    per_token_layer = 2 * 8 * 128 * 2  # K and V, 8 KV heads x 128, f16
    window = 4096 + work.n_ubatch  # llama.cpp keeps the window plus one batch
    assert kv_cache_bytes(all_global, work) - kv_cache_bytes(model, work) == 48 * (131072 - window) * per_token_layer


def test_deepseek_v4_compressed_attention_is_read() -> None:
    from core.memory import kv_cache_bytes
    from core.models import Engine, Workload

    g = config_geometry("deepseek-ai/DeepSeek-V4-Flash")  # compress_ratios [0, 0, 4, 128, ..., 4] + MTP's 0
    assert (g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (0, 43, 128)
    # 21 CSA layers: one 512-wide entry + a 128-wide indexer key per 4 tokens; 20 HCA layers: 512 per 128 tokens
    assert g["pooled_kv_elements"] == 21 * (512 + 128) / 4 + 20 * 512 / 128
    total, active = config_params(stored_config("deepseek-ai/DeepSeek-V4-Flash"), g)
    assert (round(total / 1e9), round(active / 1e9)) == (284, 14)  # disclosed 284B / 13B
    pro = CATALOG.model("deepseek-v4-pro")
    assert pro is not None and pro.pooled_kv_elements == 30 * 640 / 4 + 31 * 512 / 128
    work = Workload(context=1 << 20, engine=Engine.VLLM)
    window = 61 * 128 * 1024 * 2  # the window layers' f16 K and V, under a MiB per layer
    assert kv_cache_bytes(pro, work) == round((1 << 20) * pro.pooled_kv_elements * 2 + window)
    bad = stored_config("deepseek-ai/DeepSeek-V4-Flash") | {"compress_ratios": [4, 128]}
    with pytest.raises(GeometryError, match="compress_ratios"):
        checked_geometry(bad)


def test_kimi_linear_kda_layers_and_latent_experts_are_read() -> None:
    g = config_geometry("moonshotai/Kimi-K3")  # linear_attn_config: 24 MLA + 69 KDA layers of 96 x 128
    assert (g["attention"].value, g["n_full_attention_layers"], g["n_linear_layers"]) == ("mla", 24, 69)
    assert g["linear_state_bytes"] == (96 * 128 * 128 + 3 * 3 * 96 * 128) * 4  # state + q/k/v conv windows
    assert g["native_dtype"] == "mxfp4"  # compressed-tensors, format mxfp4-pack-quantized
    total, active = config_params(stored_config("moonshotai/Kimi-K3"), g)
    assert (round(total / 1e11), round(active / 1e9)) == (28, 99)  # disclosed 2.8T / 104B; latent 3,584 experts
    bad = stored_config("moonshotai/Kimi-K3")
    bad = bad | {"text_config": bad["text_config"] | {"linear_attn_config": {"kda_layers": [1, 2]}}}
    with pytest.raises(GeometryError, match="linear_attn_config"):
        checked_geometry(bad)


def test_minimax_m3_dense_and_shared_widths_are_read() -> None:
    g = config_geometry("MiniMaxAI/MiniMax-M3")  # intermediate_size is the expert width there
    assert (g["intermediate_size"], g["moe_intermediate_size"], g["shared_expert_intermediate_size"]) == (
        12288,
        3072,
        3072,
    )
    assert (g["n_dense_layers"], g["n_kv_heads"], g.get("n_sliding_layers", 0)) == (3, 4, 0)  # sparse, cache full


def test_glm_4_7_flash_layout_reads_as_mla() -> None:
    """glm4_moe_lite (GLM-4.7-Flash) is DeepSeek-V2-shaped: the fields as its hub config names them."""
    cfg = {
        "architectures": ["Glm4MoeLiteForCausalLM"],
        "model_type": "glm4_moe_lite",
        "num_hidden_layers": 47,
        "hidden_size": 2048,
        "num_attention_heads": 20,
        "num_key_value_heads": 20,
        "vocab_size": 154880,
        "max_position_embeddings": 202752,
        "intermediate_size": 10240,
        "moe_intermediate_size": 1536,
        "n_routed_experts": 64,
        "n_shared_experts": 1,
        "num_experts_per_tok": 4,
        "first_k_dense_replace": 1,
        "q_lora_rank": 768,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 192,
        "qk_rope_head_dim": 64,
        "v_head_dim": 256,
        "tie_word_embeddings": False,
    }
    g = geometry(cfg)
    assert (g["attention"].value, g["kv_lora_rank"], g["head_dim"], g["v_head_dim"]) == ("mla", 512, 256, 256)
    assert (g["n_experts"], g["n_shared_experts"], g["n_dense_layers"], g["intermediate_size"]) == (64, 1, 1, 10240)
    total, active = config_params(cfg, g)
    assert (round(total / 1e9), round(active / 1e9, 1)) == (30, 3.9)  # 30B-A3B: 3.3B active without the embeddings


@pytest.mark.parametrize(
    ("repo", "bad", "key"),
    [
        ("moonshotai/Kimi-K3", {"routed_expert_hidden_size": -5}, "routed_expert_hidden_size"),
        ("moonshotai/Kimi-K3", {"routed_expert_hidden_size": 10**12}, "routed_expert_hidden_size"),
        ("deepseek-ai/DeepSeek-V4-Flash", {"o_groups": -1}, "o_groups"),
        ("deepseek-ai/DeepSeek-V4-Flash", {"index_head_dim": 10**9}, "index_head_dim"),
        ("deepseek-ai/DeepSeek-V4-Flash", {"compress_ratios": ["x"] * 44}, "compress_ratios"),
    ],
)
def test_out_of_range_layout_keys_are_named(repo: str, bad: dict[str, Any], key: str) -> None:
    """A hub config is untrusted: a nonsense width in these layouts is refused by its key, never counted."""
    from catalog.model_files.config import ConfigError, spec_from_config
    from core.models import Provenance

    cfg = stored_config(repo)
    cfg = cfg | {"text_config": cfg["text_config"] | bad} if "text_config" in cfg else cfg | bad
    with pytest.raises(ConfigError, match=key):
        spec_from_config(cfg, repo, Provenance(source="test", as_of="2026-12"))


def test_gemma_4_small_models_share_kv_and_count_their_per_layer_embeddings() -> None:
    """Gemma 4 E2B: the last 20 of 35 layers reuse earlier KV; per-layer embeddings are weights, not compute."""
    g = config_geometry("google/gemma-4-E2B-it")
    assert (g["n_layers"], g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (35, 3, 12, 512)
    assert (g["n_kv_heads"], g["global_kv_heads"], g["global_head_dim"]) == (1, 1, 512)
    cfg = stored_config("google/gemma-4-E2B-it")
    total, active = config_params(cfg, g)
    table = 262144 * 35 * 256  # vocab_size_per_layer_input x layers x hidden_size_per_layer_input: a lookup
    assert total - active == table
    assert round(total / 1e7) == 465 and round(active / 1e7) == 230  # Google's "E2B": 2B effective
    narrow = cfg | {"text_config": cfg["text_config"] | {"use_double_wide_mlp": False}}
    assert total - config_params(narrow, g)[0] == 20 * 3 * 1536 * 6144  # the shared layers' FFN is twice as wide
    unshared = cfg | {"text_config": cfg["text_config"] | {"num_kv_shared_layers": 0, "use_double_wide_mlp": False}}
    u = geometry(unshared)
    assert (u["n_full_attention_layers"], u["n_sliding_layers"]) == (7, 28)
    assert config_params(unshared, u) == config_params(narrow, g)  # sharing KV saves cache, not weights


def test_phi_2_december_2023_config_is_read() -> None:
    """model_type phi-msft: n_embd / n_head / n_layer, n_inner null = 4 x hidden, a two-matrix GELU MLP."""
    g = config_geometry("microsoft/phi-2")
    assert (g["n_layers"], g["hidden_size"], g["n_heads"], g["head_dim"], g["max_context"]) == (32, 2560, 32, 80, 2048)
    assert (g["intermediate_size"], g["gated_ffn"], g["native_dtype"]) == (10240, False, "fp16")
    total, _ = config_params(stored_config("microsoft/phi-2"), g)
    assert round(total / 1e7) == 278  # the checkpoint's 2.78B
    assert geometry(stored_config("microsoft/phi-2") | {"n_inner": 8192})["intermediate_size"] == 8192


def test_olmo_3_sliding_layers_come_from_layer_types() -> None:
    """Olmo 3 32B: layer_types lists 3 sliding (4,096) : 1 full; at 32K the KV is 16 full + 48 windowed layers."""
    from core.memory import kv_cache_bytes
    from core.models import Workload

    g = config_geometry("allenai/Olmo-3.1-32B-Instruct")
    assert (g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (16, 48, 4096)
    for row_id in ("olmo-3.1-32b-think", "olmo-3-32b-think"):
        model = CATALOG.model(row_id)
        assert model is not None and model.kv_layers == 16 and UNVERIFIED_GEOMETRY not in model.provenance.unverified
        work = Workload(context=32768)
        all_full = model.model_copy(update={"n_sliding_layers": 0, "n_full_attention_layers": 64})
        window = 4096 + work.n_ubatch  # llama.cpp keeps the window plus one batch
        saved = kv_cache_bytes(all_full, work) - kv_cache_bytes(model, work)
        assert saved == 48 * (32768 - window) * 2 * 8 * 128 * 2


SWA_CONFIGS = [r for r in sources() if any(k.startswith("swa_") for k in text_config(stored_config(r)))]


@pytest.mark.parametrize("repo", SWA_CONFIGS)
def test_sliding_layers_keep_their_own_kv_heads(repo: str) -> None:
    """Every stored config with ``swa_*`` keys: the window layers cache with their own KV heads and head sizes."""
    from core.memory import kv_cache_bytes
    from core.models import Workload

    cfg = text_config(stored_config(repo))
    g = config_geometry(repo)
    assert g["n_sliding_layers"] > 0
    assert g["sliding_kv_heads"] == cfg["swa_num_key_value_heads"]
    assert g.get("sliding_head_dim") == cfg.get("swa_head_dim")
    assert g.get("sliding_v_head_dim") == cfg.get("swa_v_head_dim")
    rows = [m for m in CATALOG.models if m.hf_repo == repo]
    assert rows, repo
    for model in rows:
        work = Workload(context=32768)
        same = model.model_copy(update={"sliding_kv_heads": None, "sliding_head_dim": None, "sliding_v_head_dim": None})
        k_dim = cfg.get("swa_head_dim", model.head_dim)
        v_dim = cfg.get("swa_v_head_dim", model.v_head_dim or k_dim)
        own = cfg["swa_num_key_value_heads"] * (k_dim + v_dim)
        full = model.n_kv_heads * (model.head_dim + (model.v_head_dim or model.head_dim))
        cells = (kv_cache_bytes(model, work) - kv_cache_bytes(same, work)) / (g["n_sliding_layers"] * (own - full) * 2)
        assert cells == int(cells) and g["sliding_window"] <= cells <= 32768  # the window (plus a batch), f16


def test_mimo_v2_flash_window_layers_have_8_kv_heads() -> None:
    g = config_geometry("XiaomiMiMo/MiMo-V2-Flash")
    assert (g["n_kv_heads"], g["sliding_kv_heads"], g["n_sliding_layers"]) == (4, 8, 39)
    total, _ = config_params(stored_config("XiaomiMiMo/MiMo-V2-Flash"), g)
    assert round(total / 1e9) == 309  # the publisher's 309B: window layers' K and V projections are 8 heads wide


def test_a_config_without_swa_keys_reads_no_window_heads() -> None:
    oss = config_geometry("openai/gpt-oss-120b")  # sliding layers, one head layout for all layers
    assert oss["n_sliding_layers"] == 18 and not {"sliding_kv_heads", "sliding_head_dim"} & set(oss)


MTP_ROWS = [r for r in WITH_CONFIG if mtp_layers(stored_config(r["config"]))]


@pytest.mark.parametrize("row", MTP_ROWS, ids=[r["id"] for r in MTP_ROWS])
def test_mtp_layers_are_counted_as_the_gguf_converter_does(row: dict[str, Any]) -> None:
    """Where llama.cpp's converter drops the next-n (MTP) layers, the GGUF has no MTP weights: the row's total is
    the count without them (nearer it than the count with them)."""
    config = stored_config(row["config"])
    kept = gguf_mtp_layers(config)
    if kept is None:
        pytest.skip(f"{model_type(text_config(config))}: the converter's MTP handling was not checked")
    g = config_geometry(row["config"])
    without, _ = config_params(config, g)
    with_mtp = without + mtp_layers(config) * mtp_layer_params(config, g)
    model = CATALOG.model(row["id"])
    assert model is not None
    if kept == 0:
        assert abs(model.total_params - without) < abs(model.total_params - with_mtp), (model.id, without, with_mtp)


def test_deepseek_mtp_layer_is_one_moe_layer_and_dropped_from_the_gguf() -> None:
    config = stored_config("deepseek-ai/DeepSeek-V3.1")
    g = config_geometry("deepseek-ai/DeepSeek-V3.1")
    assert (mtp_layers(config), gguf_mtp_layers(config)) == (1, 0)  # DeepseekV2Model: skip_mtp = True
    assert round(mtp_layer_params(config, g) / 1e8) == 116  # 257 experts + MLA + eh_proj 2 x 7168 -> 7168
    assert gguf_mtp_layers(stored_config("zai-org/GLM-5")) == 1  # GlmMoeDsaModel writes the next-n layer
    assert gguf_mtp_layers(stored_config("Qwen/Qwen3-8B")) == 0  # no MTP layer at all
    terminus = CATALOG.model("deepseek-v3.1-terminus")
    assert terminus is not None and round(terminus.total_params / 1e9, 1) == 671.0  # as its siblings, MTP left out


def _stored_with(key: str) -> list[str]:
    return [
        r
        for r in sources()
        if key in text_config(stored_config(r))
        and model_type(text_config(stored_config(r))) not in BLOCK_TYPES | {LFM2}
    ]


@pytest.mark.parametrize("repo", _stored_with("layer_types"))
def test_every_layer_types_list_is_counted_layer_by_layer(repo: str) -> None:
    """Every stored config that lists its layer kinds: full, sliding and linear counts as the list says (layers that
    reuse an earlier layer's cache, Gemma 4's ``num_kv_shared_layers``, keep none of their own)."""
    cfg = text_config(stored_config(repo))
    types = [str(t) for t in cfg["layer_types"]][: len(cfg["layer_types"]) - (cfg.get("num_kv_shared_layers") or 0)]
    g = config_geometry(repo)
    sliding = sum("sliding" in t or "chunked" in t for t in types)
    linear = sum("linear" in t or "mamba" in t for t in types)
    full = len(types) - sliding - linear
    assert (g.get("n_full_attention_layers", full), g.get("n_sliding_layers", 0), g.get("n_linear_layers", 0)) == (
        full,
        sliding,
        linear,
    )
    if sliding:
        assert g["sliding_window"] == cfg["sliding_window"]


@pytest.mark.parametrize("repo", _stored_with("full_attention_interval"))
def test_every_full_attention_interval_gives_one_full_layer_per_interval(repo: str) -> None:
    cfg = text_config(stored_config(repo))
    g = config_geometry(repo)
    assert g["n_full_attention_layers"] == cfg["num_hidden_layers"] // cfg["full_attention_interval"]
    assert g["n_linear_layers"] == cfg["num_hidden_layers"] - g["n_full_attention_layers"]


@pytest.mark.parametrize("repo", _stored_with("cross_attention_layers"))
def test_every_cross_attention_layer_keeps_no_text_kv(repo: str) -> None:
    cfg = text_config(stored_config(repo))
    assert config_geometry(repo)["n_full_attention_layers"] == cfg["num_hidden_layers"] - len(
        cfg["cross_attention_layers"]
    )
