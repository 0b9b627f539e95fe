"""Reads a pasted load or out-of-memory log (llama.cpp, vLLM, Ollama) into facts and settings.

Only lines of known shapes are read (each pattern below quotes the line it reads); everything else
is ignored, so a log in any state of truncation gives what it has. The settings it implies (model
file, quant, context, layers on the GPU, devices) become ``LaunchFlags`` so a log is diagnosed like
the command that produced it. Line shapes: llama.cpp ``src/llama-model-loader.cpp``,
``src/llama-context.cpp``, ``ggml/src/ggml-cuda`` at b6000-b7000 era mainline; vLLM
``vllm/v1/core/kv_cache_utils.py`` and ``torch.OutOfMemoryError``; Ollama ``llm/server.go``.
Recorded examples of every shape, each with the issue thread it was copied from:
``tests/data/pasted_logs.toml``.

``failed_part`` is what the failed allocation was for, as the next line says: the KV cache
("failed to allocate buffer for kv cache"), the compute buffers ("failed to allocate compute buffers")
or the weights ("unable to allocate ... buffer" while loading the model).
"""

from __future__ import annotations

import re
from typing import Literal

from core.diagnose.flags import MAX_PASTE_CHARS, LaunchFlags, quant_of
from core.models import GIB, MIB, Frozen

MAX_LOG_LINES = 400

