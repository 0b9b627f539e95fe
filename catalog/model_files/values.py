"""Reading one value of a config.json: the first key present, as an integer, or an error naming the key.

Shared by the readers (``config_geometry``, ``config_mixed``, ``config_layers``) and the parameter counts.
"""

from __future__ import annotations

from typing import Any


class GeometryError(ValueError):
    """A config value is missing or of the wrong kind; the message names the key."""


def first(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return default


def integer(cfg: dict[str, Any], *keys: str, default: int | None = None) -> int | None:
    value = first(cfg, *keys, default=default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise GeometryError(f"{keys[0]} must be an integer, got {value!r}")
    return int(value)
