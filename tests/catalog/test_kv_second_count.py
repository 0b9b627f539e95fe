"""KV bytes per token counted a second way (issue 36 item 2): for every stored config.json whose layout is
plain full attention (no sliding windows, no per-layer types, no MLA, no linear or recurrent layers), the
textbook count straight from the file, 2 (K and V) x layers x KV heads x head size x 2 bytes (f16), against
what FitBot caches for that catalog row (``core.memory.kv_cache_bytes``). The reader builds the row from the
same file; this count reads the file with nothing of the reader, so a reader that drops or adds a layer,
head or head size fails here."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from catalog.facts import load_facts
from core.memory import kv_cache_bytes
from core.models import Engine, Workload

CONFIGS = Path(__file__).resolve().parents[2] / "catalog" / "configs"
FACTS = Path(__file__).resolve().parents[2] / "catalog" / "facts"
CATALOG = load_facts()
OTHER_LAYOUTS = (
    "layer_types", "kv_lora_rank", "linear_num_value_heads", "full_attention_interval", "cross_attention_layers",
    "attn_type_list", "hybrid_override_pattern", "layers_block_type", "mamba_d_state", "swa_num_key_value_heads",
    "global_attn_every_n_layers", "sliding_window_pattern", "no_rope_layers", "interleaved_sliding_window",
    "block_configs", "full_attn_idxs",  # DeciLM blocks without attention, LFM2 convolution layers
)  # fmt: skip


def plain(config: dict) -> bool:
    if any(key in config for key in OTHER_LAYOUTS):
        return False
    window = config.get("sliding_window")
    return not window or config.get("use_sliding_window") is False


def textbook_bytes_per_token(config: dict) -> int:
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    return 2 * config["num_hidden_layers"] * kv_heads * head_dim * 2


def cases() -> list[tuple[str, dict]]:
    """(model id, its stored config) for the rows ``models.toml`` builds from a stored copy with a plain layout."""
    rows = tomllib.loads((FACTS / "models.toml").read_text(encoding="utf-8"))["model"]
    out = []
    for row in rows:
        path = CONFIGS / f"{row.get('config', '')}.json"
        if "config" not in row or not path.exists() or CATALOG.model(row["id"]) is None:
            continue
        config = json.loads(path.read_text(encoding="utf-8"))
        config = config.get("text_config", config) if "num_hidden_layers" not in config else config
        if "num_hidden_layers" in config and plain(config):
            out.append((row["id"], config))
    return out


CASES = cases()


def test_the_second_count_covers_many_rows():
    assert len(CASES) >= 20, [c[0] for c in CASES]


@pytest.mark.parametrize(("model_id", "config"), CASES, ids=[c[0] for c in CASES])
def test_kv_per_token_matches_the_textbook_count_of_the_file(model_id, config):
    model = CATALOG.model(model_id)
    assert model is not None
    workload = Workload(context=4096, engine=Engine.VLLM, concurrent=1)
    assert kv_cache_bytes(model, workload) == 4096 * textbook_bytes_per_token(config)
