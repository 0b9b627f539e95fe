"""A catalog model checked against its live ``config.json``: where they disagree, the live one wins.

The hub look-up (``CachedHubClient.lookup``: one request per repo, then cached for days) builds its
``ModelSpec`` through the same config reader as the catalog importer, so comparing the geometry
fields is comparing like with like. Everything a config cannot say (name, aliases, the publisher's
parameter counts, license) stays the catalog's.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from catalog.importers.model_configs import GEOMETRY_KEYS
from core.models import ModelSpec, Provenance

log = logging.getLogger(__name__)
LIVE_CHECK_S = 3.0  # a catalog answer never waits longer than this for the hub
# fields a live config may differ in without the row being wrong (the catalog names the base architecture)
IGNORED = frozenset({"architecture", "native_dtype"})


class LookedUp(Protocol):
    spec: ModelSpec
    revision: str
    stale: bool


class HubLookup(Protocol):
    async def lookup(self, ref: str) -> LookedUp: ...


def geometry_drift(row: ModelSpec, live: ModelSpec) -> tuple[str, ...]:
    """Geometry fields whose live value differs from the catalog row's."""
    return tuple(
        key
        for key in GEOMETRY_KEYS
        if key not in IGNORED and key in ModelSpec.model_fields and getattr(row, key) != getattr(live, key)
    )


def with_live_geometry(row: ModelSpec, live: ModelSpec, revision: str) -> ModelSpec:
    """The row with the live config's geometry (and a provenance that says so)."""
    update = {key: getattr(live, key) for key in GEOMETRY_KEYS if key not in IGNORED}
    prov = Provenance(
        source=f"{row.provenance.source}; geometry: live config.json @ {revision[:12]}",
        as_of=live.provenance.as_of,
        unverified=tuple(f for f in row.provenance.unverified if f != "geometry"),
    )
    return ModelSpec.model_validate(row.model_dump() | update | {"provenance": prov})


async def live_row(
    hub: HubLookup, row: ModelSpec, timeout_s: float = LIVE_CHECK_S
) -> tuple[ModelSpec, tuple[str, ...]]:
    """(model to answer with, fields the live config changed); the row itself when the hub cannot say."""
    if not row.hf_repo:
        return row, ()
    try:
        found = await asyncio.wait_for(hub.lookup(row.hf_repo), timeout_s)
    except Exception as exc:  # offline, not found, gated, rate limited, slow: the catalog row answers
        log.debug("live config of %s not checked: %s", row.hf_repo, exc.__class__.__name__)
        return row, ()
    drift = geometry_drift(row, found.spec)
    if not drift:
        return row, ()
    try:
        return with_live_geometry(row, found.spec, found.revision), drift
    except ValueError:  # the live geometry contradicts the row's parameter counts: keep the row
        return row, ()
