"""The layouts of the configs stored for issue 36 item 5, read from the stored copies.

Laguna (poolside): sliding-window and full layers from ``layer_types``, a dense first layer from
``mlp_layer_types`` (or ``mlp_only_layers``), more query heads on the sliding layers
(``num_attention_heads_per_layer``, counted in the parameters), compressed-tensors FP8 weights. The totals are
checked against a second count: the checkpoints' safetensors counts as the offline index records them.
Qwen3.8-2.4T-A95B: Qwen3.5's Gated DeltaNet layout at 2.4T, its MTP layer not counted.
"""

from __future__ import annotations

import pytest

from catalog.hub.index import load_hf_index
from catalog.importers.model_configs import config_geometry, stored_config
from catalog.model_files.geometry import mtp_layers
from catalog.model_files.params import config_params

SAFETENSORS = {r.repo: r.params for r in load_hf_index()}


@pytest.mark.parametrize(
    ("repo", "full", "sliding", "experts", "top_k", "checkpoint"),
    [
        ("poolside/Laguna-S-2.1-FP8", 12, 36, 256, 10, "poolside/Laguna-S-2.1-FP8"),
        ("poolside/Laguna-XS.2-FP8", 10, 30, 256, 8, "poolside/Laguna-XS.2"),
    ],
)
def test_laguna_layout(repo: str, full: int, sliding: int, experts: int, top_k: int, checkpoint: str) -> None:
    g = config_geometry(repo)
    assert (g["n_full_attention_layers"], g["n_sliding_layers"], g["sliding_window"]) == (full, sliding, 512)
    assert (g["n_kv_heads"], g["head_dim"], g["n_dense_layers"], g["n_shared_experts"]) == (8, 128, 1, 1)
    assert (g["n_experts"], g["experts_per_token"], g["native_dtype"]) == (experts, top_k, "fp8")
    total, _ = config_params(stored_config(repo), g)
    assert abs(total - SAFETENSORS[checkpoint]) / SAFETENSORS[checkpoint] < 0.001  # per-head gates are left out


def test_laguna_counts_the_extra_query_heads_of_its_sliding_layers() -> None:
    cfg = stored_config("poolside/Laguna-S-2.1-FP8")
    g = config_geometry("poolside/Laguna-S-2.1-FP8")
    with_heads, _ = config_params(cfg, g)
    plain, _ = config_params({k: v for k, v in cfg.items() if k != "num_attention_heads_per_layer"}, g)
    assert with_heads - plain == 36 * (72 - 48) * 2 * 3072 * 128


def test_qwen38_2_4t_layout() -> None:
    cfg = stored_config("Qwen/Qwen3.8-2.4T-A95B")
    g = config_geometry("Qwen/Qwen3.8-2.4T-A95B")
    assert (g["n_layers"], g["n_full_attention_layers"], g["n_linear_layers"]) == (92, 23, 69)
    # Gated DeltaNet state: 128 value heads x 128 x 128 x 4 B + conv (4 - 1) x (2 x 16 x 128 + 128 x 128) x 4 B
    assert g["linear_state_bytes"] == 128 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 128 * 128) * 4
    assert (g["n_experts"], g["experts_per_token"], g["n_shared_experts"]) == (512, 10, 1)
    total, active = config_params(cfg, g)
    assert mtp_layers(cfg) == 1
    assert abs(total / 1e9 - 2419.8) < 0.1 and abs(active / 1e9 - 95.3) < 0.1
    assert total < SAFETENSORS["Qwen/Qwen3.8-2.4T-A95B"]  # the checkpoint's count includes the MTP layer
