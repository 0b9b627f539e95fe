"""Device phrases of a question (``core.query.parse``): devices named only by their memory ("16 GB VRAM",
"laptop with 8 GB", "CPU only"), Apple GPU core counts, integrated GPUs, single-board computers and
CPUs (never a discrete card), "biggest model", and formats FitBot does not model ("exl2 4.65bpw").

Each match is blanked (offsets stay valid) and stored in ``found`` under its ``Query`` field.
"""

from __future__ import annotations

import re
from functools import cache

from core.query.amounts import number
from core.query.lexicon import Found, blank
from core.query.literals import Quick, quick

A = re.ASCII

# --- devices named only by their memory, and questions about memory alone ------------------

_GB = r"(?P<num>\d{1,3}(?:[.,]\d)?)\s*(?:gb|gib|g|gigs?)"
_VRAM = r"(?:vram|video\s*(?:ram|memory|speicher)|gpu(?:[ -]?(?:ram|memory|speicher))?|graphics\s*cards?|cards?|grafikkarten?|karten?|grafikspeicher)"
# a Mac's, a Strix Halo's or a DGX Spark's one pool of memory, named by what it is rather than by the machine
_UNIFIED = (
    r"(?:(?:unified|shared|gemeinsame[mnr]?|geteilte[mnr]?|vereinheitlichte[mnr]?)\s*(?:memory|ram|speicher|"
    r"arbeitsspeicher)\b|unified[ -]?memory\b)"
)
# (pattern, device kind); a match sets device_memory_gib (or, for "cpu", only the kind)
_NOT_RAM = r"(?!\s*(?:of\s+)?(?:system\s+)?(?:ram|ddr\d?|arbeitsspeicher)\b)"  # "laptop with 16 GB RAM": no VRAM
# a price is no device ("under $2000" is no RTX 2000): taken out before names are matched
PRICE = quick(r"(?:[$€£]\s*\d[\d,.]*\s*k?\b|\b\d[\d,.]*\s*k?\s*(?:[$€£]|usd|eur|euros?|dollars?|bucks)(?!\w))", A)
GENERIC_DEVICES: tuple[tuple[Quick, str], ...] = (
    (quick(r"\b(?:laptop|notebook)\s*(?:gpu\s*)?(?:with|mit|has|hat|got)\s*(?:an?\s+|eine?\s+|only\s+|nur\s+)?" + _GB + r"\b" + _NOT_RAM + r"(?:\s*(?:of\s+)?vram)?", A), "laptop"),
    (quick(r"\b" + _GB + r"\s*(?:of\s+)?(?:vram\s*)?(?:laptop|notebook)\b", A), "laptop"),
    (quick(r"\b" + _GB + r"\s*(?:of\s+)?" + _VRAM + r"\b", A), "gpu"),
    (quick(r"\b(?:gpu|graphics\s*card|card|grafikkarte|karte)\s*(?:with|mit)\s*" + _GB + r"\b(?:\s*(?:of\s+)?vram)?", A),
     "gpu"),
    (quick(r"\bvram\s*(?:of|von|[:=])?\s*" + _GB + r"\b", A), "gpu"),
    (quick(r"\b" + _GB + r"\s*(?:of\s+)?" + _UNIFIED, A), "unified"),
    (quick(_UNIFIED + r"\s*(?:of|von|with|mit|[:=])?\s*" + _GB + r"\b", A), "unified"),
    (quick(r"\b(?:cpu[ -]?only|only\s+(?:a\s+|the\s+)?cpu|nur\s+(?:die\s+|eine\s+)?cpu|no\s+gpu|without\s+(?:a\s+)?gpu"
                r"|ohne\s+(?:gpu|grafikkarte)|on\s+(?:the\s+|my\s+)?cpu|auf\s+(?:der\s+)?cpu)\b", A), "cpu"),
)  # fmt: skip
MEMORY_ONLY = quick(
    r"\bhow\s+much\s+(?:v?ram|(?:gpu\s+)?memory|vram)\b|\bwie\s*viel\s+(?:v?ram|(?:grafik)?speicher)\b"
    r"|\b(?:v?ram|memory|speicher)[ -]?(?:requirements?|bedarf|needed|required|usage)\b|\bspeicherbedarf\b"
    r"|\bkv[ -]?cache[ -]?(?:size|memory|usage|footprint|größe|bedarf|speicher)\b"
    r"|\b(?:how\s+(?:big|large)|wie\s+groß)\s+(?:is\s+|ist\s+)?(?:the\s+|der\s+)?kv[ -]?cache\b"
)
# engines FitBot does not model: named on the card with what was used instead
OTHER_ENGINE = quick(
    r"\b(?P<e>exl[23]|exllama(?:v2|v3)?|mlx(?:[ -]lm)?|sglang|tensorrt(?:[ -]llm)?|trt[ -]llm|tgi|aphrodite|ktransformers)\b",
    A,
)


