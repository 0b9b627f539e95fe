"""Region-restricted parts: export variants built for (and mostly sold in) China.

They are suggested only when the user asks about one (or names one as their own), or marked as such;
a buyer elsewhere cannot get them. The catalog may mark a device itself with an optional
``region_restricted`` field; until it does, these ids are the list (NVIDIA's China-market H800,
A800, H20 and the GeForce "D" cards).
"""

from __future__ import annotations

from core.models import GpuSpec

REGION_RESTRICTED = frozenset({"h800", "a800", "h20-96gb", "h20-141gb", "rtx-4090-d", "rtx-5090-d", "rtx-5090-d-v2"})


def restricted(gpu: GpuSpec) -> bool:
    return gpu.id in REGION_RESTRICTED
