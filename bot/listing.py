"""The catalog as plain rows a client can browse (the MCP server's resources): each GPU and model with its
id, name, size and the source and date of its facts. Read from the catalog, nothing computed."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.models import GIB, Catalog


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GpuRow(_Row):
    id: str
    name: str
    vendor: str
    category: str
    memory_gib: float  # per device
    bandwidth_gb_per_s: float
    unified_memory: bool
    source: str
    as_of: str


class ModelRow(_Row):
    id: str
    name: str
    family: str
    hf_repo: str | None
    total_params_b: float
    active_params_b: float
    max_context: int
    source: str
    as_of: str


class CatalogRows(_Row):
    gpus: tuple[GpuRow, ...]
    models: tuple[ModelRow, ...]


def catalog_rows(catalog: Catalog) -> CatalogRows:
    """Every GPU and model of ``catalog`` as a plain row with the source of its facts."""
    return CatalogRows(gpus=_gpu_rows(catalog), models=_model_rows(catalog))


def _gpu_rows(catalog: Catalog) -> tuple[GpuRow, ...]:
    return tuple(
        GpuRow(
            id=g.id,
            name=g.name,
            vendor=g.vendor,
            category=g.category,
            memory_gib=round(g.memory_bytes / GIB, 2),
            bandwidth_gb_per_s=round(g.bandwidth_bytes_per_s / 1e9, 1),
            unified_memory=g.unified_memory,
            source=g.provenance.source,
            as_of=g.provenance.as_of,
        )
        for g in catalog.gpus
    )


def _model_rows(catalog: Catalog) -> tuple[ModelRow, ...]:
    return tuple(
        ModelRow(
            id=m.id,
            name=m.name,
            family=m.family,
            hf_repo=m.hf_repo,
            total_params_b=round(m.total_params / 1e9, 3),
            active_params_b=round(m.active_params / 1e9, 3),
            max_context=m.max_context,
            source=m.provenance.source,
            as_of=m.provenance.as_of,
        )
        for m in catalog.models
    )