# "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes"
_DEVICE = re.compile(r"^\s*Device (\d+): ([^,]{2,80}), (?:compute capability|gfx)", re.M)
# "using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free"
_USING = re.compile(r"using device (?:CUDA|ROCm|Vulkan|Metal|SYCL)(\d+) \(([^)]{2,80})\) - (\d+) MiB free")
# "from /models/Qwen3-30B-A3B-Q4_K_M.gguf (version GGUF V3 (latest))"
_FILE = re.compile(r"tensors from (\S{1,300}\.gguf)")
# "general.name str              = Qwen3 30B A3B"
_NAME = re.compile(r"general\.name\s+str\s+=\s+(.{1,100})$", re.M)
# "print_info: file type   = Q4_K - Medium"
_FTYPE = re.compile(r"file type\s+=\s+([A-Z0-9_]+)(?: - (Small|Medium|Large|Extra Small))?", re.I)
_FTYPE_SUFFIX = {"small": "_S", "medium": "_M", "large": "_L", "extra small": "_XS"}
# "print_info: n_layer          = 48", "print_info: n_ctx_train      = 40960"
_NLAYER = re.compile(r"\bn_layer\s+=\s+(\d+)")
_NCTX = re.compile(r"\bn_ctx\s+=\s+(\d+)")
# "load_tensors: offloaded 20/49 layers to GPU"
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
# "CUDA0 model buffer size = 17366.56 MiB", "CUDA0 KV buffer size = 3840.00 MiB", "... compute buffer size = ..."
_BUFFER = re.compile(
    r"(CUDA|ROCm|Vulkan|Metal|CPU)(\d*)(?:_Mapped|_Host)?\s+(model|KV|compute) buffer size =\s+([\d.]+) MiB"
)
# "allocating 3840.00 MiB on device 0: cudaMalloc failed: out of memory"
_CUDA_FAIL = re.compile(r"allocating ([\d.]+) MiB on device (\d+): \w+ failed: out of memory")
# "failed to allocate CUDA0 buffer of size 4026531840"
_ALLOC_FAIL = re.compile(r"failed to allocate (CUDA|ROCm|Vulkan|Metal|CPU)(\d*) buffer of size (\d+)")
# vLLM: "model='Qwen/Qwen3-8B'", "max_seq_len=40960", "tensor_parallel_size=2", "quantization=awq"
_V_MODEL = re.compile(r"\bmodel='([^']{1,200})'")
_V_MAXLEN = re.compile(r"\bmax_seq_len=(\d+)")
_V_TP = re.compile(r"\btensor_parallel_size=(\d+)")
_V_QUANT = re.compile(r"\bquantization=(\w+)")
# "(16.00 GiB KV cache is needed, which is larger than the available KV cache memory (4.61 GiB)"
_V_KV_NEED = re.compile(
    r"\(([\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory \(([\d.]+) GiB\)"
)
_V_EST_LEN = re.compile(r"estimated maximum model length is (\d+)")
# "is larger than the maximum number of tokens that can be stored in KV cache (45632)"
_V_KV_TOKENS = re.compile(r"tokens that can be stored in KV cache \((\d+)\)")
# "GPU 0 has a total capacity of 23.55 GiB of which 1.02 GiB is free"
_V_CAPACITY = re.compile(r"GPU (\d+) has a total capacity of ([\d.]+) GiB of which ([\d.]+) (GiB|MiB|KiB) is free")
# torch: "CUDA out of memory. Tried to allocate 270.00 MiB." and "this process has 21.80 GiB memory in use"
_T_TRIED = re.compile(r"Tried to allocate ([\d.]+) (GiB|MiB|KiB)")
_T_IN_USE = re.compile(r"(?:this process|Process \d+) has ([\d.]+) (GiB|MiB) memory in use")
# vLLM: "The model's max seq len (4096) is larger than ..."
_V_MAX_SEQ = re.compile(r"max seq len \((\d+)\)")
_V_NO_BLOCKS = re.compile(r"No available memory for the cache blocks")
# Ollama: 'msg="offload to cuda" layers.requested=-1 layers.model=49 layers.offload=30 ... memory.available="[23.1 GiB]"'
_O_OFFLOAD = re.compile(r"layers\.model=(\d+) layers\.offload=(\d+)")
_O_AVAILABLE = re.compile(r'memory\.available="\[([^\]]{1,200})\]"')
_O_REQUIRED = re.compile(r'memory\.required\.(full|partial|kv)="([\d.]+) (GiB|MiB|KiB|B)"')
# 'msg="system memory" total="30.9 GiB" free="25.4 GiB"'
_O_SYSTEM = re.compile(r'msg="system memory" total="([\d.]+) (GiB|MiB)" free="([\d.]+) (GiB|MiB)"')
# llama.cpp: "KV self size  = 5120.00 MiB", what a failed allocation was for
_KV_SELF = re.compile(r"KV self size\s*=\s*([\d.]+) MiB")
_FAILED_PART: tuple[tuple[Literal["kv", "compute", "model"], re.Pattern[str]], ...] = (
    ("kv", re.compile(r"failed to allocate buffer for kv cache|llama_kv_cache_init\(\) failed", re.I)),
    ("compute", re.compile(r"failed to allocate compute buffers", re.I)),
    ("model", re.compile(r"unable to allocate (?:\w+ )?(?:backend )?buffer|error loading model", re.I)),
)
_UNITS = {"GiB": GIB, "MiB": MIB, "KiB": 1024, "B": 1}
_TORCH_OOM = re.compile(r"(?:torch\.(?:cuda\.)?OutOfMemoryError|CUDA out of memory)")
_O_SYSMEM = re.compile(r"model requires more system memory \(([\d.]+) GiB\) than is available \(([\d.]+) GiB\)")
# any Ollama server log line: 'time=... level=INFO source=server.go:438 msg="starting llama server"'
_O_LINE = re.compile(r"level=(?:INFO|WARN|ERROR|DEBUG) source=[\w./-]+\.go:\d+")
_O_CTX = re.compile(r"--ctx-size[\" ,]+(\d+)")
_OOM = re.compile(
    r"out of memory|OutOfMemoryError|failed to allocate|requires more system memory|No available memory", re.I
)


class DeviceBuffers(Frozen):
    device: str  # "CUDA0", "CPU"
    model_mib: float = 0.0
    kv_mib: float = 0.0
    compute_mib: float = 0.0


class LogFacts(Frozen):
    """What a log says; empty fields were not in the excerpt."""

    engine: Literal["llama.cpp", "vllm", "ollama", "pytorch"]
    device_names: tuple[str, ...] = ()  # by index
    device_free_mib: tuple[int, ...] = ()
    device_total_gib: float | None = None  # vLLM's "total capacity" of GPU 0
    model_file: str | None = None
    model_name: str | None = None
    quant: str | None = None
    n_layer: int | None = None
    context: int | None = None
    layers_offloaded: tuple[int, int] | None = None
    buffers: tuple[DeviceBuffers, ...] = ()
    failed_device: str | None = None  # "CUDA0"
    failed_bytes: int | None = None
    out_of_memory: bool = False
    kv_needed_bytes: int | None = None  # vLLM
    kv_available_bytes: int | None = None
    kv_tokens: int | None = None
    estimated_max_len: int | None = None
    tensor_parallel: int | None = None
    no_cache_blocks: bool = False
    system_ram_needed_bytes: int | None = None  # Ollama
    system_ram_available_bytes: int | None = None
    failed_part: Literal["kv", "compute", "model"] | None = None  # llama.cpp: what the failed buffer was for
    kv_total_bytes: int | None = None  # llama.cpp "KV self size"
    torch_device: int | None = None  # torch.OutOfMemoryError: the GPU, what it tried, what was free
    tried_bytes: int | None = None
    device_free_bytes: int | None = None
    in_use_bytes: int | None = None
    max_seq_len: int | None = None  # vLLM "The model's max seq len (N)"
    gpu_available_bytes: tuple[int, ...] = ()  # Ollama memory.available, per GPU
    required_full_bytes: int | None = None  # Ollama memory.required.full / .partial / .kv
    required_partial_bytes: int | None = None
    required_kv_bytes: int | None = None
    system_total_bytes: int | None = None  # Ollama "system memory" total / free
    system_free_bytes: int | None = None


