"""The fact files of issue 26: Ollama library tags, pre-quantized vLLM repositories, quality per quant.

Small, read once per process from ``catalog/facts/`` (each row with its source and date); they are not
in the SQLite store because nothing else joins on them, but they count in the catalog version
(``catalog.facts.facts_hash``), so editing one is a new version.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from catalog.fact_files import FACTS_DIR
from core.launch.ollama import OllamaTag
from core.launch.tools import QuantRepo
from core.measured import Measurement
from core.models import Provenance, SizedModel
from core.multi_model import SideModel
from core.quants.quality import QualityRow
from core.speculative import MtpFact, SpecMeasurement


def _table(name: str, table: str, directory: Path) -> list[dict[str, object]]:
    data = tomllib.loads((directory / name).read_text(encoding="utf-8"))
    return [dict(row) for row in data.get(table, ())]


def _provenance(row: dict[str, object]) -> Provenance:
    return Provenance(
        source=str(row["source"]),
        as_of=str(row["as_of"]),
        unverified=tuple(str(f) for f in row.get("unverified", ())),  # type: ignore[attr-defined]
    )


@cache
def measurements(directory: Path = FACTS_DIR) -> tuple[Measurement, ...]:
    """Published llama-bench runs of catalog models on catalog devices (``measurements.toml``)."""
    return tuple(
        Measurement(
            model_id=str(r["model"]),
            quant=str(r["quant"]),
            gpu_id=str(r["gpu"]),
            gpu_count=int(r["gpus"]),  # type: ignore[call-overload]
            backend=str(r["backend"]),
            kind=r["kind"],  # type: ignore[arg-type]
            test=str(r["test"]),
            tokens_per_s=float(r["tokens_per_s"]),  # type: ignore[arg-type]
            build=str(r["build"]),
            provenance=_provenance(r),
        )
        for r in _table("measurements.toml", "measurement", directory)
    )


@cache
def ollama_tags(directory: Path = FACTS_DIR) -> tuple[OllamaTag, ...]:
    return tuple(
        OllamaTag(model_id=str(r["model"]), quant=str(r["quant"]), tag=str(r["tag"]), provenance=_provenance(r))
        for r in _table("ollama_tags.toml", "tag", directory)
    )


@cache
def quant_repos(directory: Path = FACTS_DIR) -> tuple[QuantRepo, ...]:
    return tuple(
        QuantRepo(model_id=str(r["model"]), quant=str(r["quant"]), repo=str(r["repo"]), provenance=_provenance(r))
        for r in _table("quant_repos.toml", "repo", directory)
    )


@cache
def quant_quality(directory: Path = FACTS_DIR) -> tuple[QualityRow, ...]:
    return tuple(
        QualityRow(
            family=str(r["family"]),
            measured_on=str(r["measured_on"]),
            quant=str(r["quant"]),
            metric=r["metric"],  # type: ignore[arg-type]
            value=float(r["value"]),  # type: ignore[arg-type]
            imatrix=str(r.get("imatrix", "none")),
            provenance=_provenance(r),
        )
        for r in _table("quant_quality.toml", "quality", directory)
    )


@cache
def spec_measurements(directory: Path = FACTS_DIR) -> tuple[SpecMeasurement, ...]:
    """Published speed-ups of speculative decoding (``[[measured]]`` in speculative.toml), each with its source."""
    out = []
    for r in _table("speculative.toml", "measured", directory):
        fields = {k: v for k, v in r.items() if k not in ("source", "as_of", "speedup")}
        out.append(SpecMeasurement(**fields, speedup_given=r.get("speedup"), provenance=_provenance(r)))  # type: ignore[arg-type]
    return tuple(out)


@cache
def mtp_facts(directory: Path = FACTS_DIR) -> tuple[MtpFact, ...]:
    return tuple(
        MtpFact(
            family=str(r["family"]),
            models=tuple(r["models"]),  # type: ignore[arg-type]
            layers=int(r["layers"]),  # type: ignore[call-overload]
            provenance=_provenance(r),
        )
        for r in _table("speculative.toml", "mtp", directory)
    )


@cache
def side_models(directory: Path = FACTS_DIR) -> tuple[SideModel, ...]:
    return tuple(
        SideModel(
            id=str(r["id"]),
            kind=r["kind"],  # type: ignore[arg-type]
            name=str(r["name"]),
            aliases=tuple(r.get("aliases", ())),  # type: ignore[arg-type]
            runtime=str(r["runtime"]),
            memory_bytes=int(r["memory_bytes"]) if "memory_bytes" in r else None,  # type: ignore[call-overload]
            params=int(r["params"]) if "params" in r else None,  # type: ignore[call-overload]
            bytes_per_param=float(r.get("bytes_per_param", 2.0)),  # type: ignore[arg-type]
            provenance=_provenance(r),
        )
        for r in _table("side_models.toml", "side", directory)
    )


__all__ = ["side_models", "mtp_facts", "ollama_tags", "quant_quality", "quant_repos", "spec_measurements"]


@cache
def sized_models(directory: Path = FACTS_DIR) -> tuple[SizedModel, ...]:
    """Models known by their publisher's parameter count only (``memory_only.toml``): memory-only answers."""

    def count(value: object) -> int | None:
        return round(float(value) * 1e9) if value is not None else None  # type: ignore[arg-type]

    return tuple(
        SizedModel(
            id=str(r["id"]),
            name=str(r["name"]),
            family=str(r["family"]),
            hf_repo=str(r["hf_repo"]),
            total_params=count(r["total_params_b"]) or 1,
            active_params=count(r.get("active_params_b")),
            license=str(r.get("license", "")),
            release=str(r.get("release", "")),
            aliases=tuple(str(a) for a in r.get("aliases", ())),  # type: ignore[attr-defined]
            why=r.get("why", "no_config"),  # type: ignore[arg-type]
            why_note=str(r.get("why_note", "")),
            provenance=_provenance(r),
        )
        for r in _table("memory_only.toml", "model", directory)
    )
