"""KV cache, runtime overhead and usable memory: the parts of the memory breakdown besides weights.

Formulas follow what llama.cpp allocates (src/llama-kv-cache.cpp, src/llama-context.cpp at
b6000-era mainline) and what vLLM pre-allocates (vllm/worker/gpu_worker.py,
``determine_available_memory``), calibrated against the load logs in
``shared/calibration/llamacpp_memory.csv`` and ``vllm_memory.csv`` (see bench/accuracy.py).
"""

from __future__ import annotations

import math

from core.models import (
    GIB,
    MIB,
    AttentionKind,
    Engine,
    GpuSpec,
    Hardware,
    KvCacheType,
    ModelSpec,
    Workload,
)

# Bytes per cached element. q8_0/q4_0 store 32 values in 34/18 bytes (ggml-common.h block_q8_0/q4_0).
KV_BYTES_PER_ELEMENT: dict[KvCacheType, float] = {
    KvCacheType.F16: 2.0,
    KvCacheType.BF16: 2.0,
    KvCacheType.FP8: 1.0,
    KvCacheType.Q8_0: 34 / 32,
    KvCacheType.Q4_0: 18 / 32,
}

# llama.cpp pads the KV cache length to 256 cells with flash attention and to 32 without
# (llama_kv_cache_get_padding); vLLM allocates in blocks of 16 tokens.
LLAMA_CPP_CTX_PAD = 256
LLAMA_CPP_CTX_PAD_NO_FA = 32
VLLM_BLOCK_TOKENS = 16

# Driver/runtime context per device that llama.cpp does not log (CUDA context, cuBLAS workspace):
# the gap between measured and logged totals on Strix Halo (334-343 MiB) and gguf-parser's 250 MiB
# platform default.
RUNTIME_CONTEXT_BYTES = 340 * MIB

# vLLM: activations of the profiling run, CUDA graphs and non-torch allocations, per GPU.
# Measured 0.8-1.7 GiB on vllm_memory.csv (Qwen3-8B on a 4090, Qwen3-32B TP2 with 0.81 GiB graphs).
VLLM_OVERHEAD_BYTES = int(1.5 * GIB)

# Share of system RAM llama.cpp may fill with offloaded weights; the OS and page cache keep the rest.
RAM_USABLE_FRACTION = 0.85


def padded_context(context: int, workload: Workload) -> int:
    """The cache length the engine allocates for ``context`` tokens."""
    if workload.engine is Engine.VLLM:
        pad = VLLM_BLOCK_TOKENS
    else:
        pad = LLAMA_CPP_CTX_PAD if workload.flash_attention else LLAMA_CPP_CTX_PAD_NO_FA
    return math.ceil(context / pad) * pad


def kv_elements_per_token_layer(model: ModelSpec, engine: Engine) -> int:
    """Cached K+V elements for one token in one attention layer.

    GQA: n_kv_heads * (head_dim_k + head_dim_v), with the config's head_dim (never hidden/heads).
    MLA: vLLM caches the compressed latent plus the rope key (kv_lora_rank + qk_rope_head_dim);
    llama.cpp stores that as K and the latent again as V (kv_lora_rank), see its MLA cache layout.
    """
    if model.attention is AttentionKind.MLA:
        assert model.kv_lora_rank is not None
        latent = model.kv_lora_rank + (model.qk_rope_head_dim or 0)
        return latent + model.kv_lora_rank if engine is Engine.LLAMA_CPP else latent
    v_dim = model.v_head_dim or model.head_dim
    return model.n_kv_heads * (model.head_dim + v_dim)


def sliding_elements_per_token_layer(model: ModelSpec, engine: Engine) -> int:
    """Cached K+V elements for one token in one sliding-window layer: the full layers' layout unless the
    config gives the window layers their own KV heads or head sizes (``sliding_kv_heads``, MiMo's ``swa_*``)."""
    if not (model.sliding_kv_heads or model.sliding_head_dim or model.sliding_v_head_dim):
        return kv_elements_per_token_layer(model, engine)
    heads = model.sliding_kv_heads or model.n_kv_heads
    k_dim = model.sliding_head_dim or model.head_dim
    v_dim = model.sliding_v_head_dim or model.v_head_dim or k_dim
    return heads * (k_dim + v_dim)