def looks_like_log(text: str) -> bool:
    """Whether ``text`` carries any line this module reads."""
    probes = (_DEVICE, _FILE, _FTYPE, _OFFLOADED, _BUFFER, _CUDA_FAIL, _ALLOC_FAIL, _V_KV_NEED, _V_CAPACITY)
    more = (_V_KV_TOKENS, _O_OFFLOAD, _O_SYSMEM, _V_NO_BLOCKS, _TORCH_OOM, _KV_SELF, _FAILED_PART[0][1], _O_LINE)
    return any(p.search(text) for p in (*probes, *more))


def read_log(text: str) -> LogFacts:
    """The facts of a log excerpt (bounded: the first ``MAX_PASTE_CHARS`` characters, ``MAX_LOG_LINES`` lines)."""
    text = "\n".join(text[:MAX_PASTE_CHARS].splitlines()[:MAX_LOG_LINES])
    vllm = bool(_V_MODEL.search(text) or _V_KV_NEED.search(text) or _V_KV_TOKENS.search(text) or "vllm" in text.lower())
    vllm = vllm or bool(_V_NO_BLOCKS.search(text))
    ollama = bool(_O_OFFLOAD.search(text) or _O_SYSMEM.search(text) or "ollama" in text.lower())
    torch = bool(_TORCH_OOM.search(text) or _V_CAPACITY.search(text))
    engine: Literal["llama.cpp", "vllm", "ollama", "pytorch"] = (
        "vllm" if vllm else "ollama" if ollama else "pytorch" if torch else "llama.cpp"
    )
    names: dict[int, str] = {int(i): n.strip() for i, n in _DEVICE.findall(text)}
    free: dict[int, int] = {}
    for i, n, mib in _USING.findall(text):
        names.setdefault(int(i), n.strip())
        free[int(i)] = int(mib)
    buffers: dict[str, dict[str, float]] = {}
    for kind, idx, what, mib in _BUFFER.findall(text):
        dev = f"{kind}{idx}"
        slot = buffers.setdefault(dev, {})
        slot[what.lower()] = slot.get(what.lower(), 0.0) + float(mib)
    failed_device, failed_bytes = None, None
    if m := _CUDA_FAIL.search(text):
        failed_device, failed_bytes = f"CUDA{m.group(2)}", round(float(m.group(1)) * MIB)
    elif m := _ALLOC_FAIL.search(text):
        failed_device, failed_bytes = f"{m.group(1)}{m.group(2)}", int(m.group(3))
    ftype = _FTYPE.search(text)
    quant = None
    if ftype:
        base = ftype.group(1).upper()
        quant = base + _FTYPE_SUFFIX.get((ftype.group(2) or "").lower(), "")
    model_file = m.group(1) if (m := _FILE.search(text)) else None
    model_name = m.group(1).strip() if (m := _NAME.search(text)) else None
    if engine == "vllm" and (m := _V_MODEL.search(text)):
        model_name = m.group(1)
        quant = (q.group(1).upper() if (q := _V_QUANT.search(text)) and q.group(1) != "None" else None) or quant_of(
            model_name
        )
    offloaded = (int(m.group(1)), int(m.group(2))) if (m := _OFFLOADED.search(text)) else None
    if engine == "ollama" and (m := _O_OFFLOAD.search(text)):
        offloaded = (int(m.group(2)), int(m.group(1)))
    context = _first_int(_NCTX, text) or _first_int(_V_MAXLEN, text) or _first_int(_O_CTX, text)
    kv_need = _V_KV_NEED.search(text)
    cap = _V_CAPACITY.search(text)
    sysmem = _O_SYSMEM.search(text)
    if cap and not names:
        names[int(cap.group(1))] = ""
    required = {k: _bytes(v, u) for k, v, u in _O_REQUIRED.findall(text)}
    available = m.group(1) if (m := _O_AVAILABLE.search(text)) else ""
    system = _O_SYSTEM.search(text)
    tried, in_use = _T_TRIED.search(text), _T_IN_USE.search(text)
    kv_self = _KV_SELF.search(text)
    return LogFacts(
        engine=engine,
        device_names=tuple(names[i] for i in sorted(names)),
        device_free_mib=tuple(free[i] for i in sorted(free)),
        device_total_gib=float(cap.group(2)) if cap else None,
        model_file=model_file,
        model_name=model_name,
        quant=quant or (quant_of(model_file) if model_file else None),
        n_layer=_first_int(_NLAYER, text),
        context=context,
        layers_offloaded=offloaded,
        buffers=tuple(
            DeviceBuffers(
                device=d, model_mib=v.get("model", 0.0), kv_mib=v.get("kv", 0.0), compute_mib=v.get("compute", 0.0)
            )
            for d, v in buffers.items()
        ),
        failed_device=failed_device,
        failed_bytes=failed_bytes,
        out_of_memory=bool(_OOM.search(text)),
        kv_needed_bytes=round(float(kv_need.group(1)) * GIB) if kv_need else None,
        kv_available_bytes=round(float(kv_need.group(2)) * GIB) if kv_need else None,
        kv_tokens=_first_int(_V_KV_TOKENS, text),
        estimated_max_len=_first_int(_V_EST_LEN, text),
        tensor_parallel=_first_int(_V_TP, text),
        no_cache_blocks=bool(_V_NO_BLOCKS.search(text)),
        system_ram_needed_bytes=round(float(sysmem.group(1)) * GIB) if sysmem else None,
        system_ram_available_bytes=round(float(sysmem.group(2)) * GIB) if sysmem else None,
        failed_part=next((part for part, p in _FAILED_PART if p.search(text)), None),
        kv_total_bytes=round(float(kv_self.group(1)) * MIB) if kv_self else None,
        torch_device=int(cap.group(1)) if cap and torch else None,
        tried_bytes=_bytes(tried.group(1), tried.group(2)) if tried else None,
        device_free_bytes=_bytes(cap.group(3), cap.group(4)) if cap else None,
        in_use_bytes=_bytes(in_use.group(1), in_use.group(2)) if in_use else None,
        max_seq_len=_first_int(_V_MAX_SEQ, text),
        gpu_available_bytes=tuple(_bytes(v, u) for v, u in re.findall(r"([\d.]+) (GiB|MiB)", available)),
        required_full_bytes=required.get("full"),
        required_partial_bytes=required.get("partial"),
        required_kv_bytes=required.get("kv"),
        system_total_bytes=_bytes(system.group(1), system.group(2)) if system else None,
        system_free_bytes=_bytes(system.group(3), system.group(4)) if system else None,
    )


