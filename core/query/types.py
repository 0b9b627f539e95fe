"""What a parsed question is: the vocabulary the parser knows, the intents, and the ``Query`` it returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from core.models import Backend, Engine, Frozen, KvCacheType
from core.query.asks import Asks


class VocabEntry(Frozen):
    """One nameable thing: a model, a GPU or a device that does not exist."""

    id: str
    names: tuple[str, ...]  # display name first, then aliases
    memory_gib: float | None = None  # GPUs: picks the memory config ("mac studio 128gb")
    group: str = ""  # e.g. GPU category "apple"
    total_b: float | None = None  # models: parameters in billions, the size a user names
    active_b: float | None = None
    laptop: bool = False  # devices: a laptop part is not its desktop namesake
    chip: str = ""  # devices: memory variants of one chip share it
    dominant: bool = False  # devices: the variant a bare chip name means (catalog/facts/name_defaults.toml)
    gpu_cores: int | None = None  # Apple: the GPU core count that names the bin ("M4 Max 40-core")
    lineups: tuple[str, ...] = ()  # devices: product lines sold with this configuration ("Mac Studio")


class Vocabulary(Frozen):
    """Everything the parser may recognise by name; the caller builds it from the catalog."""

    models: tuple[VocabEntry, ...]
    gpus: tuple[VocabEntry, ...]
    quants: tuple[str, ...]
    not_devices: tuple[VocabEntry, ...] = ()
    providers: tuple[str, ...] = ()  # cloud providers with offers in the catalog ("RunPod", "Lambda")


class Intent(StrEnum):
    FIT = "fit"
    SPEED = "speed"
    CLOUD = "cloud"
    QUANT = "quant"
    GPUS = "gpus"
    MODELS = "models"
    FINETUNE = "finetune"
    TCO = "tco"
    COMPARE = "compare"


class Match(Frozen):
    """A name the user wrote and what it resolved to; ``id`` is None when it did not resolve.

    ``suggestions`` are "did you mean" entries (same family only); ``choices`` are entries that
    differ only in memory, to be asked about with buttons; ``unknown`` says that nothing in the
    catalog is the thing typed (look it up, or say "I don't know"); ``memory_gib`` is a memory size
    the user gave for a device; ``assumed`` names the entry picked for a bare name that has siblings
    ("h100" → the SXM board). With ``id`` set, ``choices`` are the other readings of a bare name
    (its dominant variant was picked, the others get a button each).
    """

    id: str | None
    text: str
    score: float
    suggestions: tuple[str, ...] = ()
    ambiguous: bool = False
    choices: tuple[str, ...] = ()
    unknown: bool = False
    memory_gib: int | None = None
    assumed: bool = False


class Query(Frozen):
    """What one message asks; ``explicit`` names the fields the user set."""

    intent: Intent = Intent.FIT
    model: Match | None = None
    model2: Match | None = None
    draft: Match | None = None  # the draft model the user named for speculative decoding
    speculative: bool = False  # asks for speculative decoding (a draft, MTP, EAGLE)
    gpu: Match | None = None
    gpu2: Match | None = None
    gpu_count: int = 1
    gpu2_count: int = 1
    gpu_cores: int | None = None  # "M2 Max 38-core": the GPU core count, never a device count
    rig: bool = False  # "4090 + 3090": gpu and gpu2 (and more_gpus) are one machine, not a comparison
    memory_gib: float | None = None
    provider: str | None = None  # a cloud provider named ("on runpod"): its offers first
    not_device: str | None = None
    not_device_text: str | None = None  # the words that named it
    hf_repo: str | None = None
    quant: str | None = None
    quant_text: str | None = None  # a quant name read as another catalog quant ("Q2_K_XL" → UD-Q2_K_XL)
    unknown_quant: str | None = None  # a quant-shaped name the catalog lacks ("Q7_K_Z"): named, never dropped
    bpw: float | None = None  # "exl2 4.65bpw", "mlx 4bit": a size for a format FitBot does not model
    context: int | None = None
    kv_cache: KvCacheType | None = None
    ram_gb: float | None = None
    engine: Engine | None = None
    prompt_tokens: int | None = None
    users: int | None = None
    language: Literal["de", "en"] | None = None
    finetune_method: Literal["qlora", "lora", "full"] | None = None
    more_models: tuple[Match, ...] = ()  # a third and fourth model of a comparison
    more_gpus: tuple[Match, ...] = ()  # a third and fourth device
    more_gpu_counts: tuple[int, ...] = ()
    device_kind: Literal["gpu", "laptop", "cpu", "igpu", "sbc", "unified"] | None = (
        None  # a device named only by its memory
    )
    board: str | None = None  # an iGPU or single-board computer as typed ("raspberry pi 5", "iris xe")
    device_memory_gib: float | None = None  # "16 GB VRAM", "a GPU with 24 GB"
    biggest: bool = False  # "the biggest model I can run": models ranked by size that still run
    memory_only: bool = False  # "how much VRAM do I need for ...": no device wanted
    other_engine: str | None = None  # an engine FitBot does not model (exl2, MLX, SGLang)
    model_text: str | None = None  # a model-like phrase that matched nothing ("olmo 2 7b")
    model_size: str | None = None  # a model named only by its size ("ein 8b modell", "a 30b-a3b"), as typed
    gpu_text: str | None = None  # a device-like phrase that matched nothing ("rtx 3070")
    backend: Backend | None = None  # "on vulkan", "mit ROCm" (core/query/specs.py)
    device_bandwidth_gbps: float | None = None  # "32 GB at 608 GB/s": a device known by its specs
    device_tflops: float | None = None  # "... and 90 TFLOPS"
    asks: Asks = Asks()  # what else it asks for: a details page, Ollama's command, images, a draft's size...
    leftovers: tuple[str, ...] = ()
    explicit: frozenset[str] = frozenset()