# ``kv_cache_bytes`` per model and workload object: a device scan asks it for every device with the same
# two. id() keyed with the objects kept in the entry, as in ``core.weights``.
_KV: dict[tuple[int, int, int | None, int | None], tuple[ModelSpec, Workload, int]] = {}
_KV_ENTRIES = 4096  # a chart adds ~10; fills within the first thousand distinct questions (issue 40: RSS flat)


def kv_cache_bytes(
    model: ModelSpec, workload: Workload, context: int | None = None, concurrent: int | None = None
) -> int:
    """KV cache the engine must hold at ``context`` tokens (default: the workload's context): the
    ``reserved_sequences`` of the workload, or ``concurrent`` sequences instead (one sequence's cache
    without copying the workload). Memoised per model and workload object (``_kv_cache_bytes`` has the
    formula)."""
    key = (id(model), id(workload), context, concurrent)
    hit = _KV.get(key)
    if hit is not None and hit[0] is model and hit[1] is workload:
        return hit[2]
    if len(_KV) >= _KV_ENTRIES:
        _KV.clear()
    kv = _kv_cache_bytes(model, workload, context, concurrent)
    _KV[key] = (model, workload, kv)
    return kv


def _kv_cache_bytes(model: ModelSpec, workload: Workload, context: int | None, concurrent: int | None) -> int:
    """KV cache for all sequences at ``context`` tokens.

    Full-attention layers grow with context; sliding-window layers hold min(context, window +
    ubatch) cells (llama.cpp keeps a window plus one batch); linear-attention/SSM layers keep a
    constant recurrent state per sequence; compressed-attention layers (DeepSeek V4) keep
    ``pooled_kv_elements`` per context token.
    """
    ctx = padded_context(context if context is not None else workload.context, workload)
    per_elem = KV_BYTES_PER_ELEMENT[workload.kv_cache]
    elems = kv_elements_per_token_layer(model, workload.engine)
    full_elems = elems
    if model.global_kv_heads and model.global_head_dim:  # full layers with their own heads (Gemma 4), K and V cached
        full_elems = model.global_kv_heads * 2 * model.global_head_dim
    full = model.kv_layers * ctx * full_elems * per_elem + ctx * model.pooled_kv_elements * per_elem
    swa = 0.0
    if model.n_sliding_layers and model.sliding_window:
        window = model.sliding_window + (workload.n_ubatch if workload.engine is Engine.LLAMA_CPP else 0)
        cells = min(ctx, padded_context(window, workload))
        swa = model.n_sliding_layers * cells * sliding_elements_per_token_layer(model, workload.engine) * per_elem
    state = model.n_linear_layers * model.linear_state_bytes
    n = reserved_sequences(workload) if concurrent is None else concurrent
    return round((full + swa) * n + state * n)


def reserved_sequences(workload: Workload) -> int:
    """Sequences whose whole KV cache the engine must hold before it serves a request.

    llama.cpp: ``--parallel N`` slots share ``--ctx-size N x context``, one cache allocated up front
    (tools/server: the context is split between the slots), so N full sequences. vLLM pages its cache:
    the pool is whatever ``gpu_memory_utilization`` leaves after weights and activations, and the engine
    refuses to start only when the pool cannot hold one ``max_model_len`` sequence (vllm/v1/core/
    kv_cache_utils.py ``check_enough_kv_cache_memory``); further users share the pool or queue
    (``core.speed.estimate.batch_speed``). So one sequence, whatever the users.
    """
    return 1 if workload.engine is Engine.VLLM else workload.concurrent


