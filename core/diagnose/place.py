"""Where llama.cpp puts each tensor for given flags: per GPU and in system RAM, and the speed of it.

The rules are llama.cpp's (``src/llama-model.cpp``, ``load_tensors``; ``common/arg.cpp``):

* ``-ngl N`` offloads the *last* N of the ``n_layer + 1`` layers (the output head counts as the
  last one, so ``-ngl 999`` moves it too); the others run on the CPU with their KV cache.
* Offloaded layers are shared out by ``-ts`` proportions (default: equal for identical GPUs), layer
  by layer in order, so the output head lands on the last GPU.
* ``--n-cpu-moe N`` keeps the routed experts of the first N layers in RAM, ``--cpu-moe`` all of
  them; ``-ot PATTERN=BUFFER`` moves every tensor whose name matches (first pattern wins) to that
  buffer, tested here against llama.cpp's tensor names (``blk.7.ffn_up_exps.weight``, ...).
* Every GPU holds a compute buffer and the driver context; ``-nkvo`` keeps the KV cache in RAM;
  the token embedding always stays in RAM.

Byte sizes per tensor group come from ``core.weights`` (measured file size when known) and
``core.memory`` (KV cache, compute buffer), so the rows add up to the same totals the fit card shows.
"""

from __future__ import annotations

import math
import re

from core import memory
from core.diagnose.tensor_patterns import Matcher, compile_overrides
from core.fit import Offload, Placement, Verdict, breakdown, comfortable_reserve
from core.models import Engine, Frozen, GpuSpec, Hardware, KvCacheType, ModelSpec, QuantSize, QuantSpec, Workload
from core.speed.estimate import SpeedEstimate, estimate_speed
from core.weights import attention_params, param_groups, weights

# Bytes per cached element of each llama.cpp cache type (ggml-common.h block sizes: 32 values per block).
KV_TYPE_BYTES: dict[str, float] = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
    "iq4_nl": 18 / 32,
}
CORE_KV = {"f16": KvCacheType.F16, "bf16": KvCacheType.BF16, "q8_0": KvCacheType.Q8_0, "q4_0": KvCacheType.Q4_0}
ALL = 999
_EXPERT_TENSORS = ("ffn_up_exps", "ffn_gate_exps", "ffn_down_exps")
_FFN_TENSORS = ("ffn_up", "ffn_gate", "ffn_down")
_ATTN_TENSORS = ("attn_q", "attn_k", "attn_v", "attn_output")


class Settings(Frozen):
    """llama.cpp settings after defaults: everything the placement depends on."""

    context: int
    gpu_layers: int  # 999 = all, incl. the output head
    n_cpu_moe: int = 0
    cpu_moe_all: bool = False
    overrides: tuple[tuple[str, str], ...] = ()
    tensor_split: tuple[float, ...] = ()
    cache_k: str = "f16"
    cache_v: str = "f16"
    flash_attention: bool = True
    ubatch: int = 512
    no_kv_offload: bool = False


class DeviceLoad(Frozen):
    """What one device holds; ``name`` is "GPU 0".. or "RAM"."""

    name: str
    weights_bytes: int
    kv_bytes: int
    overhead_bytes: int
    usable_bytes: int
    layers: int = 0  # repeating layers placed here (GPU rows)

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.overhead_bytes

    @property
    def spare_bytes(self) -> int:
        return self.usable_bytes - self.total_bytes


class Layout(Frozen):
    devices: tuple[DeviceLoad, ...]  # the GPUs, then RAM
    verdict: Verdict  # fits / tight (all in GPU), offload (weights in RAM beyond the embedding), no_fit
    over: tuple[str, ...] = ()  # devices that overflow
    tight: bool = False  # a GPU keeps less than the comfortable reserve (5 %, at least 0.5 GiB)
    speed: SpeedEstimate | None = None
    experts_in_ram_layers: float = 0.0  # layer-equivalents of routed experts in RAM
    bad_patterns: tuple[str, ...] = ()  # -ot patterns refused (not linear-time, invalid, too long)


