"""Frozen pydantic inputs of the estimator: models, devices, quants, workloads.

Every quantity is in base units and says so in its name: ``*_bytes`` (bytes),
``*_bytes_per_s`` (bytes/s), ``*_tflops`` (10^12 FLOP/s), ``*_usd`` (US dollars),
``*_watts``. Locale formatting happens only in ``bot/render`` and ``locales/``.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from collections.abc import Iterator
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

GIB = 1 << 30
MIB = 1 << 20


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Provenance(Frozen):
    """Where a catalog fact came from; every row carries one."""

    source: str
    as_of: str  # ISO date (YYYY-MM-DD or YYYY-MM) the fact was read
    unverified: tuple[str, ...] = ()  # field names that could not be checked


Lang = Literal["de", "en"]  # the two languages FitBot answers in (locales/ holds their words)


class Backend(StrEnum):
    CUDA = "cuda"
    ROCM = "rocm"
    METAL = "metal"
    VULKAN = "vulkan"
    SYCL = "sycl"
    CPU = "cpu"
    OTHER = "other"  # CANN, Gaudi, Chinese accelerators: no llama.cpp calibration


# Names a user gives a backend: HIP is ROCm's API; RADV and AMDVLK are AMD's Vulkan drivers; oneAPI is SYCL's.
BACKEND_NAMES: dict[str, Backend] = {
    "cuda": Backend.CUDA,
    "rocm": Backend.ROCM,
    "hip": Backend.ROCM,
    "vulkan": Backend.VULKAN,
    "vk": Backend.VULKAN,
    "radv": Backend.VULKAN,
    "amdvlk": Backend.VULKAN,
    "sycl": Backend.SYCL,
    "oneapi": Backend.SYCL,
    "metal": Backend.METAL,
    "cpu": Backend.CPU,
}


class Engine(StrEnum):
    LLAMA_CPP = "llama.cpp"
    VLLM = "vllm"

    @property
    def loads_safetensors(self) -> bool:
        """The engine loads the publisher's safetensors checkpoint (vLLM), not a GGUF file (llama.cpp, and
        Ollama and LM Studio, which run it): a quant's ``QuantSpec.safetensors`` bits apply to it."""
        return self is not Engine.LLAMA_CPP


class KvCacheType(StrEnum):
    F16 = "f16"
    BF16 = "bf16"
    FP8 = "fp8"
    Q8_0 = "q8_0"
    Q4_0 = "q4_0"


class AttentionKind(StrEnum):
    GQA = "gqa"  # MHA, GQA and MQA: K and V heads of head_dim each
    MLA = "mla"  # DeepSeek-style latent: kv_lora_rank + qk_rope_head_dim per token and layer


class GpuSpec(Frozen):
    """One accelerator (or one Apple/APU machine: its unified memory is the pool)."""

    id: str
    name: str
    short_name: str
    vendor: str
    category: Literal["consumer", "workstation", "datacenter", "apple", "apu", "accelerator"]
    memory_bytes: int = Field(gt=0)
    bandwidth_bytes_per_s: float = Field(gt=0)
    fp16_tflops: float | None = Field(default=None, gt=0)  # dense tensor rate a GEMM gets
    tdp_watts: float | None = None
    unified_memory: bool = False
    backend: Backend
    # chip generation ("ampere", "ada", "rdna3", "apple-m4", ...): speed constants and
    # leave-one-family-out validation group devices by it
    arch: str = ""
    interconnect: Literal["nvlink", "xgmi", "pcie", "none"] = "pcie"
    launch_year: int | None = None
    price_usd: float | None = None
    price_note: str = ""
    aliases: tuple[str, ...] = ()
    # one chip (same bandwidth and compute) sold with several memory sizes shares ``chip``;
    # the fact loader sets it to the row id when a device has no siblings
    chip: str = ""
    form_factor: Literal["", "desktop", "laptop", "workstation", "datacenter", "mac", "apu", "embedded"] = ""
    gpu_cores: int | None = Field(default=None, gt=0)  # Apple GPU core count (bandwidth depends on it)
    street_price_new_usd: float | None = Field(default=None, gt=0)
    street_price_used_usd: float | None = Field(default=None, gt=0)
    street_price_as_of: str = ""  # ISO date of the street prices
    provenance: Provenance


