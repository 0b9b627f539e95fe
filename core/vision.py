"""Images: how many tokens one image takes in the context, and the projector's memory.

A model's vision tower is read from its own config.json (``vision_config``: hidden size, layers, FFN
width, patch size, spatial merge or pixel shuffle, fixed tokens per image); ``catalog.model_files.vision``
turns it into a ``VisionFact``, with the rows of ``catalog/facts/vision.toml`` only for models whose
stored config has no vision part.

llama.cpp runs the vision encoder and projector from a separate ``mmproj`` file (F16 by default,
offloaded to the GPU unless ``--no-mmproj-offload``) when its ``tools/mtmd`` has a projector type for the
tower (``projector``; ``None`` = mainline has none, e.g. Llama 3.2 Vision's cross-attention); the file's
size is the encoder's parameters x 2 bytes. Image tokens are prompt tokens: they fill the context
(KV cache) and are prefilled before the first answer token. The encoder's own compute time is not
modelled (said on the card).

Token rules (``tokens``):
- ``fixed``: every image becomes ``tokens_per_image`` tokens (Gemma 3: 256, Gemma 4: 280);
- ``grid``: one token per ``pixels_per_token`` square (patch size x spatial merge) of the image, the
  longer side first scaled down to ``max_side`` when it is larger (Pixtral: 1540);
- ``tiles``: the image is cut into at most ``max_tiles`` squares of ``tile_side``, each
  ``tokens_per_image`` tokens, plus one overview tile when there are several (Llama 4, MiniCPM-V).
"""

from __future__ import annotations

import math
from typing import Literal

from core.models import Frozen, ModelSpec, Provenance

DEFAULT_IMAGE_SIDE = 1024  # pixels, a typical photo or screenshot after resizing
MMPROJ_BYTES_PER_PARAM = 2  # F16


class VisionFact(Frozen):
    family: str  # what the tower is called on the card (the config's vision model_type or the family)
    tokens: Literal["fixed", "grid", "tiles"]
    tokens_per_image: int = 0  # fixed; tiles: per tile
    pixels_per_token: int = 0  # grid
    max_side: int = 0  # grid: the longer side is scaled down to this (0: no limit)
    tile_side: int = 0
    max_tiles: int = 1
    overview: bool = False  # tiles: one more tile for the whole image when it is cut
    encoder_params: int | None = None
    projector: str | None = None  # llama.cpp tools/mtmd projector type; None: mainline has none
    projector_known: bool = False  # whether ``projector`` was looked up (False: not in the stored list)
    cross_attention: bool = False  # image tokens feed cross-attention layers, not the text context
    provenance: Provenance


def image_tokens(fact: VisionFact, side: int = DEFAULT_IMAGE_SIDE, height: int | None = None) -> int:
    """Tokens of one ``side`` x ``height`` image (a square when no height is given)."""
    width, tall = side, height or side
    if fact.tokens == "fixed":
        return fact.tokens_per_image
    if fact.tokens == "grid":
        longest = max(width, tall)
        if fact.max_side and longest > fact.max_side:
            width, tall = round(width * fact.max_side / longest), round(tall * fact.max_side / longest)
        return math.ceil(width / fact.pixels_per_token) * math.ceil(tall / fact.pixels_per_token)
    tiles = min(fact.max_tiles, math.ceil(width / fact.tile_side) * math.ceil(tall / fact.tile_side))
    if fact.overview and tiles > 1:
        tiles += 1
    return tiles * fact.tokens_per_image


def mmproj_bytes(model: ModelSpec, fact: VisionFact) -> int:
    params = fact.encoder_params or model.vision_params or 0
    return params * MMPROJ_BYTES_PER_PARAM


__all__ = ["DEFAULT_IMAGE_SIDE", "VisionFact", "image_tokens", "mmproj_bytes"]