def kv_bytes(model: ModelSpec, s: Settings) -> int:
    """KV cache for ``s.context`` tokens with separate K and V cache types."""
    work = Workload(context=s.context, kv_cache=KvCacheType.F16, flash_attention=s.flash_attention, n_ubatch=s.ubatch)
    f16 = memory.kv_cache_bytes(model, work)
    if model.kv_lora_rank:  # MLA in llama.cpp: K = latent + rope, V = latent
        k_share = (model.kv_lora_rank + (model.qk_rope_head_dim or 0)) / (
            2 * model.kv_lora_rank + (model.qk_rope_head_dim or 0)
        )
    else:
        v_dim = model.v_head_dim or model.head_dim
        k_share = model.head_dim / (model.head_dim + v_dim)
    kb, vb = KV_TYPE_BYTES.get(s.cache_k, 2.0), KV_TYPE_BYTES.get(s.cache_v, 2.0)
    return round(f16 * (k_share * kb + (1 - k_share) * vb) / 2.0)


def _target(name: str, rules: list[tuple[Matcher, str]]) -> str | None:
    for matches, buffer in rules:
        if matches(name):
            return buffer
    return None


def _gpu_index(buffer: str, count: int) -> int | None:
    """ "CUDA1" -> 1; "CPU" -> None (RAM); an index beyond the GPUs -> None."""
    m = re.search(r"(\d+)$", buffer)
    if buffer.upper().startswith("CPU") or m is None:
        return None
    idx = int(m.group(1))
    return idx if idx < count else None


def _shares(split: tuple[float, ...], count: int) -> list[float]:
    raw = list(split[:count]) + [0.0] * max(0, count - len(split)) if split else [1.0] * count
    total = sum(raw) or 1.0
    return [r / total for r in raw]


def layout(
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram_bytes: int,
    s: Settings,
    ram_bandwidth: float | None = None,
) -> Layout:
    """Per-device bytes for these settings, the verdict, and the decode/prefill estimate of it."""
    w = weights(model, quant, measured)
    layers = model.n_layers
    groups = param_groups(model)
    attn_share = min(attention_params(model), groups.dense) / groups.dense if groups.dense else 0.0
    dense_l = w.dense_bytes / layers
    experts_l = w.experts_bytes / layers
    kv_l = kv_bytes(model, s) / layers
    rules, bad = compile_overrides(s.overrides)
    offloaded = min(s.gpu_layers, layers + 1)
    first_gpu = layers + 1 - offloaded  # layer index (0..layers, layers = output head) of the first GPU layer
    shares = _shares(s.tensor_split, count)
    cum = [sum(shares[: i + 1]) for i in range(count)]
    gpu_w = [0.0] * count
    gpu_kv = [0.0] * count
    gpu_layers = [0] * count
    ram_w = float(w.embed_bytes)
    ram_kv = 0.0
    experts_ram = 0.0

    def device_of(index: int) -> int | None:
        if index < first_gpu:
            return None
        frac = (index - first_gpu) / offloaded
        return next((i for i, c in enumerate(cum) if frac < c - 1e-9), count - 1)

    for i in range(layers):
        home = device_of(i)
        parts = {
            "attn": (dense_l * attn_share, _ATTN_TENSORS),
            "ffn": (dense_l * (1 - attn_share), _FFN_TENSORS),
            "exps": (experts_l, _EXPERT_TENSORS),
        }
        for kind, (size, names) in parts.items():
            per_tensor = size / len(names)
            for tensor in names:
                dest = home
                if kind == "exps" and home is not None and (s.cpu_moe_all or i < s.n_cpu_moe):
                    dest = None
                if rules and (buffer := _target(f"blk.{i}.{tensor}.weight", rules)) is not None:
                    dest = _gpu_index(buffer, count)
                if dest is None:
                    ram_w += per_tensor
                    experts_ram += per_tensor if kind == "exps" else 0.0
                else:
                    gpu_w[dest] += per_tensor
        if home is None or s.no_kv_offload:
            ram_kv += kv_l
        else:
            gpu_kv[home] += kv_l
            gpu_layers[home] += 1
    head = device_of(layers)
    if head is None:
        ram_w += w.output_bytes
    else:
        gpu_w[head] += w.output_bytes
    work = Workload(context=s.context, flash_attention=s.flash_attention, n_ubatch=s.ubatch)
    per_gpu_overhead = memory.compute_buffer_bytes(model, work) + memory.RUNTIME_CONTEXT_BYTES
    used = [i for i in range(count) if gpu_w[i] > 0 or gpu_kv[i] > 0] or [0]
    per_device = gpu.memory_bytes
    if gpu.unified_memory:
        per_device = round(per_device * memory.unified_fraction(gpu))
    devices = [
        DeviceLoad(
            name=f"GPU {i}",
            weights_bytes=round(gpu_w[i]),
            kv_bytes=round(gpu_kv[i]),
            overhead_bytes=per_gpu_overhead + (model.vocab_size * 4 if i == used[0] else 0) if i in used else 0,
            usable_bytes=per_device,
            layers=gpu_layers[i],
        )
        for i in range(count)
    ]
    ram_usable = round(ram_bytes * memory.RAM_USABLE_FRACTION) if not gpu.unified_memory else 0
    ram = DeviceLoad(name="RAM", weights_bytes=round(ram_w), kv_bytes=round(ram_kv), overhead_bytes=0, usable_bytes=0)
    if gpu.unified_memory:  # one pool: what the CPU holds comes out of the same memory
        devices[0] = devices[0].model_copy(
            update={"weights_bytes": devices[0].weights_bytes + round(ram_w - w.embed_bytes)}
        )
        ram = ram.model_copy(update={"weights_bytes": w.embed_bytes, "kv_bytes": 0})
    else:
        ram = ram.model_copy(update={"usable_bytes": ram_usable})
    over = [d.name for d in devices if d.spare_bytes < 0]
    if not gpu.unified_memory and ram.weights_bytes + ram.kv_bytes > ram_usable:
        over.append("RAM")
    in_ram = ram.weights_bytes + ram.kv_bytes - w.embed_bytes > 0 and not gpu.unified_memory
    tight = any(d.spare_bytes < comfortable_reserve(d.usable_bytes, 1) for d in devices if d.total_bytes)
    verdict = Verdict.NO_FIT if over else Verdict.OFFLOAD if in_ram else Verdict.TIGHT if tight else Verdict.FITS
    result = Layout(
        devices=(*devices, ram),
        verdict=verdict,
        over=tuple(over),
        tight=tight,
        experts_in_ram_layers=experts_ram / experts_l if experts_l else 0.0,
        bad_patterns=tuple(bad),
    )
    if over:
        return result
    speed = _speed(model, quant, measured, gpu, count, ram_bytes, s, result, offloaded, ram_bandwidth)
    return result.model_copy(update={"speed": speed})