# "38-core", "40 core GPU", "30c", "40-Kern-GPU", "38 GPU cores": an Apple GPU bin, never a device count;
# "12-core CPU" is taken out too (it names no device)
CORES = quick(
    r"\b(?P<n>\d{1,2})\s*[- ]?\s*(?:cores?|kerne?n?|c)\b(?P<cpu>\s*[- ]?\s*cpu)?(?:\s*[- ]?\s*gpu)?"
    r"|\b(?P<g>\d{1,2})\s*[- ]?\s*gpu[- ]?(?:cores?|kerne?n?)\b",
    A,
)
APPLE_CORES = (4, 80)  # the smallest and largest Apple GPU core counts (M1 7-core ... M3 Ultra 80-core)


def read_cores(low: str, found: Found) -> str:
    """Takes out GPU core counts; the largest stated one names the bin ("14c/30c" is CPU/GPU)."""

    def one(m: re.Match[str]) -> str:
        n = int(m["n"] or m["g"])
        if not m["cpu"] and APPLE_CORES[0] <= n <= APPLE_CORES[1]:
            found["gpu_cores"] = max(n, int(str(found.get("gpu_cores") or 0)))
        return blank(m)

    return CORES.sub(one, low)


# integrated GPUs and single-board computers: shared system RAM, never a discrete card
SBC = quick(
    r"\b(?:raspberry\s*pi|rpi|raspi)\s*(?P<model>[345])?(?:\s*model\s*b\+?)?"
    r"(?:\s*(?:with|mit)?\s*(?P<num>\d{1,2})\s*(?:gb|g)\b(?:\s*(?:of\s+)?ram)?)?",
    A,
)
IGPU = quick(
    r"\b(?:(?:intel\s*)?(?:iris\s*xe|iris\s*plus|uhd\s*graphics)"
    r"|integrated\s*(?:gpu|graphics|grafik)|igpu|onboard[- ]?(?:gpu|grafik|graphics)|integrierte\w*\s*grafik)\b",
    A,
)
# iGPUs named by their chip: the catalog's row when it has one ("Radeon 780M"), else a generic iGPU (``igpu_hint``)
IGPU_CHIP = quick(r"\b(?:amd\s*)?(?:radeon\s*)?(?:610m|660m|680m|740m|760m|780m|880m|890m)\b", A)

# a CPU named for the machine is never a GPU name: a laptop APU ("ryzen 7 7840u", "core ultra 7 155h",
# "i7-1165g7", "ryzen ai 9 hx 370") runs models on its iGPU; a desktop CPU ("ryzen 9 7950x", "i9-13900k",
# "xeon", "epyc") means CPU inference when no GPU is named (``cpu_named``)
APU = quick(
    r"\b(?:amd\s*)?ryzen\s*(?:[3579]\s*)?(?:pro\s*)?\d{4}\s*(?:u|hs|h|hx|g|ge)\b"
    r"|\b(?:amd\s*)?ryzen\s*ai\s*[3579]\s*(?:pro\s*)?(?:hx\s*)?\d{3}\b"
    r"|\b(?:intel\s*)?core\s*ultra\s*[3579]\s*\d{3}[hvu]?\b"
    r"|\b(?:intel\s*)?(?:core\s*)?i[3579][- ]?\d{4,5}(?:g[1-7]|u|h|hk)\b",
    A,
)
CPU = quick(
    r"\b(?:amd\s*)?ryzen\s*(?:threadripper\s*)?(?:pro\s*)?(?:[3579]\s*)?\d{4}(?:x3d|wx|x)?\b"
    r"|\b(?:amd\s*)?(?:threadripper|epyc)(?:\s*pro)?\s*\d{4}\w*"
    r"|\b(?:intel\s*)?(?:core\s*)?i[3579][- ]?\d{4,5}(?:k|kf|ks|f|t)?\b"
    r"|\b(?:intel\s*)?xeon\b(?:\s*(?:w[3579]-?|w(?=[- ]?\d)|e(?=[- ]?\d)|gold|silver|platinum)[- ]?)?(?:\s*\d{4}\w*\+?)?"
    r"|\b(?:intel\s*)?core\s*ultra\s*[579]\s*2\d{2}kf?\b"  # Arrow Lake desktop: "core ultra 9 285k"
    r"|\b[3579]\d{3}x(?:3d)?\b",  # "7950x", "9950x3d": a desktop Ryzen named by its number alone
    A,
)


