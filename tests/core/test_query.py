"""Question parser: real-world phrasings (German and English) → expected Query fields.

Each table row is (text, expected). In ``expected`` a name field holds the resolved id, or
``Amb(...)`` when the parser must not guess but offer these ids among its suggestions, or None
when nothing may be matched. Fields not named in a row are not checked.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import commands
from core.models import Engine, KvCacheType
from core.query.parse import Intent, Match, Query, VocabEntry, Vocabulary, parse


def _m(id_: str, *names: str) -> VocabEntry:
    return VocabEntry(id=id_, names=names)


def _g(id_: str, mem: float, group: str, *names: str) -> VocabEntry:
    return VocabEntry(id=id_, names=names, memory_gib=mem, group=group)


MODELS = (
    _m("glm-4.5-air", "GLM-4.5-Air", "GLM 4.5 Air"),
    _m("glm-4.5", "GLM-4.5"),
    _m("gpt-oss-20b", "gpt-oss-20b"),
    _m("gpt-oss-120b", "gpt-oss-120b"),
    _m("qwen3-8b", "Qwen3-8B"),
    _m("qwen3-14b", "Qwen3-14B"),
    _m("qwen3-32b", "Qwen3-32B"),
    _m("qwen3-30b-a3b", "Qwen3-30B-A3B", "qwen3 30b"),
    _m("qwen3-235b-a22b", "Qwen3-235B-A22B", "qwen3 235b"),
    _m("qwen3-coder-30b-a3b", "Qwen3-Coder-30B-A3B-Instruct", "qwen3 coder 30b"),
    _m("qwen2.5-coder-32b", "Qwen2.5-Coder-32B-Instruct"),
    _m("llama-3.1-8b-instruct", "Llama 3.1 8B Instruct"),
    _m("llama-3.1-70b-instruct", "Llama 3.1 70B Instruct"),
    _m("llama-3.3-70b-instruct", "Llama 3.3 70B Instruct"),
    _m("llama-3.2-3b-instruct", "Llama 3.2 3B Instruct"),
    _m("llama-4-scout", "Llama 4 Scout", "llama 4 scout 109b"),
    _m("deepseek-r1-0528", "DeepSeek-R1-0528", "deepseek r1", "r1"),
    _m("deepseek-v3-0324", "DeepSeek-V3-0324", "deepseek v3"),
    _m("deepseek-r1-distill-llama-8b", "DeepSeek-R1-Distill-Llama-8B"),
    _m("deepseek-r1-distill-qwen-32b", "DeepSeek-R1-Distill-Qwen-32B"),
    _m("gemma-3-27b", "Gemma 3 27B", "gemma-3-27b-it"),
    _m("gemma-3-12b", "Gemma 3 12B", "gemma-3-12b-it"),
    _m("mixtral-8x7b", "Mixtral 8x7B Instruct"),
    _m("mistral-small-3.2-24b", "Mistral Small 3.2 24B"),
    _m("mistral-7b-instruct", "Mistral 7B Instruct v0.3"),
    _m("kimi-k2-instruct", "Kimi K2 Instruct", "kimi k2"),
    _m("phi-4", "Phi-4"),
)
GPUS = (
    _g("rtx-3090", 24, "consumer", "GeForce RTX 3090"),
    _g("rtx-3090-ti", 24, "consumer", "GeForce RTX 3090 Ti"),
    _g("rtx-4090", 24, "consumer", "GeForce RTX 4090"),
    _g("rtx-5090", 32, "consumer", "GeForce RTX 5090"),
    _g("rtx-4080-super", 16, "consumer", "GeForce RTX 4080 Super"),
    _g("rtx-4060-ti-16gb", 16, "consumer", "GeForce RTX 4060 Ti 16GB"),
    _g("rtx-4060-ti-8gb", 8, "consumer", "GeForce RTX 4060 Ti 8GB"),
    _g("rtx-3060-12gb", 12, "consumer", "GeForce RTX 3060 12GB"),
    _g("rx-7900-xtx", 24, "consumer", "Radeon RX 7900 XTX"),
    _g("arc-b580", 12, "consumer", "Intel Arc B580"),
    _g("rtx-a6000", 48, "workstation", "RTX A6000"),
    _g("rtx-pro-6000", 96, "workstation", "RTX PRO 6000 Blackwell", "rtx pro 6000"),
    _g("l40s", 48, "datacenter", "L40S"),
    _g("a100-80gb", 80, "datacenter", "A100 80GB", "a100"),
    _g("h100-sxm", 80, "datacenter", "H100 SXM", "h100"),
    _g("h200-sxm", 141, "datacenter", "H200 SXM", "h200"),
    _g("b200", 180, "datacenter", "B200"),
    _g("mi300x", 192, "datacenter", "AMD Instinct MI300X"),
    _g("mac-studio-m3-ultra-512", 512, "apple", "Mac Studio M3 Ultra 512GB", "M3 Ultra 512GB"),
    _g("mac-studio-m3-ultra-256", 256, "apple", "Mac Studio M3 Ultra 256GB", "M3 Ultra 256GB"),
    _g("mac-studio-m4-max-128", 128, "apple", "Mac Studio M4 Max 128GB"),
    _g("mac-studio-m4-max-36", 36, "apple", "Mac Studio M4 Max 36GB"),
    _g("macbook-pro-m4-max-128", 128, "apple", "MacBook Pro M4 Max 128GB"),
    _g("macbook-pro-m4-pro-48", 48, "apple", "MacBook Pro M4 Pro 48GB"),
    _g("mac-mini-m4-pro-64", 64, "apple", "Mac mini M4 Pro 64GB"),
    _g("dgx-spark", 128, "apu", "NVIDIA DGX Spark"),
    _g("strix-halo-128", 128, "apu", "AMD Ryzen AI Max+ 395 128GB", "Strix Halo 128GB"),
)
NOT_DEVICES = (
    VocabEntry(id="mac-studio-m4-ultra", names=("Mac Studio M4 Ultra", "M4 Ultra")),
    VocabEntry(id="rtx-5090-ti", names=("RTX 5090 Ti",)),
)
QUANTS = (
    "Q2_K", "Q3_K_M", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0", "IQ4_XS",
    "UD-Q2_K_XL", "UD-Q4_K_XL", "BF16", "FP8", "AWQ", "GPTQ", "MXFP4",
)  # fmt: skip


def ask(text: str) -> Query:
    """A chat message as the service parses it: the /command read on the chat side, the rest by core."""
    command = commands.read(text)
    return parse(command.rest, VOCAB, command.intent)


VOCAB = Vocabulary(models=MODELS, gpus=GPUS, quants=QUANTS, not_devices=NOT_DEVICES)
MODEL_IDS = {e.id for e in MODELS}
GPU_IDS = {e.id for e in GPUS}


class Amb(NamedTuple):
    """Expected ambiguous match: no id, and these ids among the suggestions."""

    ids: tuple[str, ...]


def amb(*ids: str) -> Amb:
    return Amb(ids)


# intent, language and every other field can be checked in a row; names use the helpers above
CASES: list[tuple[str, dict[str, Any]]] = [
    # --- slash commands ---
    (
        "/fit glm-4.5-air rtx 5090 32k",
        {"intent": Intent.FIT, "model": "glm-4.5-air", "gpu": "rtx-5090", "context": 32768, "gpu_count": 1},
    ),
    (
        "/fit qwen3-32b 2x3090 q4_k_m 16k kv q8",
        {
            "model": "qwen3-32b",
            "gpu": "rtx-3090",
            "gpu_count": 2,
            "quant": "Q4_K_M",
            "context": 16384,
            "kv_cache": KvCacheType.Q8_0,
        },
    ),
    ("/fit@FitBot glm45 air 4090", {"intent": Intent.FIT, "model": "glm-4.5-air", "gpu": "rtx-4090"}),
    ("/FIT GLM-4.5-Air 5090", {"intent": Intent.FIT, "model": "glm-4.5-air", "gpu": "rtx-5090"}),
    (
        "/speed llama 3.1 8b 4090",
        {"intent": Intent.SPEED, "model": "llama-3.1-8b-instruct", "gpu": "rtx-4090"},
    ),
    ("/cloud deepseek r1", {"intent": Intent.CLOUD, "model": "deepseek-r1-0528", "gpu": None}),
    ("/quant qwen3 32b 4090", {"intent": Intent.QUANT, "model": "qwen3-32b", "quant": None}),
    ("/gpus gpt-oss-120b", {"intent": Intent.GPUS, "model": "gpt-oss-120b", "gpu": None}),
    ("/models 4090", {"intent": Intent.MODELS, "model": None, "gpu": "rtx-4090"}),
    (
        "/finetune llama 3.1 8b qlora 3090",
        {"intent": Intent.FINETUNE, "model": "llama-3.1-8b-instruct", "finetune_method": "qlora"},
    ),
    ("/tco rtx pro 6000", {"intent": Intent.TCO, "gpu": "rtx-pro-6000"}),
    (
        "/compare 4090 5090 qwen3 32b",
        {"intent": Intent.COMPARE, "gpu": "rtx-4090", "gpu2": "rtx-5090", "model": "qwen3-32b"},
    ),
    # --- English, natural ---
    (
        "can I run gpt-oss-120b on a mac studio with 128gb?",
        {
            "intent": Intent.FIT,
            "model": "gpt-oss-120b",
            "gpu": "mac-studio-m4-max-128",
            "memory_gib": 128.0,
            "ram_gb": None,
            "language": "en",
        },
    ),
    (
        "how fast is qwen3 30b a3b on a 3090?",
        {"intent": Intent.SPEED, "model": "qwen3-30b-a3b", "gpu": "rtx-3090", "language": "en"},
    ),
    (
        "cheapest cloud for deepseek r1",
        {"intent": Intent.CLOUD, "model": "deepseek-r1-0528", "language": "en"},
    ),
    (
        "what does it cost to run kimi k2 in the cloud",
        {"intent": Intent.CLOUD, "model": "kimi-k2-instruct", "gpu": None},
    ),
    (
        "will llama 3.3 70b fit on two 3090s with 32k context",
        {"model": "llama-3.3-70b-instruct", "gpu": "rtx-3090", "gpu_count": 2, "context": 32768},
    ),
    (
        "tokens per second for mixtral 8x7b on a 4090",
        {"intent": Intent.SPEED, "model": "mixtral-8x7b", "gpu": "rtx-4090", "gpu_count": 1},
    ),
    ("phi-4 on an rtx 3060 12gb", {"model": "phi-4", "gpu": "rtx-3060-12gb", "memory_gib": None}),
    (
        "qwen3 14b on 4060 ti 16gb with 64gb ram",
        {"model": "qwen3-14b", "gpu": "rtx-4060-ti-16gb", "ram_gb": 64.0},
    ),
    ("4060 ti 8gb qwen3 8b q4", {"model": "qwen3-8b", "gpu": "rtx-4060-ti-8gb", "quant": "Q4_K_M"}),
    ("which gpu for qwen3 235b?", {"intent": Intent.GPUS, "model": "qwen3-235b-a22b", "gpu": None}),
    ("which models run on my 3090?", {"intent": Intent.MODELS, "model": None, "gpu": "rtx-3090"}),
    ("what can i run on 2x 4090", {"intent": Intent.MODELS, "gpu": "rtx-4090", "gpu_count": 2}),
    (
        "best quant for glm 4.5 air on a 5090",
        {"intent": Intent.QUANT, "model": "glm-4.5-air", "gpu": "rtx-5090"},
    ),
    (
        "fine-tune llama 3.1 8b with qlora on a 4090",
        {"intent": Intent.FINETUNE, "model": "llama-3.1-8b-instruct", "finetune_method": "qlora"},
    ),
    (
        "full fine-tune qwen3 8b on 8x h100",
        {"intent": Intent.FINETUNE, "finetune_method": "full", "gpu": "h100-sxm", "gpu_count": 8},
    ),
    (
        "lora training gemma 3 12b on a6000",
        {"intent": Intent.FINETUNE, "finetune_method": "lora", "model": "gemma-3-12b", "gpu": "rtx-a6000"},
    ),
    ("buy vs rent for 4x h100", {"intent": Intent.TCO, "gpu": "h100-sxm", "gpu_count": 4}),
    (
        "is an rtx pro 6000 worth buying for llama 3.3 70b",
        {"intent": Intent.TCO, "gpu": "rtx-pro-6000", "model": "llama-3.3-70b-instruct"},
    ),
    (
        "compare llama 3.3 70b vs qwen3 32b on a 4090",
        {
            "intent": Intent.COMPARE,
            "model": "llama-3.3-70b-instruct",
            "model2": "qwen3-32b",
            "gpu": "rtx-4090",
        },
    ),
    (
        "4090 vs 5090 for gpt-oss-20b",
        {"intent": Intent.COMPARE, "gpu": "rtx-4090", "gpu2": "rtx-5090", "model": "gpt-oss-20b"},
    ),
    (
        "2x 3090 vs one 5090 for qwen3 32b",
        {"intent": Intent.COMPARE, "gpu": "rtx-3090", "gpu_count": 2, "gpu2": "rtx-5090", "gpu2_count": 1},
    ),
    (
        "deepseek r1 on 8xH200 fp8",
        {"model": "deepseek-r1-0528", "gpu": "h200-sxm", "gpu_count": 8, "quant": "FP8"},
    ),
    ("kimi k2 on mi300x x8", {"model": "kimi-k2-instruct", "gpu": "mi300x", "gpu_count": 8}),
    (
        "llama 3.1 70b on 4 x a100 with vllm",
        {"model": "llama-3.1-70b-instruct", "gpu": "a100-80gb", "gpu_count": 4, "engine": Engine.VLLM},
    ),
    ("qwen3 32b on 3090 with ollama", {"model": "qwen3-32b", "engine": Engine.LLAMA_CPP}),
    (
        "qwen3 32b on 3090 via llama.cpp",
        {"model": "qwen3-32b", "gpu": "rtx-3090", "engine": Engine.LLAMA_CPP},
    ),
    (
        "lm studio gemma 3 27b on macbook pro m4 max 128gb",
        {
            "engine": Engine.LLAMA_CPP,
            "model": "gemma-3-27b",
            "gpu": "macbook-pro-m4-max-128",
            "memory_gib": 128.0,
        },
    ),
    (
        "gpt-oss-20b 4090 128k ctx kv q8_0",
        {"model": "gpt-oss-20b", "context": 131072, "kv_cache": KvCacheType.Q8_0},
    ),
    ("llama 3.1 8b 3090 context 16000", {"model": "llama-3.1-8b-instruct", "context": 16000}),
    ("qwen3-8b 4090 ctx=8192", {"model": "qwen3-8b", "gpu": "rtx-4090", "context": 8192}),
    ("kimi k2 1M context on 8 h200", {"context": 1048576, "gpu": "h200-sxm", "gpu_count": 8}),
    ("glm-4.5-air 5090 32768", {"model": "glm-4.5-air", "gpu": "rtx-5090", "context": 32768}),
    ("qwen3 32b 4090 32k kv-cache q4_0", {"context": 32768, "kv_cache": KvCacheType.Q4_0, "quant": None}),
    ("qwen3 32b 4090 q8 kv", {"kv_cache": KvCacheType.Q8_0, "quant": None}),
    ("qwen3 32b 4090 q4 kv q8", {"kv_cache": KvCacheType.Q8_0, "quant": "Q4_K_M"}),
    ("qwen3 32b 4090 kv fp8", {"kv_cache": KvCacheType.FP8, "quant": None}),
    ("qwen3 32b 4090 kv f16", {"kv_cache": KvCacheType.F16}),
    ("prompt 4k qwen3 14b 4090", {"prompt_tokens": 4096, "context": None, "model": "qwen3-14b"}),
    ("4000 token prompt on llama 3.1 8b 3090", {"prompt_tokens": 4000, "context": None}),
    ("10 users llama 3.1 8b on h100", {"users": 10, "model": "llama-3.1-8b-instruct", "gpu": "h100-sxm"}),
    ("50 concurrent qwen3 32b h100", {"users": 50, "gpu_count": 1}),
    ("--concurrent 8 qwen3 8b 4090", {"users": 8, "model": "qwen3-8b"}),
    ("gemma 3 27b int4 on 3090", {"quant": "Q4_K_M", "model": "gemma-3-27b"}),
    (
        "llama 3.1 8b 4-bit 3060",
        {"quant": "Q4_K_M", "model": "llama-3.1-8b-instruct", "gpu": "rtx-3060-12gb"},
    ),
    ("llama 3.1 8b 4bit 3060", {"quant": "Q4_K_M"}),
    ("qwen3 32b awq on 2x 3090 vllm", {"quant": "AWQ", "engine": Engine.VLLM, "gpu_count": 2}),
    ("qwen3 32b gptq on 5090", {"quant": "GPTQ"}),
    ("llama 3.3 70b iq4_xs 2x3090", {"quant": "IQ4_XS", "gpu_count": 2, "model": "llama-3.3-70b-instruct"}),
    (
        "deepseek r1 ud-q2_k_xl mac studio m3 ultra 512gb",
        {"quant": "UD-Q2_K_XL", "gpu": "mac-studio-m3-ultra-512", "memory_gib": 512.0},
    ),
    ("Q5_K_S qwen3 14b 4060 ti 16gb", {"quant": "Q5_K_S", "gpu": "rtx-4060-ti-16gb"}),
    ("glm 4.5 air bf16 on 4x h100", {"quant": "BF16", "model": "glm-4.5-air", "gpu_count": 4}),
    ("glm 4.5 air fp16 on 4x h100", {"quant": "BF16"}),
    ("glm 4.5 air unquantized on 4x h100", {"quant": "BF16"}),
    ("q8 gemma 3 12b 3060", {"quant": "Q8_0", "model": "gemma-3-12b"}),
    ("qwen3 32b q6_k 4090", {"quant": "Q6_K"}),
    ("gpt-oss-120b mxfp4 on two 5090s", {"quant": "MXFP4", "gpu": "rtx-5090", "gpu_count": 2}),
    ("qwen3 32b q3_k_l 4090", {"quant": None, "leftovers": ("q3_k_l",), "model": "qwen3-32b"}),
    ("dual 4090 llama 3.3 70b q4", {"gpu": "rtx-4090", "gpu_count": 2, "quant": "Q4_K_M"}),
    ("glm 4.5 air on 3090 with 64 GB RAM and 32k", {"ram_gb": 64.0, "context": 32768}),
    ("ram 32g, 3060, llama 3.1 8b", {"ram_gb": 32.0, "gpu": "rtx-3060-12gb"}),
    ("qwen3 30b on dgx spark", {"model": "qwen3-30b-a3b", "gpu": "dgx-spark"}),
    ("which quantization for llama 3.3 70b on 2x 3090", {"intent": Intent.QUANT, "gpu_count": 2}),
    ("price per hour for an h100 with llama 3.1 70b", {"intent": Intent.CLOUD, "gpu": "h100-sxm"}),
    ("rent an h200 for qwen3 235b", {"intent": Intent.CLOUD, "gpu": "h200-sxm"}),
    (
        "training llama 3.2 3b on a 4060 ti 16gb",
        {"intent": Intent.FINETUNE, "model": "llama-3.2-3b-instruct", "finetune_method": None},
    ),
    ("qwen3 14b on 4090 with llamacpp", {"engine": Engine.LLAMA_CPP, "model": "qwen3-14b"}),
    (
        "mac studio with 192gb for deepseek v3",
        {"gpu": amb("mac-studio-m3-ultra-256"), "memory_gib": 192.0, "ram_gb": None},
    ),
    ("/fit qwen3 8b 4090", {"language": None}),
    # --- German, natural ---
    (
        "passt GLM 4.5 Air auf meine 4090 mit 64 GB RAM?",
        {"intent": Intent.FIT, "model": "glm-4.5-air", "gpu": "rtx-4090", "ram_gb": 64.0, "language": "de"},
    ),
    (
        "wie schnell ist llama 3.3 70b auf zwei 3090?",
        {
            "intent": Intent.SPEED,
            "model": "llama-3.3-70b-instruct",
            "gpu": "rtx-3090",
            "gpu_count": 2,
            "language": "de",
        },
    ),
    (
        "was kostet qwen3 235b in der cloud?",
        {"intent": Intent.CLOUD, "model": "qwen3-235b-a22b", "language": "de"},
    ),
    ("läuft gpt-oss-20b auf meiner rtx 4060 ti 16gb?", {"model": "gpt-oss-20b", "gpu": "rtx-4060-ti-16gb"}),
    (
        "reicht eine 3090 für qwen3 32b mit 32k kontext?",
        {"gpu": "rtx-3090", "gpu_count": 1, "model": "qwen3-32b", "context": 32768, "language": "de"},
    ),
    (
        "welche grafikkarte brauche ich für llama 3.3 70b?",
        {"intent": Intent.GPUS, "model": "llama-3.3-70b-instruct", "language": "de"},
    ),
    ("welche modelle laufen auf meiner 5090?", {"intent": Intent.MODELS, "gpu": "rtx-5090", "model": None}),
    ("kaufen oder mieten: rtx pro 6000 für glm 4.5 air", {"intent": Intent.TCO, "gpu": "rtx-pro-6000"}),
    (
        "lohnt sich eine dgx spark für gpt-oss-120b?",
        {"intent": Intent.TCO, "gpu": "dgx-spark", "model": "gpt-oss-120b"},
    ),
    (
        "vergleich 4090 und 5090 für qwen3 32b",
        {"intent": Intent.COMPARE, "gpu": "rtx-4090", "gpu2": "rtx-5090"},
    ),
    (
        "qlora finetuning von llama 3.1 8b auf einer 4090",
        {"intent": Intent.FINETUNE, "finetune_method": "qlora", "leftovers": ()},
    ),
    ("voll finetunen qwen3 8b auf 8x h100", {"intent": Intent.FINETUNE, "finetune_method": "full"}),
    ("drei 4090 qwen3 235b q2", {"gpu_count": 3, "quant": "Q2_K", "model": "qwen3-235b-a22b"}),
    ("vier a100 für deepseek v3", {"gpu": "a100-80gb", "gpu_count": 4, "model": "deepseek-v3-0324"}),
    ("mit 128gb ram und 2x 3090 glm 4.5 air", {"ram_gb": 128.0, "gpu_count": 2, "memory_gib": None}),
    ("Arbeitsspeicher 96 GB, 4090, qwen3 235b", {"ram_gb": 96.0, "gpu": "rtx-4090"}),
    ("für 20 nutzer llama 3.3 70b auf 2x h100", {"users": 20, "gpu_count": 2}),
    ("mit 8k prompt qwen3 32b 5090", {"prompt_tokens": 8192, "context": None}),
    ("qwen3 30b auf strix halo 128", {"gpu": "strix-halo-128", "memory_gib": 128.0}),
    (
        "deepseek r1 auf mac studio m3 ultra 512gb",
        {"model": "deepseek-r1-0528", "gpu": "mac-studio-m3-ultra-512", "memory_gib": 512.0},
    ),
    ("m3 ultra 512 deepseek r1", {"gpu": "mac-studio-m3-ultra-512", "memory_gib": 512.0}),
    ("qwen3 235b auf m3 ultra 256gb", {"gpu": "mac-studio-m3-ultra-256", "memory_gib": 256.0}),
    (
        "wie viele tokens pro sekunde schafft gemma 3 27b auf 7900 xtx?",
        {"intent": Intent.SPEED, "model": "gemma-3-27b", "gpu": "rx-7900-xtx", "gpu2": None},
    ),
    (
        "glm 4.5 air mit lm studio auf macbook pro m4 max 128gb",
        {"engine": Engine.LLAMA_CPP, "gpu": "macbook-pro-m4-max-128", "memory_gib": 128.0},
    ),
    ("welche quant für qwen3 32b auf 4090?", {"intent": Intent.QUANT, "quant": None}),
    ("deepseek v3 auf 8 h200 mit 64k kontext", {"gpu_count": 8, "context": 65536}),
    ("llama 3.1 8b, 32K Kontext, 3060", {"context": 32768, "gpu": "rtx-3060-12gb"}),
    ("b580 phi 4", {"gpu": "arc-b580", "model": "phi-4"}),
    ("welche gpu für deepseek r1?", {"intent": Intent.GPUS, "model": "deepseek-r1-0528", "gpu": None}),
    ("h200 mieten für deepseek r1", {"intent": Intent.CLOUD, "gpu": "h200-sxm"}),
    (
        "was kann ich auf meinem macbook pro m4 pro 48gb laufen lassen?",
        {"intent": Intent.MODELS, "gpu": "macbook-pro-m4-pro-48", "memory_gib": 48.0},
    ),
    ("gpt-oss-120b auf meinem mac mit 128gb", {"memory_gib": 128.0, "ram_gb": None, "model": "gpt-oss-120b"}),
    (
        "wie schnell läuft kimi k2 auf 8 b200 mit vllm",
        {"intent": Intent.SPEED, "gpu": "b200", "gpu_count": 8, "engine": Engine.VLLM},
    ),
    # --- typos and loose spelling ---
    ("lama 3.1 8b on 3060", {"model": "llama-3.1-8b-instruct"}),
    ("gpt oss 120 on 2x 5090", {"model": "gpt-oss-120b", "gpu_count": 2}),
    ("qwen 3 32b auf 4090", {"model": "qwen3-32b"}),
    ("mixtrall 8x7b on 4090", {"model": "mixtral-8x7b"}),
    ("gemma3 27b on 3090", {"model": "gemma-3-27b"}),
    ("deepsek v3 on 8x h100", {"model": "deepseek-v3-0324"}),
    ("deep seek r1 on h200", {"model": "deepseek-r1-0528", "gpu": "h200-sxm"}),
    ("llama3.3 70b 2x3090", {"model": "llama-3.3-70b-instruct", "gpu_count": 2}),
    ("gpt-oss 20b on rtx4090", {"model": "gpt-oss-20b", "gpu": "rtx-4090"}),
    ("rtx3090ti qwen3 14b", {"gpu": "rtx-3090-ti", "model": "qwen3-14b"}),
    ("phi4 on 4060ti 16gb", {"model": "phi-4", "gpu": "rtx-4060-ti-16gb"}),
    ("qwen3 coder 30b 4090", {"model": "qwen3-coder-30b-a3b"}),
    ("qwen3 30b 4090", {"model": "qwen3-30b-a3b"}),
    ("kimi k2 instruct on 16 h100", {"model": "kimi-k2-instruct", "gpu_count": 16}),
    ("glm 4 air on 5090", {"model": amb("glm-4.5-air")}),  # a version typed short is another version
    ("llama 3 8b on 3060", {"model": amb("llama-3.1-8b-instruct")}),  # Llama 3 8B is not Llama 3.1 8B
    ("Mistral Small 24b on 3090", {"model": "mistral-small-3.2-24b"}),
    ("deepseek r1 distill llama 8b on 3060", {"model": "deepseek-r1-distill-llama-8b"}),
    ("glm 4.5 on 4x h100", {"model": "glm-4.5"}),
    ("3090 ti llama 3.1 8b", {"gpu": "rtx-3090-ti"}),
    ("rtx 3090 llama 3.1 8b", {"gpu": "rtx-3090"}),
    (
        "nvidia geforce rtx 4090 deepseek r1 distill qwen 32b",
        {"gpu": "rtx-4090", "model": "deepseek-r1-distill-qwen-32b"},
    ),
    # --- ambiguity: suggestions, no guess ---
    (
        "llama 70b on 4 h100",
        {"model": amb("llama-3.1-70b-instruct", "llama-3.3-70b-instruct"), "gpu": "h100-sxm", "gpu_count": 4},
    ),
    ("llama 3 70b", {"model": amb("llama-3.1-70b-instruct", "llama-3.3-70b-instruct")}),  # Llama 3 is not 3.1
    ("qwen3 on 4090", {"model": amb("qwen3-14b"), "gpu": "rtx-4090"}),
    (
        "can I run deepseek on a mac studio",
        {"model": amb("deepseek-r1-0528", "deepseek-v3-0324"), "gpu": amb("mac-studio-m4-max-128")},
    ),
    ("4060 ti with qwen3 8b", {"gpu": amb("rtx-4060-ti-16gb", "rtx-4060-ti-8gb")}),
    ("gemma 3 on 3090", {"model": amb("gemma-3-27b", "gemma-3-12b")}),
    ("gpt oss on 5090", {"model": amb("gpt-oss-20b", "gpt-oss-120b")}),
    ("mac studio m3 ultra for kimi k2", {"gpu": amb("mac-studio-m3-ultra-512", "mac-studio-m3-ultra-256")}),
    # --- a wrong size is a wrong model ---
    ("llama 3.1 9b on 3090", {"model": amb("llama-3.1-8b-instruct")}),
    ("qwen3 33b on 4090", {"model": amb()}),
    ("gpt-oss-121b on h100", {"model": amb("gpt-oss-120b")}),
    ("qwen3 70b", {"model": amb()}),
    # --- devices that do not exist ---
    (
        "mac studio m4 ultra deepseek r1",
        {"not_device": "mac-studio-m4-ultra", "gpu": None, "model": "deepseek-r1-0528"},
    ),
    ("can I run glm 4.5 air on an rtx 5090 ti?", {"not_device": "rtx-5090-ti", "gpu": None}),
    # --- Hugging Face repos ---
    (
        "Qwen/Qwen3-14B-AWQ on 4090 vllm",
        {"hf_repo": "Qwen/Qwen3-14B-AWQ", "quant": "AWQ", "model": "qwen3-14b", "engine": Engine.VLLM},
    ),
    (
        "https://huggingface.co/unsloth/GLM-4.5-Air-GGUF on 2x3090",
        {"hf_repo": "unsloth/GLM-4.5-Air-GGUF", "gpu_count": 2, "leftovers": ()},
    ),
    ("hf.co/bartowski/x-GGUF:Q4_K_M", {"hf_repo": "bartowski/x-GGUF", "quant": "Q4_K_M"}),
    ("bartowski/Qwen3-32B-GGUF:Q5_K_M on 5090", {"hf_repo": "bartowski/Qwen3-32B-GGUF", "quant": "Q5_K_M"}),
    ("openai/gpt-oss-20b on 4060 ti 16gb", {"hf_repo": "openai/gpt-oss-20b", "model": "gpt-oss-20b"}),
    (
        "does meta-llama/Llama-3.1-8B-Instruct fit on 3060 12gb",
        {"hf_repo": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "rtx-3060-12gb"},
    ),
    ("tok/s for qwen3 8b on 4090", {"hf_repo": None, "intent": Intent.SPEED}),
    ("Q4_K_M/Q8_0 for qwen3 8b", {"hf_repo": None, "quant": "Q4_K_M"}),
    # --- garbage: nothing may be matched ---
    ("hello how are you", {"model": None, "gpu": None, "intent": Intent.FIT}),
    ("what is the meaning of life?", {"model": None, "gpu": None}),
    ("ich mag kuchen", {"model": None, "gpu": None, "language": "de"}),
    ("asdf qwerty zxcv", {"model": None, "gpu": None, "leftovers": ("asdf", "qwerty", "zxcv")}),
    ("🙂🙂🙂 🚀", {"model": None, "gpu": None}),
    ("<b>hi</b> **bold** `code`", {"model": None, "gpu": None}),
    ("", {"intent": Intent.FIT, "model": None, "gpu": None, "leftovers": ()}),
    ("1234567", {"model": None, "gpu": None}),
    ("SELECT * FROM users;", {"model": None, "users": None}),
]


def _check_name(field: str, got: Match | None, want: Any) -> None:
    if want is None:
        assert got is None or got.ambiguous and not got.suggestions, f"{field}: expected nothing, got {got}"
    elif isinstance(want, Amb):
        assert got is not None and got.id is None, f"{field}: expected no answer, got {got}"
        assert got.ambiguous or got.unknown, f"{field}: expected ambiguous or unknown, got {got}"
        offered = set(got.suggestions) | set(got.choices)
        assert set(want.ids) <= offered, f"{field}: suggestions {got.suggestions}, choices {got.choices}"
        assert 1 <= len(got.suggestions) <= 3 or got.choices or not want.ids
    else:
        assert got is not None and got.id == want and not got.ambiguous, f"{field}: expected {want}, got {got}"


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_parse_table(text: str, expected: dict[str, Any]) -> None:
    q = ask(text)
    for field, want in expected.items():
        got = getattr(q, field)
        if field in ("model", "model2", "gpu", "gpu2"):
            _check_name(field, got, want)
        else:
            assert got == want, f"{field}: expected {want!r}, got {got!r} in {q}"


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize(
    ("text", "explicit", "not_explicit"),
    [
        (
            "/fit glm 4.5 air 4090 32k",
            {"intent", "model", "gpu", "context"},
            {"gpu_count", "quant", "kv_cache"},
        ),
        (
            "glm 4.5 air on 2x 3090 q4",
            {"model", "gpu", "gpu_count", "quant"},
            {"intent", "context", "engine"},
        ),
        ("wie schnell ist qwen3 8b mit vllm", {"intent", "model", "engine"}, {"gpu", "users"}),
    ],
)
def test_explicit_fields(text: str, explicit: set[str], not_explicit: set[str]) -> None:
    q = ask(text)
    assert explicit <= q.explicit
    assert not (not_explicit & q.explicit)


def test_match_keeps_the_users_words() -> None:
    q = ask("Can I run GLM-4.5-Air on my RTX 5090?")
    assert q.model is not None and q.model.text == "GLM-4.5-Air"
    assert q.gpu is not None and q.gpu.text == "5090" and q.gpu.score == 100.0


def test_leftovers_name_unknown_words() -> None:
    assert ask("glm 4.5 air on 4090 foobar").leftovers == ("foobar",)


@pytest.mark.parametrize(("text", "expected"), [c for c in CASES if "/" not in c[0]][:60])
def test_case_does_not_matter(text: str, expected: dict[str, Any]) -> None:
    lower, upper = ask(text.lower()), ask(text.upper())
    for field in ("model", "gpu"):
        got_lower, got_upper = getattr(lower, field), getattr(upper, field)
        assert (got_lower and (got_lower.id, got_lower.suggestions)) == (
            got_upper and (got_upper.id, got_upper.suggestions)
        )
    for field in ("gpu_count", "quant", "context", "kv_cache", "ram_gb", "users"):
        assert getattr(lower, field) == getattr(upper, field)


def test_empty_vocabulary() -> None:
    q = parse("glm 4.5 air on 4090 q4 32k", Vocabulary(models=(), gpus=(), quants=()))
    assert q.model is None and q.gpu is None and q.quant is None and q.context == 32768


def test_only_stdlib_pydantic_and_rapidfuzz_are_imported() -> None:
    allowed = {"__future__", "re", "unicodedata", "collections", "dataclasses", "enum", "typing",
               "itertools", "functools", "heapq", "importlib", "zlib", "rapidfuzz", "pydantic", "core"}  # fmt: skip
    for path in (pathlib.Path(__file__).parents[2] / "core" / "query").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{path.name} imports {roots - allowed}"


# --- properties --------------------------------------------------------------------------

_WORDS = [
    "qwen3", "32b", "llama", "3.1", "70b", "on", "2x", "3090", "4090", "mac", "studio", "128gb", "ram",
    "kv", "q8", "q4_k_m", "32k", "ctx", "=", "1M", "vs", "/", "@", "x", ":", "zwei", "gb", "prompt",
    "users", "hf.co/", "https://", "m3", "ultra", "512", "-", ".", "ü", "🙂", "<b>", "\x00", "\n", "ß", "İ",
]  # fmt: skip


def _check_invariants(q: Query) -> None:
    assert isinstance(q, Query)
    for m, ids in ((q.model, MODEL_IDS), (q.model2, MODEL_IDS), (q.gpu, GPU_IDS), (q.gpu2, GPU_IDS)):
        if m is not None:
            assert (m.id is None) == (m.ambiguous or m.unknown)
            assert m.id is None or m.id in ids
            assert set(m.suggestions) <= ids and len(m.suggestions) <= 3
            assert set(m.choices) <= ids
            assert 0.0 <= m.score <= 100.0
    assert q.quant is None or q.quant in QUANTS
    # a count written as a product ("200 x 3090") is kept above 64 so that the answer names the limit
    assert 1 <= q.gpu_count <= 9999
    assert len(q.leftovers) <= 10


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_parse_never_raises_on_any_text(text: str) -> None:
    _check_invariants(ask(text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=30).map(" ".join))
def test_parse_never_raises_on_near_miss_text(text: str) -> None:
    q = ask(text)
    _check_invariants(q)
    assert ask(text) == q  # deterministic


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=60).map(lambda s: (s * (11_000 // len(s) + 1))[:11_000]))
def test_parse_survives_long_text(text: str) -> None:
    _check_invariants(ask(text))


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,
        "1" * 10_000,
        "q4_k_m " * 2000,
        "\x00\x01\x02\x1b[31m" * 500,
        "<script>alert(1)</script>" * 100,
        "**qwen3** __32b__ `4090` [link](http://x)",
        "🙂" * 3000,
        "ﷺ" * 3000,  # NFKC expands this one character to many
        "9" * 5000 + "k context",
        "/fit" + "@" * 3000,
        "hf.co/" + "a/" * 1000,
    ],
)
def test_parse_survives_hostile_text(text: str) -> None:
    _check_invariants(ask(text))
