"""A saved device known only by its memory ("/mygpu 16gb vram", "/mygpu cpu only"), as its stored id.

The preference store keeps one device id per user; a catalog id names a catalog device, and
``generic-<kind>-<GB>`` (``generic-gpu-16``, ``generic-laptop-8``, ``generic-cpu-0``) names a device
of that kind and memory, estimated as ``core.devices`` describes. A CPU of ``catalog/facts/cpus.toml``
saved with "/mygpu epyc 9654" keeps its row id after a colon (``generic-cpu-0:epyc-9654``).
"""

from __future__ import annotations

GENERIC_PREFIX = "generic-"
KINDS = ("gpu", "laptop", "cpu", "unified")


def generic_saved(gpu_id: str | None) -> tuple[str, float] | None:
    """(kind, memory GB) of a saved device known only by its memory, else None."""
    if not gpu_id or not gpu_id.startswith(GENERIC_PREFIX):
        return None
    kind, _, memory = gpu_id.removeprefix(GENERIC_PREFIX).partition(":")[0].partition("-")
    try:
        return (kind, float(memory)) if kind in KINDS else None
    except ValueError:
        return None


def saved_board(gpu_id: str | None) -> str:
    """The CPU row id a saved CPU-only device names ("generic-cpu-0:epyc-9654" -> "epyc-9654"), else ""."""
    if not gpu_id or not gpu_id.startswith(f"{GENERIC_PREFIX}cpu-"):
        return ""
    return gpu_id.partition(":")[2]