def read_boards(low: str, found: Found) -> str:
    """Takes out "raspberry pi 5 8gb", "iris xe", a desktop CPU: machines whose GPU shares system RAM or
    that have none; an APU or iGPU chip ("ryzen 7 7840u", "radeon 680m") is only noted (``igpu_hint``)."""
    if m := APU.search(low) or IGPU_CHIP.search(low):
        found["igpu_hint"] = m.group().strip()  # not taken out: the catalog may know it ("7840hs": Radeon 780M)
    elif m := CPU.search(low):
        found["cpu_named"] = True
        found["cpu_text"] = m.group().strip()  # read as a CPU row (catalog/facts/cpus.toml) when resolved
        low = low[: m.start()] + blank(m) + low[m.end() :]
    if m := SBC.search(low):
        found.update(device_kind="sbc", board=f"pi{m['model'] or 5}")
        if m["num"]:
            found["device_memory_gib"] = float(m["num"])
        return low[: m.start()] + blank(m) + low[m.end() :]
    if m := IGPU.search(low):
        found.update(device_kind="igpu", board=str(found.get("igpu_hint") or m.group().strip()))
        return low[: m.start()] + blank(m) + low[m.end() :]
    return low


# "the biggest/largest model", "größtes Modell": a ranking by size, never a model named "largest"
BIGGEST = quick(
    r"\b(?:biggest|largest|hugest|gr(?:ö|oe|o)(?:ß|ss)te[snrm]?|gr(?:ö|oe|o)(?:ß|ss)tm(?:ö|oe)gliche[snrm]?)\b"
    r"(?:\s+(?:possible|möglich\w*|moeglich\w*))?(?:\s+(?:\w+\s+)?(?:modell\w*|models?|llms?)\b)?"
    # "how big a model can I run", "what model size fits 12gb", "welche modellgröße passt": the biggest that runs
    r"|\bhow (?:big|large) (?:of )?(?:an? )?(?:models?|llms?)\b|\bwie gro(?:ß|ss)e?s? (?:\w+ )?(?:modell\w*|llms?)\b"
    r"|\b(?:models?|llm) ?sizes?\b|\bmodellgr(?:ö|oe)(?:ß|ss)e\w*",
)


# the id of a device known by its memory, as a button repeats it ("generic-cpu-64", "generic-sbc-pi5-8",
# "cpu-epyc-9654-384": core/devices.py, core/speed/cpu.py): read back into the same device
DEVICE_ID = quick(
    r"\b(?:generic-(?P<kind>gpu|laptop|cpu|igpu)|generic-sbc-(?P<board>pi[345])|cpu-(?P<cpu>[a-z0-9-]+))"
    r"-(?P<num>\d{1,4}(?:\.\d+)?)\b",
    A,
)


def _read_device_id(low: str, found: Found) -> str:
    m = DEVICE_ID.search(low)
    if m is None:
        return low
    gib = float(m["num"])
    kind = "sbc" if m["board"] else m["kind"] or "cpu"
    found["device_kind"] = kind
    if m["board"] or m["cpu"]:
        found["board"] = m["board"] or m["cpu"]
    if kind in ("cpu", "igpu"):
        found.setdefault("ram_gb", gib)  # a CPU's or iGPU's memory is the machine's RAM
    elif gib:
        found["device_memory_gib"] = gib
    return low[: m.start()] + blank(m) + low[m.end() :]


