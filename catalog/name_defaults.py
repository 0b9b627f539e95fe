"""Dominant-variant rules (``facts/name_defaults.toml``): which memory variant a bare device name means.

"3060" is the 12 GB card for nearly everyone who types it; the rule file says so, with its source,
and the parser answers for that variant, showing the assumption and offering the others.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

RULES_PATH = Path(__file__).with_name("facts") / "name_defaults.toml"


class NameDefault(BaseModel):
    """One rule: ``pick`` is answered for a bare name that also fits ``others``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    pick: str
    others: tuple[str, ...]
    why: str
    source: str
    as_of: str


@lru_cache(maxsize=4)
def _rules(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def load_name_defaults(path: Path = RULES_PATH) -> tuple[NameDefault, ...]:
    """Every rule of the file; a rule must name its source."""
    return tuple(NameDefault(**row) for row in _rules(path).get("default", ()))


class Lineup(BaseModel):
    """A product line ("Mac Studio") and the configurations it is sold with now: a bare line name means any."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    ids: tuple[str, ...]
    why: str
    source: str
    as_of: str
    unverified: bool = False  # the line-up was read from a lead, not the vendor's own page


def load_lineups(path: Path = RULES_PATH) -> tuple[Lineup, ...]:
    return tuple(Lineup(**row) for row in _rules(path).get("lineup", ()))


def lineups_of(known: set[str], path: Path = RULES_PATH) -> dict[str, tuple[str, ...]]:
    """Device id -> the product lines it is a configuration of (ids the catalog lacks are left out)."""
    out: dict[str, tuple[str, ...]] = {}
    for line in load_lineups(path):
        for gid in line.ids:
            if gid in known:
                out[gid] = (*out.get(gid, ()), line.name)
    return out


def dominant_ids(known: set[str], path: Path = RULES_PATH) -> frozenset[str]:
    """The picked ids whose rule applies to this catalog (the pick and at least one other are in it)."""
    return frozenset(r.pick for r in load_name_defaults(path) if r.pick in known and known & set(r.others))
