"""``fitbot catalog verify``: every model row whose stored config, live config or parameter counts disagree.

Three checks, each a ``Finding`` with the row id, what kind of disagreement and the detail:

- ``no-config``: the row has no stored config.json copy (its geometry is unverified) or a copy the
  reader cannot parse (an architecture it does not model yet); the memory-only rows (``memory_only.toml``)
  are listed so too;
- ``params``: the publisher's total/active parameters differ from what the stored config implies by
  more than the tolerance (3 % total unless the row explains it in ``params_note``; 20 % active,
  counted with or without the embeddings, as publishers do either), or the total counts next-n (MTP)
  layers that llama.cpp's converter leaves out of the GGUF (nearer the count with them than without);
- ``live``: the config.json on the hub today differs from the row (only with a hub, ``--live``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from catalog.extra_facts import sized_models
from catalog.facts import FACTS_DIR, raw_rows
from catalog.hub.live import HubLookup, live_row
from catalog.importers.model_configs import ConfigSourceError, config_geometry, sources, stored_config
from catalog.model_files.config import ConfigError
from catalog.model_files.geometry import gguf_mtp_layers, mtp_layers
from catalog.model_files.params import config_params, embedding_params, mtp_layer_params
from core.models import Catalog

TOTAL_TOLERANCE = 0.03
ACTIVE_TOLERANCE = 0.2


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    kind: Literal["no-config", "params", "live"]
    detail: str


def stored_findings(catalog: Catalog) -> list[Finding]:
    """Rows without a readable stored config, and rows whose parameter counts drift from theirs."""
    rows = {r["id"]: r for r in raw_rows(FACTS_DIR, "models.toml", "model")}
    out = []
    for model in catalog.models:
        repo = rows.get(model.id, {}).get("config")
        if repo is None:
            out.append(Finding(model=model.id, kind="no-config", detail=_why_no_config(model.hf_repo)))
            continue
        try:
            geometry = config_geometry(repo)
            total, active = config_params(stored_config(repo), geometry)
        except (ConfigError, ConfigSourceError) as exc:
            out.append(Finding(model=model.id, kind="no-config", detail=str(exc)))
            continue
        counts = (total, active, active - embedding_params(geometry))
        out.extend(_param_findings(model.id, model.total_params, model.active_params, counts, model.params_note))
        config = stored_config(repo)
        if mtp_layers(config) and gguf_mtp_layers(config) == 0:  # the GGUF holds no MTP weights
            with_mtp = total + mtp_layers(config) * mtp_layer_params(config, geometry)
            if abs(model.total_params - with_mtp) < abs(model.total_params - total):
                detail = f"total {model.total_params / 1e9:.2f}B counts the MTP layers; the GGUF has {total / 1e9:.2f}B"
                out.append(Finding(model=model.id, kind="params", detail=detail))
    for sized in sized_models():
        detail = f"memory-only: no config.json of {sized.hf_repo}; {sized.total_params / 1e9:.1f}B as published"
        out.append(Finding(model=sized.id, kind="no-config", detail=detail))
    return out


def _why_no_config(repo: str | None) -> str:
    if repo is None or repo not in sources():
        return f"no stored config.json ({repo or 'no repo'})"
    try:
        config_geometry(repo)
    except ConfigError as exc:
        return f"stored config of {repo} not readable: {exc}"
    return f"stored config of {repo} not used: it contradicts the row (see GAPS.md)"


def _param_findings(
    model_id: str, row_total: int, row_active: int, counts: tuple[int, int, int], note: str
) -> list[Finding]:
    """``counts``: the config's total, active, and active without the embeddings."""
    total, active, active_bare = counts
    out = []
    if not note and abs(row_total - total) / row_total > TOTAL_TOLERANCE:
        detail = f"total {row_total / 1e9:.2f}B, config implies {total / 1e9:.2f}B"
        out.append(Finding(model=model_id, kind="params", detail=detail))
    if min(abs(row_active - active), abs(row_active - active_bare)) / row_active > ACTIVE_TOLERANCE:
        detail = f"active {row_active / 1e9:.2f}B, config implies {active / 1e9:.2f}B"
        out.append(Finding(model=model_id, kind="params", detail=detail))
    return out


async def live_findings(catalog: Catalog, hub: HubLookup) -> list[Finding]:
    """Rows whose config.json on the hub today differs from the row (rows the hub cannot answer are skipped)."""
    out = []
    for model in catalog.models:
        checked, changed = await live_row(hub, model)
        if changed:
            detail = ", ".join(f"{k} {_show(getattr(model, k))} -> {_show(getattr(checked, k))}" for k in changed)
            out.append(Finding(model=model.id, kind="live", detail=detail))
    return out


def _show(value: Any) -> str:
    return str(getattr(value, "value", value))
