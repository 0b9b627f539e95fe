"""Backend and device-spec phrases of a question: "on vulkan", "mit ROCm", "32 GB at 608 GB/s", "90 TFLOPS";
and the screen's, which name no device and no context ("1080p", "4k gaming").

Read before the device phrases (``query_devices.read_devices``), so "608 GB/s" is never taken for a
memory size; each match is blanked (offsets stay valid) and stored in ``found`` under its ``Query``
field: ``backend``, ``device_bandwidth_gbps``, ``device_tflops`` and, for a device described by its
specs, ``device_kind``/``device_memory_gib``.
"""

from __future__ import annotations

import re

from core.models import BACKEND_NAMES
from core.query.amounts import number
from core.query.lexicon import Found, blank
from core.query.literals import quick

A = re.ASCII
# "cpu" stays with the device phrases ("CPU only"); "vk" is too short to read in free text
CHAT_BACKENDS = {name: backend for name, backend in BACKEND_NAMES.items() if name not in ("cpu", "vk")}
_NUM = r"(?P<num>\d{1,6}(?:[.,]\d{1,3})?)"
BACKEND = quick(
    r"\b(?:(?:on|with|via|using|under|in|mit|über|unter|auf|per)\s+)?(?P<b>" + "|".join(CHAT_BACKENDS) + r")\b"
    r"(?:[ -]?(?:backend|build|runtime))?",
)
BANDWIDTH = quick(
    r"(?:\b(?:at|with|mit|bei|and|und|,)\s+)?\b" + _NUM + r"\s*(?P<unit>gb|tb)\s*/\s*s(?:ec|ek|ekunde)?\b"
    r"(?:\s*(?:of\s+)?(?:memory\s+)?(?:bandwidth|bandbreite|speicherbandbreite))?|\b"
    + _NUM.replace("num", "num2")
    + r"\s*(?P<unit2>gbps|tbps)\b",
    A,
)
TFLOPS = quick(r"(?:\b(?:and|und|with|mit|,)\s+)?\b" + _NUM + r"\s*(?:tflops?|tflop/s|tera[ -]?flops)\b", A)
# "32 GB" in a question that also gives a bandwidth or TFLOPS: the device's memory (not its RAM)
_DEVICE_WORD = r"(?:gpu|graphics\s*card|card|grafikkarte|karte|device|gerät)"
SPEC_MEMORY = quick(
    r"(?:\b(?:my|meine?|a|an|eine?)\s+)?(?:\b" + _DEVICE_WORD + r"\s*(?:has|hat|with|mit|of|von)?\s*)?"
    r"\b" + _NUM + r"\s*(?:gb|gib)\b(?!\s*/)(?!\s*(?:of\s+)?(?:system\s+)?(?:ram|ddr|arbeitsspeicher))"
    r"(?:\s*(?:of\s+)?(?:vram|video\s*memory|grafikspeicher))?"
)


# display resolutions ("1080p", "1920x1080", "4k gaming", "zocken in 4k"): no GTX 1080 and no 4K context; "Np" only
# for the video standards' line counts (a Xeon 6980P is no screen)
_SCREEN = (
    r"(?:gaming|games?|monitors?|displays?|screens?|videos?|bildschirm\w*|auflösung|resolution|tvs?|fernseher"
    r"|spielen|zocken|texturen|textures?|fps|hz)"
)
DISPLAY = quick(
    r"\b(?:(?:240|360|480|540|576|720|900|1080|1440|1600|2160|4320)p(?:\d{2,3})?|(?:6[4-9]\d|[7-9]\d\d|[1-7]\d{3})\s?[x×]\s?(?:[4-9]\d\d|[1-4]\d{3}))\b"  # 640x480 up, no "100x 4090"
    r"|\b(?:[2458]k|uhd|qhd|fhd)(?=\s*(?:@|\d{2,3}\s*(?:hz|fps)\b|(?:in |at |auf )?" + _SCREEN + r"\b))"
    r"|\b" + _SCREEN + r"\s+(?:in|at|auf|mit|on|@)\s+(?:[2458]k|uhd|qhd|fhd)\b",
    A,
)


def read_specs(low: str, found: Found) -> str:
    """Takes out the backend and the device specs a question gives (see the module docstring)."""
    low = DISPLAY.sub(blank, low)
    if m := BACKEND.search(low):
        found["backend"] = CHAT_BACKENDS[m["b"]]
        low = low[: m.start()] + blank(m) + low[m.end() :]
    if m := BANDWIDTH.search(low):
        value = number(m["num"] or m["num2"])
        unit = (m["unit"] or m["unit2"] or "").lower()
        gbps = value * (1000.0 if unit.startswith("tb") else 1.0)
        if 1 <= gbps <= 100_000:
            found["device_bandwidth_gbps"] = gbps
        low = low[: m.start()] + blank(m) + low[m.end() :]
    if m := TFLOPS.search(low):
        if 0.1 <= (tflops := number(m["num"])) <= 100_000:
            found["device_tflops"] = tflops
        low = low[: m.start()] + blank(m) + low[m.end() :]
    specs = "device_bandwidth_gbps" in found or "device_tflops" in found
    if specs and (m := SPEC_MEMORY.search(low)) and 1 <= (gib := number(m["num"])) <= 1024:
        found.setdefault("device_kind", "gpu")
        found.setdefault("device_memory_gib", gib)
        low = low[: m.start()] + blank(m) + low[m.end() :]
    return low