class ModelSpec(Frozen):
    """Architecture numbers the memory and speed models need; mirrors a HF config.json."""

    id: str
    name: str
    family: str
    hf_repo: str | None = None
    gguf_repo: str | None = None
    architecture: str = ""
    total_params: int = Field(gt=0)
    active_params: int = Field(gt=0)
    n_layers: int = Field(gt=0, le=1000)
    hidden_size: int = Field(gt=0, le=1 << 17)
    n_heads: int = Field(gt=0, le=4096)
    n_kv_heads: int = Field(ge=0, le=4096)
    head_dim: int = Field(gt=0, le=4096)  # K (and V unless v_head_dim) head size
    v_head_dim: int | None = Field(default=None, gt=0, le=4096)
    # full-attention layers with their own KV layout (Gemma 4: 2 global KV heads of 512 next to 8 x 256 sliding ones)
    global_kv_heads: int | None = Field(default=None, gt=0, le=4096)
    global_head_dim: int | None = Field(default=None, gt=0, le=4096)
    # sliding-window layers with their own KV layout (MiMo-V2-Flash: 8 KV heads there, 4 on its full layers)
    sliding_kv_heads: int | None = Field(default=None, gt=0, le=4096)
    sliding_head_dim: int | None = Field(default=None, gt=0, le=4096)
    sliding_v_head_dim: int | None = Field(default=None, gt=0, le=4096)
    attention: AttentionKind = AttentionKind.GQA
    kv_lora_rank: int | None = Field(default=None, gt=0)
    q_lora_rank: int | None = Field(default=None, gt=0)  # MLA query compression (DeepSeek V3: 1536)
    qk_rope_head_dim: int | None = Field(default=None, ge=0)
    sliding_window: int | None = Field(default=None, gt=0)
    n_full_attention_layers: int | None = None  # layers whose KV grows with context
    n_sliding_layers: int = Field(default=0, ge=0)
    n_linear_layers: int = Field(default=0, ge=0)  # linear-attention / SSM: constant state
    linear_state_bytes: int = Field(default=0, ge=0)  # recurrent state per linear layer and sequence
    # compressed attention (DeepSeek V4; GLM-5.3-Flash's pooled indexer keys): elements cached per context token by
    # all pooled layers together (one entry per `ratio` tokens, plus an indexer key); V4's windows are sliding layers
    pooled_kv_elements: float = Field(default=0.0, ge=0)
    n_experts: int | None = Field(default=None, gt=0)
    experts_per_token: int | None = Field(default=None, gt=0)
    n_shared_experts: int = Field(default=0, ge=0)
    moe_intermediate_size: int | None = Field(default=None, gt=0)  # routed expert FFN width
    # weights of the routed experts of all MoE layers, counted from the stored config.json
    # (catalog.model_files.params.routed_expert_params); None: core.weights.split_params falls back to total/active
    expert_params: int | None = Field(default=None, gt=0)
    vocab_size: int = Field(gt=0, le=1 << 22)
    max_context: int = Field(gt=0, le=1 << 25)
    tied_embeddings: bool = False
    native_dtype: Literal["bf16", "fp16", "fp8", "mxfp4", "fp32", "int4"] = "bf16"
    license: str = ""
    release: str = ""
    aliases: tuple[str, ...] = ()
    # dense FFN width (config intermediate_size) and the number of leading dense layers in a MoE
    # (first_k_dense_replace); with them the parameter count can be recomputed from the architecture
    intermediate_size: int | None = Field(default=None, gt=0)
    n_dense_layers: int = Field(default=0, ge=0)
    gated_ffn: bool = True  # SwiGLU/GeGLU: 3 FFN matrices; False: 2 (GELU/ReLU^2/xIELU MLPs, e.g. phi-2)
    shared_expert_intermediate_size: int | None = Field(default=None, gt=0)
    vision_params: int | None = Field(default=None, gt=0)  # vision tower weights (counted in total_params)
    params_note: str = ""  # why total_params differs from the architecture arithmetic (MTP, lookup tables, ...)
    hf_downloads: int | None = Field(default=None, ge=0)  # Hugging Face downloads (last 30 days) when read
    # base / instruct / thinking / coder / vision / distill / reasoning / embedding ...
    variant: str = ""
    provenance: Provenance

    @property
    def is_moe(self) -> bool:
        return bool(self.n_experts and self.experts_per_token and self.n_experts > 1)

    @property
    def kv_layers(self) -> int:
        """Layers that keep a growing (full-context) KV cache."""
        if self.n_full_attention_layers is not None:
            return self.n_full_attention_layers
        return self.n_layers - self.n_sliding_layers - self.n_linear_layers

    @model_validator(mode="after")
    def _consistent(self) -> "ModelSpec":
        if self.active_params > self.total_params:
            raise ValueError("active_params exceeds total_params")
        if self.kv_layers + self.n_sliding_layers + self.n_linear_layers > self.n_layers:
            raise ValueError("attention layer counts exceed n_layers")
        if self.attention is AttentionKind.MLA and not self.kv_lora_rank:
            raise ValueError("MLA attention needs kv_lora_rank")
        if self.attention is AttentionKind.GQA and self.n_kv_heads == 0 and self.kv_layers:
            raise ValueError("GQA attention needs n_kv_heads")
        return self