def _bytes(value: str, unit: str) -> int:
    return round(float(value) * _UNITS[unit])


def _first_int(pattern: re.Pattern[str], text: str) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def log_settings(facts: LogFacts) -> LaunchFlags | None:
    """The command a log implies (model, quant, context, layers on the GPU); None without a model."""
    ref = facts.model_file or facts.model_name
    if ref is None or facts.engine == "pytorch":
        return None
    ngl = None
    if facts.layers_offloaded is not None:
        done, total = facts.layers_offloaded
        ngl = 999 if done >= total else done
    if facts.engine == "vllm":
        return LaunchFlags(
            engine="vllm",
            program="vllm serve",
            argv=("vllm", "serve", ref),
            model_ref=ref,
            quant=facts.quant,
            context=facts.context,
            tensor_parallel=facts.tensor_parallel,
        )
    return LaunchFlags(
        engine=facts.engine,
        program="llama-server" if facts.engine == "llama.cpp" else "ollama",
        argv=("llama-server", "-m", ref) if facts.engine == "llama.cpp" else ("ollama", "run", ref),
        model_ref=ref,
        quant=facts.quant,
        context=facts.context,
        gpu_layers=ngl,
        fit=False if facts.engine == "llama.cpp" else None,  # the log shows what was placed; nothing left to fit
    )


__all__ = ["DeviceBuffers", "LogFacts", "log_settings", "looks_like_log", "read_log"]
