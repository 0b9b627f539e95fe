"""`fitbot catalog verify` reports rows whose stored config, live config or parameter counts disagree."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from bot.app import cli
from catalog.facts import load_facts
from catalog.importers.model_configs import stored_config
from catalog.model_files.config import spec_from_config
from catalog.verify import live_findings, stored_findings
from core.models import ModelSpec, Provenance

CATALOG = load_facts()


def test_the_shipped_catalog_has_no_parameter_drift() -> None:
    findings = stored_findings(CATALOG)
    assert not [f for f in findings if f.kind == "params"]
    kinds = {f.model: f.kind for f in findings}
    assert kinds.get("qwen3-8b") is None and kinds["glm-5.3-flash"] == "no-config"
    assert kinds["inkling"] == "no-config"  # a memory-only row (memory_only.toml)


def test_a_row_whose_total_drifts_from_its_config_is_reported() -> None:
    row = CATALOG.model("qwen3-8b")
    assert row is not None
    bad = row.model_copy(update={"total_params": 12_000_000_000, "active_params": 12_000_000_000})
    catalog = CATALOG.model_copy(update={"models": tuple(bad if m.id == row.id else m for m in CATALOG.models)})
    drift = [f for f in stored_findings(catalog) if f.model == "qwen3-8b"]
    assert [f.kind for f in drift] == ["params", "params"] and "12.00B" in drift[0].detail


def test_a_total_that_counts_mtp_layers_the_gguf_drops_is_reported() -> None:
    """DeepSeek V3.1 Terminus was typed with the Hugging Face count (684.5B, MTP layer included): within the 3 %
    tolerance, yet llama.cpp's converter drops that layer, so verify names it."""
    row = CATALOG.model("deepseek-v3.1-terminus")
    assert row is not None
    bad = row.model_copy(update={"total_params": 684_531_000_000})
    catalog = CATALOG.model_copy(update={"models": tuple(bad if m.id == row.id else m for m in CATALOG.models)})
    drift = [f for f in stored_findings(catalog) if f.model == row.id]
    assert [f.kind for f in drift] == ["params"] and "MTP" in drift[0].detail
    assert not [f for f in stored_findings(CATALOG) if f.model == row.id]


@dataclass
class Found:
    spec: ModelSpec
    revision: str = "a" * 40
    stale: bool = False


class OneRepoHub:
    """Answers one repo with a given config; every other repo is "not found"."""

    def __init__(self, repo: str, config: dict) -> None:
        self.repo, self.config = repo, config

    async def lookup(self, ref: str) -> Found:
        if ref != self.repo:
            raise LookupError(ref)
        return Found(spec_from_config(self.config, ref, Provenance(source="hub", as_of="2026-12-01")))


def test_live_config_changes_are_reported_field_by_field() -> None:
    live = json.loads(json.dumps(stored_config("Qwen/Qwen3-8B")))
    live["max_position_embeddings"] = 131072
    findings = asyncio.run(live_findings(CATALOG, OneRepoHub("Qwen/Qwen3-8B", live)))
    assert [(f.model, f.kind) for f in findings] == [("qwen3-8b", "live")]
    assert findings[0].detail == "max_context 40960 -> 131072"


def test_cli_verify_prints_the_counts(capsys) -> None:
    assert cli.main(["catalog", "verify"]) == 0
    out = capsys.readouterr().out
    assert f"{len(CATALOG.models)} models:" in out and "0 params" in out