class SafetensorsBits(Frozen):
    """Bits per weight of a quant's tensor groups in the publisher's safetensors checkpoint, where they differ
    from the GGUF the row's own figures describe: gpt-oss ships its routed experts in MXFP4 and keeps
    attention, router, embedding and lm_head in BF16, which the MXFP4 GGUFs requantize to Q8_0."""

    bpw_dense: float
    bpw_experts: float
    bpw_embed: float
    bpw_output: float
    source: str


class QuantSpec(Frozen):
    """A weight format and how many bits each tensor group gets (llama.cpp recipe)."""

    id: str  # "Q4_K_M", "UD-Q4_K_XL", "BF16", "FP8", "AWQ", "MXFP4"
    label: str
    format: Literal["gguf", "checkpoint"]
    bits: float  # nominal bits of the main block type, for sorting and display
    bpw_dense: float  # attention + dense FFN tensors, average bits per weight
    bpw_experts: float  # routed MoE expert tensors
    bpw_experts_unaligned: float | None = None  # experts when their FFN width is not a multiple of 256
    bpw_embed: float  # token embedding
    bpw_output: float  # output projection (lm_head)
    # the checkpoint an engine with ``Engine.loads_safetensors`` reads, when its tensors differ from the GGUF's
    # (core.weights.as_loaded swaps them in; a measured GGUF size then does not apply)
    safetensors: SafetensorsBits | None = None
    engines: tuple[Engine, ...] = (Engine.LLAMA_CPP,)
    vllm_quantization: str | None = None  # value for `vllm serve --quantization`
    provenance: Provenance


class QuantSize(Frozen):
    """A measured file size of one model in one quant (sum of split files)."""

    model_id: str
    quant_id: str
    size_bytes: int = Field(gt=0)
    repo: str | None = None
    provenance: Provenance


class Hardware(Frozen):
    gpu: GpuSpec
    count: int = Field(default=1, ge=1, le=64)
    system_ram_bytes: int = Field(default=64 * 10**9, ge=0)
    ram_bandwidth_bytes_per_s: float | None = Field(default=None, gt=0)
    # macOS lets the GPU wire this share of RAM (iogpu.wired_limit_mb raises it)
    unified_gpu_fraction: float | None = Field(default=None, gt=0, le=1)


