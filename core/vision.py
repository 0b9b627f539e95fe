"""Images: how many tokens one image takes in the context, and the projector's memory.

llama.cpp runs the vision encoder and projector from a separate ``mmproj`` file (F16 by default,
offloaded to the GPU unless ``--no-mmproj-offload``); its size is the encoder's parameters x 2 bytes.
Image tokens are prompt tokens: they fill the context (KV cache) and are prefilled before the first
answer token, so the time to first token grows with them. Per-family rules in
``catalog/facts/vision.toml``; the encoder's own compute time is not modelled (said on the card).
"""

from __future__ import annotations

import math
from typing import Literal

from core.models import Frozen, ModelSpec, Provenance

DEFAULT_IMAGE_SIDE = 1024  # pixels, a typical photo or screenshot after resizing
MMPROJ_BYTES_PER_PARAM = 2  # F16


class VisionFact(Frozen):
    family: str
    tokens: Literal["fixed", "grid"]
    tokens_per_image: int = 0
    pixels_per_token: int = 0
    encoder_params: int | None = None
    provenance: Provenance


def vision_fact(model: ModelSpec, facts: tuple[VisionFact, ...]) -> VisionFact | None:
    """The family's rule, for a model that takes images (it has a vision encoder)."""
    fact = next((f for f in facts if f.family == model.family), None)
    if fact is None or (model.vision_params is None and fact.encoder_params is None):
        return None
    if model.vision_params is None and model.total_params < 3e9:  # the family's small text-only sizes
        return None
    return fact


def image_tokens(fact: VisionFact, side: int = DEFAULT_IMAGE_SIDE) -> int:
    if fact.tokens == "fixed":
        return fact.tokens_per_image
    return math.ceil(side / fact.pixels_per_token) ** 2


def mmproj_bytes(model: ModelSpec, fact: VisionFact) -> int:
    params = model.vision_params or fact.encoder_params or 0
    return params * MMPROJ_BYTES_PER_PARAM


__all__ = ["DEFAULT_IMAGE_SIDE", "VisionFact", "image_tokens", "mmproj_bytes", "vision_fact"]