def read_devices(low: str, found: Found) -> str:
    """Takes out "16 GB VRAM", "a GPU with 24 GB", "laptop with 8 GB", "CPU only"."""
    if m := BIGGEST.search(low):
        found["biggest"] = True
        low = low[: m.start()] + blank(m) + low[m.end() :]
    low = PRICE.sub(blank, low)
    low = _read_device_id(low, found)
    low = read_boards(read_cores(low, found), found)
    if MEMORY_ONLY.search(low):
        found["memory_only"] = True
    for pattern, kind in GENERIC_DEVICES:
        m = pattern.search(low)
        if m is None:
            continue
        num = m.groupdict().get("num")
        gib = number(num) if num else None
        if gib is not None and not 1 <= gib <= 1024:
            continue
        found.setdefault("device_kind", kind)
        if gib is not None:
            found.setdefault("device_memory_gib", gib)
        low = low[: m.start()] + blank(m) + low[m.end() :]
    low = _read_bpw(low, found)
    if m := OTHER_ENGINE.search(low):
        found["other_engine"] = m["e"]
        low = low[: m.start()] + blank(m) + low[m.end() :]
    return low


# EXL2/EXL3 at a stated bits per weight ("4.65bpw"), MLX n-bit ("mlx 4bit": group 64 with an fp16
# scale and bias, so n + 0.5 bpw, mlx.core.quantize): estimated as the GGUF quant nearest in size
BPW = quick(r"\b(?P<bpw>\d{1,2}(?:\.\d{1,3})?)\s*[- ]?(?:bpw|bits?\s+per\s+weight)\b", A)
MLX_BITS = quick(r"\bmlx[- ]?(?P<a>[2-8])[- ]?bits?\b|\b(?P<b>[2-8])[- ]?bits?[- ]?mlx\b", A)
MLX_OVERHEAD_BPW = 0.5  # fp16 scale + fp16 bias per 64 weights


def _read_bpw(low: str, found: Found) -> str:
    """ "exl2 4.65bpw", "mlx 4bit": a size in bits per weight, for a format FitBot does not model."""
    if m := MLX_BITS.search(low):
        found["bpw"] = int(m["a"] or m["b"]) + MLX_OVERHEAD_BPW
        found.setdefault("other_engine", "mlx")
        return low[: m.start()] + blank(m) + low[m.end() :]
    if (m := BPW.search(low)) and 1.0 <= (bpw := float(m["bpw"])) <= 16.0:
        found["bpw"] = bpw
        return low[: m.start()] + blank(m) + low[m.end() :]
    return low


@cache
def _provider_forms(names: tuple[str, ...]) -> dict[str, str]:
    """How a question may spell each provider, squeezed ("runpod", "vastai", "datacrunch", "verda") -> its name."""
    out: dict[str, str] = {}
    for name in names:
        low = name.lower()  # "DataCrunch (Verda)": either name; never a bare "vast" or "together" (everyday words)
        for form in (low, *re.split(r"\s*[()]\s*", low)):
            out.setdefault(_squeezed(form), name)
    out.pop("", None)
    return out


@cache
def _providers(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for the catalog's cloud providers, spaces, dots and hyphens optional ("run pod", "vast.ai")."""
    forms = sorted(_provider_forms(names), key=len, reverse=True)
    if not forms:
        return None
    spelled = "|".join(r"[\s.-]?".join(re.escape(c) for c in form) for form in forms)
    return re.compile(r"(?<![\w-])(?P<p>" + spelled + r")(?![\w-])")


def _squeezed(text: str) -> str:
    return re.sub(r"[\s.-]+", "", text)


def read_provider(low: str, found: Found, providers: tuple[str, ...]) -> str:
    """Takes out a cloud provider the catalog has offers of ("what does X cost on runpod")."""
    pattern = _providers(providers)
    if pattern is None or (m := pattern.search(low)) is None:
        return low
    found["provider"] = _provider_forms(providers)[_squeezed(m["p"])]
    return low[: m.start()] + blank(m) + low[m.end() :]