class Workload(Frozen):
    context: int = Field(default=8192, ge=1, le=1 << 24)
    kv_cache: KvCacheType = KvCacheType.F16
    engine: Engine = Engine.LLAMA_CPP
    n_ubatch: int = Field(default=512, ge=1, le=65536)
    prompt_tokens: int = Field(default=4096, ge=1, le=1 << 24)
    concurrent: int = Field(default=1, ge=1, le=4096)
    flash_attention: bool = True
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)  # vLLM


class CloudOffer(Frozen):
    """An hourly GPU rental price, as seen on a date."""

    provider: str
    instance: str
    gpu_id: str
    gpu_count: int = Field(ge=1)
    price_per_hour_usd: float = Field(gt=0)
    billing: str = "hourly"
    pricing_type: str = "on-demand"
    region: str = ""
    seen: str  # date the price was observed
    provenance: Provenance


class NotADevice(Frozen):
    """A name people ask for that is no real product (e.g. "Mac Studio M4 Ultra"), or a kind of device
    the catalog does not cover (phones): then ``stand_in`` is what a button asks about instead."""

    name: str
    aliases: tuple[str, ...] = ()
    note: str
    note_de: str = ""  # the same note in German (a card in German shows this one)
    stand_in: str = ""  # e.g. "8gb unified memory"; set only for a kind of device not covered
    provenance: Provenance


class SizedModel(Frozen):
    """A model known only by the parameter count its publisher states (no config.json copy could be found,
    or its architecture cannot be read yet): the card gives its weights per quant, marked memory-only."""

    id: str
    name: str
    family: str
    hf_repo: str
    total_params: int = Field(gt=0)
    active_params: int | None = Field(default=None, gt=0)
    license: str = ""
    release: str = ""
    aliases: tuple[str, ...] = ()
    why: Literal["no_config", "architecture"] = "no_config"  # no config copy found; an architecture the reader lacks
    why_note: str = ""  # the same in words, for the catalog's readers (not shown on a card)
    provenance: Provenance


class Catalog(Frozen):
    """Everything the estimator knows, as loaded from the catalog store."""

    gpus: tuple[GpuSpec, ...]
    models: tuple[ModelSpec, ...]
    quants: tuple[QuantSpec, ...]
    sizes: tuple[QuantSize, ...] = ()
    offers: tuple[CloudOffer, ...] = ()
    not_devices: tuple[NotADevice, ...] = ()
    version: str = ""  # hash of the fact files the store was built from
    built_at: str = ""

    def __repr_args__(self) -> Iterator[tuple[str, object]]:
        """Counts, not rows: the full repr of thousands of rows took 60 ms each time something printed
        it, and ``asyncio.run`` (3.11) prints the result of its task when it restores the SIGINT handler."""
        yield "version", self.version
        for name in ("gpus", "models", "quants", "sizes", "offers", "not_devices"):
            yield name, len(getattr(self, name))

    def gpu(self, gpu_id: str) -> GpuSpec | None:
        return self._index()["gpu"].get(gpu_id)  # type: ignore[return-value]

    def model(self, model_id: str) -> ModelSpec | None:
        return self._index()["model"].get(model_id)  # type: ignore[return-value]

    def quant(self, quant_id: str) -> QuantSpec | None:
        return self._index()["quant"].get(quant_id.upper())  # type: ignore[return-value]

    def size(self, model_id: str, quant_id: str) -> QuantSize | None:
        return self._index()["size"].get(f"{model_id}\0{quant_id.upper()}")  # type: ignore[return-value]

    def _index(self) -> dict[str, dict[str, Frozen]]:
        """Lookup tables, built once per catalog object (a ``model_copy`` gets its own)."""
        entry: tuple[int, dict[str, dict[str, Frozen]]] | None = self.__dict__.get("_lookup")
        cached = entry[1] if entry is not None and entry[0] == id(self) else None
        if cached is None:
            cached = {
                "gpu": {g.id: g for g in self.gpus},
                "model": {m.id: m for m in self.models},
                "quant": {q.id.upper(): q for q in self.quants},
                "size": {f"{s.model_id}\0{s.quant_id.upper()}": s for s in self.sizes},
            }
            self.__dict__["_lookup"] = (id(self), cached)
        return cached