def _speed(
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram_bytes: int,
    s: Settings,
    lay: Layout,
    offloaded: int,
    ram_bandwidth: float | None,
) -> SpeedEstimate:
    """The estimator's decode/prefill for this placement (layer or expert offload, as the flags say)."""
    kv = CORE_KV.get(s.cache_k, KvCacheType.Q8_0 if KV_TYPE_BYTES.get(s.cache_k, 2) < 2 else KvCacheType.F16)
    work = Workload(context=s.context, kv_cache=kv, engine=Engine.LLAMA_CPP, flash_attention=s.flash_attention)
    hw = Hardware(gpu=gpu, count=count, system_ram_bytes=ram_bytes, ram_bandwidth_bytes_per_s=ram_bandwidth)
    mem, w = breakdown(model, quant, hw, work, measured)
    layers = model.n_layers
    on_gpu = min(offloaded, layers)
    gpu_bytes = sum(d.total_bytes for d in lay.devices if d.name != "RAM")
    ram = lay.devices[-1].weights_bytes + lay.devices[-1].kv_bytes
    if on_gpu < layers:
        off = Offload(
            mode="layers",
            layers_on_gpu=on_gpu,
            layers_total=layers,
            gpu_bytes=gpu_bytes,
            bytes_in_ram=ram,
            ram_usable_bytes=lay.devices[-1].usable_bytes,
            fits_ram=True,
        )
    elif lay.experts_in_ram_layers > 0:
        off = Offload(
            mode="experts",
            layers_on_gpu=layers,
            layers_total=layers,
            cpu_moe_layers=min(layers, math.ceil(lay.experts_in_ram_layers - 1e-6)),
            gpu_bytes=gpu_bytes,
            bytes_in_ram=ram,
            ram_usable_bytes=lay.devices[-1].usable_bytes,
            fits_ram=True,
        )
    else:
        off = Offload(
            mode="none",
            layers_on_gpu=layers,
            layers_total=layers,
            gpu_bytes=gpu_bytes,
            bytes_in_ram=ram,
            ram_usable_bytes=lay.devices[-1].usable_bytes,
            fits_ram=True,
        )
    placement = Placement(memory=mem, offload=off, verdict=lay.verdict, weights=w)
    return estimate_speed(model, w, placement, hw, work, quant.id)


__all__ = ["ALL", "KV_TYPE_BYTES", "DeviceLoad", "Layout", "Settings", "kv_bytes", "layout"]
