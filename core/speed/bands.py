"""The band a card shows around a speed figure: the held-out spread of its backend, generation segment and model
kind (``bench/speed_validation.py`` writes the bands into ``core/speed/constants.py``)."""

from __future__ import annotations

from typing import Literal

from core.speed import constants as K


def speed_band(
    value: float, kind: Literal["decode", "prefill"], family: str, level: int, moe: bool = False, segment: str = ""
) -> tuple[float, float]:
    """Band around ``value`` from the speed family's held-out spread: level 0 = a calibrated generation
    (leave-one-GPU-out), 1 = an uncalibrated one (leave-one-family-out), 2 = rough on top (proxy
    backend, vLLM, offload at a default RAM bandwidth): the level-1 band widened by ``ROUGH_BAND_WIDEN``."""
    if level == 0:  # the family's calibrated band, or the segment's own where its held-out spread is wider
        lo, hi = (K.DECODE_BAND if kind == "decode" else K.PREFILL_BAND)[family]
        lo, hi = (K.SEGMENT_DECODE_BAND if kind == "decode" else K.SEGMENT_PREFILL_BAND).get(segment, (lo, hi))
    else:  # the family's rough band, or the rough segment's own where its held-out spread is wider
        lo, hi = (K.DECODE_BAND_ROUGH if kind == "decode" else K.PREFILL_BAND_ROUGH)[family]
        lo, hi = (K.SEGMENT_DECODE_BAND_ROUGH if kind == "decode" else K.SEGMENT_PREFILL_BAND_ROUGH).get(
            segment, (lo, hi)
        )
    if moe:  # routing and expert GEMMs: the least certain part of the model
        moe_lo, moe_hi = K.MOE_DECODE_BAND if kind == "decode" else K.MOE_PREFILL_BAND
        lo, hi = min(lo, moe_lo), max(hi, moe_hi)
    if level >= 2:
        lo, hi = lo**K.ROUGH_BAND_WIDEN, hi**K.ROUGH_BAND_WIDEN
    return value * lo, value * hi
