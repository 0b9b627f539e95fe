"""Model and GPU specs for core tests, written out so tests run without the catalog files."""

from __future__ import annotations

from core.models import MIB, AttentionKind, Backend, GpuSpec, ModelSpec, Provenance, QuantSpec

PROV = Provenance(source="test fixture", as_of="2026-11")

LLAMA3_8B = ModelSpec(
    id="llama-3-8b",
    name="Llama 3 8B",
    family="llama",
    total_params=8_030_261_248,
    active_params=8_030_261_248,
    n_layers=32,
    hidden_size=4096,
    n_heads=32,
    n_kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=131072,
    provenance=PROV,
)
GLM_AIR = ModelSpec(
    id="glm-4.5-air",
    name="GLM-4.5-Air",
    family="glm",
    total_params=110_470_000_000,
    active_params=12_000_000_000,
    n_layers=46,
    hidden_size=4096,
    n_heads=96,
    n_kv_heads=8,
    head_dim=128,
    n_experts=128,
    experts_per_token=8,
    n_shared_experts=1,
    moe_intermediate_size=1408,
    vocab_size=151552,
    max_context=131072,
    provenance=PROV,
)
DEEPSEEK_V3 = ModelSpec(
    id="deepseek-v3",
    name="DeepSeek V3",
    family="deepseek",
    total_params=671_000_000_000,
    active_params=37_000_000_000,
    n_layers=61,
    hidden_size=7168,
    n_heads=128,
    n_kv_heads=128,
    head_dim=192,
    v_head_dim=128,
    attention=AttentionKind.MLA,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    n_experts=256,
    experts_per_token=8,
    n_shared_experts=1,
    moe_intermediate_size=2048,
    vocab_size=129280,
    max_context=163840,
    provenance=PROV,
)
GEMMA3_27B = ModelSpec(
    id="gemma-3-27b",
    name="Gemma 3 27B",
    family="gemma3",
    total_params=27_010_000_000,
    active_params=27_010_000_000,
    n_layers=62,
    hidden_size=5376,
    n_heads=32,
    n_kv_heads=16,
    head_dim=128,
    sliding_window=1024,
    n_sliding_layers=52,
    vocab_size=262208,
    max_context=131072,
    tied_embeddings=True,
    provenance=PROV,
)
QWEN3_NEXT = ModelSpec(
    id="qwen3-next-80b-a3b",
    name="Qwen3-Next 80B-A3B",
    family="qwen3_next",
    total_params=80_000_000_000,
    active_params=3_000_000_000,
    n_layers=48,
    hidden_size=2048,
    n_heads=16,
    n_kv_heads=2,
    head_dim=256,
    n_linear_layers=36,
    linear_state_bytes=32 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 32 * 128) * 4,
    n_experts=512,
    experts_per_token=10,
    n_shared_experts=1,
    moe_intermediate_size=512,
    vocab_size=151936,
    max_context=262144,
    provenance=PROV,
)

RTX_4090 = GpuSpec(
    id="rtx-4090",
    name="NVIDIA GeForce RTX 4090",
    short_name="RTX 4090",
    vendor="NVIDIA",
    category="consumer",
    memory_bytes=24564 * MIB,
    bandwidth_bytes_per_s=1008e9,
    fp16_tflops=165.2,
    tdp_watts=450,
    backend=Backend.CUDA,
    provenance=PROV,
)
RTX_3090 = GpuSpec(
    id="rtx-3090",
    name="NVIDIA GeForce RTX 3090",
    short_name="RTX 3090",
    vendor="NVIDIA",
    category="consumer",
    memory_bytes=24576 * MIB,
    bandwidth_bytes_per_s=936.2e9,
    fp16_tflops=71.2,
    tdp_watts=350,
    backend=Backend.CUDA,
    provenance=PROV,
)
H100 = GpuSpec(
    id="h100-sxm",
    name="NVIDIA H100 80GB SXM",
    short_name="H100 SXM",
    vendor="NVIDIA",
    category="datacenter",
    memory_bytes=81559 * MIB,
    bandwidth_bytes_per_s=3350e9,
    fp16_tflops=989,
    tdp_watts=700,
    interconnect="nvlink",
    backend=Backend.CUDA,
    provenance=PROV,
)
M3_ULTRA_512 = GpuSpec(
    id="m3-ultra-512",
    name="Apple Mac Studio M3 Ultra 512GB",
    short_name="M3 Ultra 512GB",
    vendor="Apple",
    category="apple",
    memory_bytes=512 * 1024 * MIB,
    bandwidth_bytes_per_s=819e9,
    fp16_tflops=57,
    unified_memory=True,
    backend=Backend.METAL,
    interconnect="none",
    provenance=PROV,
)


def quant(
    qid: str,
    dense: float,
    experts: float | None = None,
    embed: float | None = None,
    output: float = 6.5625,
    unaligned: float | None = None,
) -> QuantSpec:
    return QuantSpec(
        id=qid,
        label=qid,
        format="gguf",
        bits=dense,
        bpw_dense=dense,
        bpw_experts=experts or dense,
        bpw_experts_unaligned=unaligned,
        bpw_embed=embed or dense,
        bpw_output=output,
        provenance=PROV,
    )


Q4_K_M = quant("Q4_K_M", 4.804, embed=4.5, unaligned=5.33)
Q8_0 = quant("Q8_0", 8.505, embed=8.5, output=8.5)
BF16 = QuantSpec(
    id="BF16",
    label="BF16",
    format="checkpoint",
    bits=16,
    bpw_dense=16,
    bpw_experts=16,
    bpw_embed=16,
    bpw_output=16,
    engines=("llama.cpp", "vllm"),
    provenance=PROV,
)
