"""A model's vision tower from its config.json: encoder parameters, tokens per image, llama.cpp's projector.

Read from the config's own ``vision_config`` (the stored copy in ``catalog/configs``); the rows of
``catalog/facts/vision.toml`` stand in only where the stored config has no vision part (a sibling's
stored config with the same tower, or the publisher's vision_config keys written out with their source).

Encoder parameters: ``layers x (4 h^2 + m h I)`` (attention q/k/v/o and a gated, m = 3, or plain, m = 2,
FFN; ``num_global_layers`` count as layers) + the patch embedding (channels x patch^2 x temporal patch x h)
+ position embeddings + the projector into the text model (``h x merge^2`` in, two matrices for a
patch merger, one otherwise). Norms and biases are left out.
"""

from __future__ import annotations

import math
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from catalog.importers.model_configs import ConfigSourceError, sources, stored_config
from catalog.model_files.geometry import text_config
from catalog.model_files.values import first, integer
from core.models import ModelSpec, Provenance
from core.vision import VisionFact

FACTS = Path(__file__).resolve().parents[1] / "facts"
VISION_FACTS = "vision.toml"
GATED_ACTS = {"silu", "swiglu"}
# top-level keys a config gives next to vision_config for the tokens of one image
FIXED_TOKEN_KEYS = ("mm_tokens_per_image", "vision_soft_tokens_per_image")


@cache
def _facts() -> dict[str, Any]:
    return tomllib.loads((FACTS / VISION_FACTS).read_text(encoding="utf-8"))


@cache
def _config_repos() -> dict[str, str]:
    """catalog model id -> the stored config it is read from (models.toml ``config``)."""
    rows = tomllib.loads((FACTS / "models.toml").read_text(encoding="utf-8")).get("model", ())
    return {str(r["id"]): str(r["config"]) for r in rows if "config" in r}


def projectors() -> dict[str, str]:
    """vision model_type -> llama.cpp mtmd projector type ('' where mainline has none)."""
    return {str(r["model_type"]): str(r["llama_cpp"]) for r in _facts().get("projector", ())}


def runs_instead() -> str:
    """The engine named where mainline llama.cpp does not run a tower's images."""
    return str(_facts()["projectors"]["runs_instead"])


def vision_part(config: dict[str, Any]) -> dict[str, Any] | None:
    part = config.get("vision_config") or config.get("vision_params")
    return part if isinstance(part, dict) and part else None


