"""Reads the human-editable fact files (``catalog/facts/*.toml``) into core models.

The files use the units people read on spec sheets (GiB, GB/s, billions of parameters); this
module converts them to the base units of ``core.models`` and moves ``source``/``as_of``/
``unverified`` into a ``Provenance``.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any

from core.models import (
    GIB,
    Catalog,
    CloudOffer,
    GpuSpec,
    ModelSpec,
    NotADevice,
    Provenance,
    QuantSize,
    QuantSpec,
)

FACTS_DIR = Path(__file__).with_name("facts")
FACT_FILES = ("gpus.toml", "models.toml", "quants.toml", "gguf_sizes.toml", "offers.toml")


class FactError(ValueError):
    """A fact file is malformed; the message names the file and row."""


def facts_hash(directory: Path = FACTS_DIR) -> str:
    """Hash of all fact files, so the store knows when to rebuild."""
    digest = hashlib.sha256()
    for name in FACT_FILES:
        path = directory / name
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


def _provenance(row: dict[str, Any]) -> Provenance:
    return Provenance(
        source=row.pop("source"),
        as_of=str(row.pop("as_of")),
        unverified=tuple(row.pop("unverified", ())),
    )


def _gpu(row: dict[str, Any]) -> GpuSpec:
    prov = _provenance(row)
    row["memory_bytes"] = round(float(row.pop("memory_gib")) * GIB)
    row["bandwidth_bytes_per_s"] = float(row.pop("bandwidth_gbps")) * 1e9
    row["aliases"] = tuple(a.lower() for a in row.get("aliases", ()))
    return GpuSpec(**row, provenance=prov)


def _model(row: dict[str, Any]) -> ModelSpec:
    prov = _provenance(row)
    row["total_params"] = round(float(row.pop("total_params_b")) * 1e9)
    row["active_params"] = round(float(row.pop("active_params_b", 0) or 0) * 1e9) or row["total_params"]
    row["aliases"] = tuple(a.lower() for a in row.get("aliases", ()))
    return ModelSpec(**row, provenance=prov)


def _quant(row: dict[str, Any]) -> QuantSpec:
    prov = _provenance(row)
    row["engines"] = tuple(row.get("engines", ("llama.cpp",)))
    return QuantSpec(**row, provenance=prov)


def _size(row: dict[str, Any]) -> QuantSize:
    prov = _provenance(row)
    return QuantSize(
        model_id=row["model"], quant_id=row["quant"].upper(), size_bytes=int(row["size_bytes"]),
        repo=row.get("repo"), provenance=prov,
    )


def _offer(row: dict[str, Any]) -> CloudOffer:
    prov = _provenance(row)
    row["gpu_id"] = row.pop("gpu")
    row["seen"] = str(row.get("seen", prov.as_of))
    return CloudOffer(**row, provenance=prov)


def _not_device(row: dict[str, Any]) -> NotADevice:
    prov = _provenance(row)
    row["aliases"] = tuple(a.lower() for a in row.get("aliases", ()))
    return NotADevice(**row, provenance=prov)


def _rows(directory: Path, name: str, table: str, convert: Any) -> list[Any]:
    path = directory / name
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise FactError(f"{name}: {exc}") from exc
    out = []
    for i, row in enumerate(data.get(table, ())):
        try:
            out.append(convert(dict(row)))
        except (KeyError, TypeError, ValueError) as exc:
            raise FactError(f"{name} [[{table}]] #{i + 1} ({row.get('id') or row.get('name')}): {exc}") from exc
    return out


def load_facts(directory: Path = FACTS_DIR) -> Catalog:
    """Parse and validate every fact file; rows that reference unknown ids are errors."""
    catalog = Catalog(
        gpus=tuple(_rows(directory, "gpus.toml", "gpu", _gpu)),
        not_devices=tuple(_rows(directory, "gpus.toml", "not_a_device", _not_device)),
        models=tuple(_rows(directory, "models.toml", "model", _model)),
        quants=tuple(_rows(directory, "quants.toml", "quant", _quant)),
        sizes=tuple(_rows(directory, "gguf_sizes.toml", "size", _size)),
        offers=tuple(_rows(directory, "offers.toml", "offer", _offer)),
        version=facts_hash(directory),
    )
    _check_references(catalog)
    return catalog


def _check_references(catalog: Catalog) -> None:
    for kind, items in (("gpu", catalog.gpus), ("model", catalog.models), ("quant", catalog.quants)):
        ids = [i.id for i in items]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise FactError(f"duplicate {kind} ids: {sorted(dupes)}")
    for s in catalog.sizes:
        if catalog.model(s.model_id) is None or catalog.quant(s.quant_id) is None:
            raise FactError(f"gguf_sizes.toml: unknown model or quant {s.model_id}/{s.quant_id}")
    for o in catalog.offers:
        if catalog.gpu(o.gpu_id) is None:
            raise FactError(f"offers.toml: unknown gpu {o.gpu_id} ({o.provider})")
