"""Catalog model rows from stored ``config.json`` copies: the geometry is never typed by hand.

``catalog/configs/<org>/<repo>.json`` are verbatim copies of Hugging Face ``config.json`` files;
``catalog/configs/SOURCES.toml`` names where each copy was read (a URL with its commit) and when.
A ``[[model]]`` row in ``models.toml`` that says ``config = "<org>/<repo>"`` carries only what a
config cannot say (name, aliases, the publisher's parameter counts, license, release, GGUF repo);
``apply_config`` fills in every geometry field through the one config reader
(``hf_config.checked_geometry``). A row without a stored config keeps its typed geometry and is
marked ``unverified = [..., "geometry"]``, which the card shows.

    python -m catalog.importers.model_configs          # rows whose typed geometry differs from their config
    python -m catalog.importers.model_configs --strip  # drop typed geometry from rows that have a config
"""

from __future__ import annotations

import json
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from catalog.fact_files import CONFIG_DIR
from catalog.model_files.config import checked_geometry
from core.models import ModelSpec

SOURCES = CONFIG_DIR / "SOURCES.toml"
MODELS = Path(__file__).resolve().parents[1] / "facts" / "models.toml"

# ModelSpec fields a config.json decides (names as in core.models.ModelSpec)
GEOMETRY_KEYS = (
    "architecture",
    "n_layers",
    "hidden_size",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "v_head_dim",
    "global_kv_heads",
    "global_head_dim",
    "sliding_kv_heads",
    "sliding_head_dim",
    "sliding_v_head_dim",
    "attention",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "n_full_attention_layers",
    "n_sliding_layers",
    "n_linear_layers",
    "linear_state_bytes",
    "pooled_kv_elements",
    "n_experts",
    "experts_per_token",
    "n_shared_experts",
    "moe_intermediate_size",
    "expert_params",
    "shared_expert_intermediate_size",
    "intermediate_size",
    "n_dense_layers",
    "gated_ffn",
    "vocab_size",
    "max_context",
    "tied_embeddings",
    "native_dtype",
)
UNVERIFIED_GEOMETRY = "geometry"  # the unverified marker of a row whose geometry has no stored config


class ConfigSourceError(ValueError):
    """A stored config is missing, unreadable or has no source line."""


@cache
def sources(path: Path = SOURCES) -> dict[str, dict[str, str]]:
    """repo id -> {"url": ..., "as_of": ..., "part": ...} for every stored config copy.

    ``part`` says where in the file the copy is when the URL holds several (a Markdown list of configs).
    """
    rows = tomllib.loads(path.read_text(encoding="utf-8")).get("config", []) if path.exists() else []
    return {r["repo"]: {"url": r["url"], "as_of": str(r["as_of"]), "part": r.get("part", "")} for r in rows}


@cache
def stored_config(repo: str, directory: Path = CONFIG_DIR) -> dict[str, Any]:
    """The stored config.json copy of ``repo`` (a dict)."""
    path = directory / f"{repo}.json"
    if repo not in sources() or not path.is_file():
        raise ConfigSourceError(f"no stored config for {repo} (catalog/configs/{repo}.json and a SOURCES.toml row)")
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ConfigSourceError(f"catalog/configs/{repo}.json is not a JSON object")
    return value


def config_geometry(repo: str) -> dict[str, Any]:
    """The geometry fields of a stored config, as ``ModelSpec`` keys."""
    return checked_geometry(stored_config(repo))


def apply_config(row: dict[str, Any]) -> dict[str, Any]:
    """A models.toml row with its geometry filled in from its stored config (or marked unverified).

    A row with a config that also types a geometry field is an error: one source per fact.
    """
    repo = row.pop("config", None)
    if repo is None:
        unverified = list(row.get("unverified", ()))
        if UNVERIFIED_GEOMETRY not in unverified:
            row["unverified"] = [*unverified, UNVERIFIED_GEOMETRY]
        return row
    typed = sorted(k for k in GEOMETRY_KEYS if k in row)
    if typed:
        raise ConfigSourceError(f"geometry typed by hand next to config {repo}: {', '.join(typed)}")
    geometry = config_geometry(repo)
    src = sources()[repo]
    where = f"{src['part']}, " if src["part"] else ""
    row["source"] = f"{row['source']}; geometry: {src['url']} ({where}as of {src['as_of']})"
    return row | geometry


def differences(row: dict[str, Any], repo: str) -> dict[str, tuple[Any, Any]]:
    """field -> (typed, config) for every geometry field a row types differently from the config."""
    geometry = config_geometry(repo)
    out = {}
    for key in GEOMETRY_KEYS:
        typed, from_config = _value(row, key), _value(geometry, key)
        if key in row and typed != from_config:
            out[key] = (typed, from_config)
    return out


def _value(fields: dict[str, Any], key: str) -> str:
    """A geometry field as the ModelSpec would hold it (defaults filled in), for comparing."""
    if key == "n_full_attention_layers" and fields.get(key) is None:
        n = fields.get("n_layers", 0) - fields.get("n_sliding_layers", 0) - fields.get("n_linear_layers", 0)
        return str(n)
    value = fields.get(key, ModelSpec.model_fields[key].default)
    return str(getattr(value, "value", value))


def strip_geometry(text: str) -> str:
    """models.toml text with the geometry lines removed from every [[model]] block that has a config."""
    blocks = text.split("\n[[model]]\n")
    out = [blocks[0]]
    for block in blocks[1:]:
        lines = block.split("\n")
        if any(line.startswith("config = ") for line in lines):
            lines = [line for line in lines if line.split(" = ", 1)[0] not in GEOMETRY_KEYS]
        out.append("\n".join(lines))
    return "\n[[model]]\n".join(out)


def main(argv: list[str]) -> int:
    text = MODELS.read_text(encoding="utf-8")
    if "--strip" in argv:
        MODELS.write_text(strip_geometry(text), encoding="utf-8")
        return 0
    for row in tomllib.loads(text)["model"]:
        if "config" in row:
            for key, (typed, config) in differences(row, row["config"]).items():
                print(f"{row['id']}: {key} typed {typed!r}, config {config!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