def vision_kind(config: dict[str, Any], part: dict[str, Any]) -> str:
    kind = str(part.get("model_type") or "")
    if kind in ("", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe") and config.get("model_type"):
        kind = str(config["model_type"])  # Qwen's vision_config names the whole model
    if "vt_hidden_size" in part:
        return "moonvit"  # Kimi K2.5+: MoonViT, keys vt_*
    if kind in ("qwen2_5_vl", "qwen2_vl"):
        return "qwen2_5_vl"
    return kind


def encoder_params(config: dict[str, Any], part: dict[str, Any]) -> int | None:
    h = integer(part, "hidden_size", "vt_hidden_size", "embed_dim")
    layers = integer(part, "num_hidden_layers", "depth", "vt_num_hidden_layers")
    width = integer(part, "intermediate_size", "vt_intermediate_size")
    if not h or not layers or not width:
        return None
    layers += integer(part, "num_global_layers", default=0) or 0
    act = str(first(part, "hidden_act", "hidden_activation", "activation_func", default="gelu"))
    mats = 3 if act in GATED_ACTS else 2
    patch = integer(part, "patch_size", "spatial_patch_size", default=14) or 14
    channels = integer(part, "num_channels", "in_channels", "in_chans", default=3) or 3
    temporal = integer(part, "temporal_patch_size", default=1) or 1
    image = integer(part, "image_size", default=0) or 0
    positions = integer(part, "num_position_embeddings", default=0) or (image // patch) ** 2
    merge = _merge(config, part)
    text_hidden = integer(text_config(config), "hidden_size", default=0) or 0
    out = integer(part, "out_hidden_size", "projector_output_dim", "text_hidden_size", default=0) or text_hidden or h
    merged = h * merge * merge
    projector = merged * merged + merged * out if merge > 1 else h * out
    # Qwen3-VL: one more patch merger per deepstack layer
    projector *= 1 + len(part.get("deepstack_visual_indexes") or ())
    block_width = width
    if str(part.get("model_type", "")).startswith("glm4v"):
        # GLM-4.xV: the blocks' MLP is out_hidden_size wide; intermediate_size is the merger's gated MLP
        block_width = out
        projector = out * out + 3 * out * width + h * out * merge * merge
    if "vision_output_dim" in part and text_hidden:  # mllama: the concatenated layer outputs -> text model
        projector = int(part["vision_output_dim"]) * text_hidden
    body = layers * (4 * h * h + mats * h * block_width)
    tiles = integer(part, "max_num_tiles", default=0) or 0
    tile_embedding = _aspect_ratios(tiles) * tiles * (positions + 1) * h if tiles else 0
    return body + channels * patch * patch * temporal * h + positions * h + projector + tile_embedding


def _aspect_ratios(tiles: int) -> int:
    """mllama's tile-position table: one row per tile layout w x h <= tiles, plus padding."""
    return sum(1 for w in range(1, tiles + 1) for t in range(1, tiles + 1) if w * t <= tiles) + 1


def _merge(config: dict[str, Any], part: dict[str, Any]) -> int:
    ratio = part.get("pixel_shuffle_ratio")
    if isinstance(ratio, int | float) and 0 < ratio < 1:
        return round(1 / ratio)
    merge = integer(part, "spatial_merge_size", default=None) or integer(config, "spatial_merge_size", default=None)
    if merge is None and "merge_type" in part:  # MoonViT "sd2_*": 2 x 2 patches per token
        merge = 2
    return merge or 1


def tower(config: dict[str, Any], provenance: Provenance, extra: dict[str, Any] | None = None) -> VisionFact | None:
    """The vision tower of a config (None when it has none); ``extra``: a vision.toml row's own keys."""
    part = vision_part(config)
    if part is None:
        return None
    extra = extra or {}
    kind = vision_kind(config, part)
    llama_cpp = projectors()
    patch = integer(part, "patch_size", "spatial_patch_size", default=14) or 14
    merge = _merge(config, part)
    image = integer(part, "image_size", default=0) or 0
    common: dict[str, Any] = {
        "family": kind,
        "encoder_params": extra.get("encoder_params") or encoder_params(config, part),
        "projector": llama_cpp.get(kind) or None,
        "projector_known": kind in llama_cpp,
        "cross_attention": kind == "mllama_vision_model" or bool(text_config(config).get("cross_attention_layers")),
        "provenance": provenance,
    }
    fixed = next((integer(config, k) for k in FIXED_TOKEN_KEYS if config.get(k)), None) or extra.get("tokens_per_image")
    if fixed:
        return VisionFact(tokens="fixed", tokens_per_image=int(fixed), **common)
    tiles = integer(part, "max_num_tiles", default=None) or extra.get("max_tiles")
    if tiles and image:
        per_tile = extra.get("tokens_per_tile") or math.ceil((image // patch) ** 2 / (merge * merge))
        if kind == "mllama_vision_model":
            per_tile += 1  # the class token of each tile
        return VisionFact(
            tokens="tiles",
            tokens_per_image=int(per_tile),
            tile_side=int(extra.get("tile_side") or image),
            max_tiles=int(tiles),
            overview=bool(extra.get("overview", False)),
            **common,
        )
    max_side = image if kind == "pixtral" else 0
    return VisionFact(tokens="grid", pixels_per_token=patch * merge, max_side=max_side, **common)


@cache
def _fallbacks() -> dict[str, dict[str, Any]]:
    return {str(model): dict(row) for row in _facts().get("vision", ()) for model in row["models"]}


def model_tower(model_id: str, config_repo: str | None) -> VisionFact | None:
    """A catalog model's tower: from its stored config, else from its vision.toml row."""
    if config_repo:
        config = stored_config(config_repo)
        src = sources()[config_repo]
        found = tower(config, Provenance(source=f"{config_repo} config.json: {src['url']}", as_of=src["as_of"]))
        if found is not None:
            return found
    row = _fallbacks().get(model_id)
    if row is None:
        return None
    prov = Provenance(source=str(row["source"]), as_of=str(row["as_of"]))
    if "config" in row:
        try:
            config = stored_config(str(row["config"]))
        except ConfigSourceError:
            return None
    else:
        config = {"vision_config": dict(row["vision_config"])}
    return tower(config, prov, row)


def vision_of(model: ModelSpec) -> VisionFact | None:
    """The vision tower of a catalog model (None: it reads text only)."""
    return model_tower(model.id, _config_repos().get(model.id))


__all__ = [
    "vision_of",
    "encoder_params",
    "model_tower",
    "projectors",
    "runs_instead",
    "tower",
    "vision_kind",
    "vision_part",
]