def compute_buffer_bytes(model: ModelSpec, workload: Workload, context: int | None = None) -> int:
    """llama.cpp's per-device compute buffer for one ubatch.

    The graph allocator reuses memory, so the peak is the largest live set: the f32 logits of a
    ubatch (n_ubatch * vocab * 4) plus one f32 hidden-state row per token, or, without flash
    attention, the f32 attention scores (n_heads * n_ubatch * n_ctx * 4) plus the six hidden-size
    f32 tensors alive next to them (Q, K, V, attention output, residual, norm). Checked against
    Qwen3-32B (306.75 MiB logged, 306.75 computed) and Llama-3-8B at 8K without FA (560 logged,
    512 scores + 6 x 8 MiB).
    """
    ub = workload.n_ubatch
    hidden = ub * model.hidden_size * 4
    logits = ub * model.vocab_size * 4
    if workload.flash_attention:
        return logits + hidden
    ctx = padded_context(context if context is not None else workload.context, workload)
    scores = model.n_heads * ub * min(ctx, model.max_context) * 4
    return max(logits + hidden, scores + 6 * hidden)


def overhead_bytes(model: ModelSpec, hardware: Hardware, workload: Workload, context: int | None = None) -> int:
    """Runtime overhead over all devices: compute buffers, output buffer, driver context."""
    per_device, shared = overhead_parts(model, workload, context)
    return per_device * hardware.count + shared


def overhead_parts(model: ModelSpec, workload: Workload, context: int | None = None) -> tuple[int, int]:
    """(overhead each device adds, overhead paid once): ``overhead_bytes`` for any device count, so
    a device scan computes it once."""
    if workload.engine is Engine.VLLM:
        return VLLM_OVERHEAD_BYTES, 0
    per_device = compute_buffer_bytes(model, workload, context) + RUNTIME_CONTEXT_BYTES
    return per_device, model.vocab_size * 4 * workload.concurrent


# ``context_bytes`` per model and workload object: the memory parts besides the weights, which a device scan
# needs for every device (id() keyed with the objects kept in the entry, as ``_KV``).
_CONTEXT: dict[tuple[int, int, int | None], tuple[ModelSpec, Workload, tuple[int, int, int]]] = {}


def context_bytes(model: ModelSpec, workload: Workload, context: int | None = None) -> tuple[int, int, int]:
    """(KV cache, overhead each device adds, overhead paid once) at ``context`` (default: the workload's):
    ``kv_cache_bytes`` and ``overhead_parts`` in one memoised look-up, the same on every device."""
    key = (id(model), id(workload), context)
    hit = _CONTEXT.get(key)
    if hit is not None and hit[0] is model and hit[1] is workload:
        return hit[2]
    if len(_CONTEXT) >= _KV_ENTRIES:
        _CONTEXT.clear()
    per_device, shared = overhead_parts(model, workload, context)
    parts = (kv_cache_bytes(model, workload, context), per_device, shared)
    _CONTEXT[key] = (model, workload, parts)
    return parts


def unified_fraction(gpu: GpuSpec) -> float:
    """Share of unified memory the GPU may use by default.

    macOS wires at most about 2/3 of RAM for the GPU on machines up to 36 GB and 3/4 above
    (raisable with ``sudo sysctl iogpu.wired_limit_mb=...``); Linux APUs (Strix Halo, DGX Spark)
    leave the OS about 15 %.
    """
    if gpu.category == "apple":
        return 2 / 3 if gpu.memory_bytes <= 36 * GIB else 0.75
    return 0.85


def usable_bytes(hardware: Hardware, workload: Workload) -> int:
    """Memory the runtime may fill, over all devices."""
    return usable_device_bytes(hardware.gpu, workload, hardware.unified_gpu_fraction) * hardware.count


def usable_device_bytes(gpu: GpuSpec, workload: Workload, unified_gpu_fraction: float | None = None) -> int:
    """Memory the runtime may fill on one device (``usable_bytes`` per device, without a ``Hardware``)."""
    per_device = gpu.memory_bytes
    if gpu.unified_memory:
        per_device = round(per_device * (unified_gpu_fraction or unified_fraction(gpu)))
    if workload.engine is Engine.VLLM:
        per_device = round(per_device * workload.gpu_memory_utilization)
    return per_device


def usable_ram_bytes(hardware: Hardware) -> int:
    """System RAM available for offloaded weights (0 on unified memory: it is the same pool)."""
    if hardware.gpu.unified_memory:
        return 0
    return round(hardware.system_ram_bytes * RAM_USABLE_FRACTION)
