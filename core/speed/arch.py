"""What llama.cpp's kernels can use of each chip generation: matrix rate, clock, device class.

The catalog's ``fp16_tflops`` is the vendor's dense FP16 tensor figure, and vendors do not agree on
what that means (GeForce and L40/L20 list the FP32-accumulate rate, which is half the FP16-accumulate
rate; A100/H100/B200 list the rate of tensor cores four to eight times wider per SM than the ones
llama.cpp's kernels are written for). This module turns that figure into the *matrix rate llama.cpp
reaches the basis of*: the FP16-accumulate ``mma.sync`` rate of a consumer-style SM (1024 FLOP per
clock per SM on Turing, Ampere GA10x, Ada and Blackwell GB20x; NVIDIA Turing/Ampere/Ada
architecture whitepapers, "Tensor Cores" tables). llama.cpp's MMQ kernels use the synchronous
``mma.sync`` instructions sized for those SMs and do not use Hopper's ``wgmma``/TMA or Blackwell's
``tcgen05`` (ggml/src/ggml-cuda/mma.cuh), so a bigger per-SM tensor unit mostly goes unused: the
llama.cpp CUDA scoreboard (ggml-org/llama.cpp discussion #15013) has an A100 80 GB at 4850 t/s and
an H100 80 GB at 9918 t/s for Llama-2-7B Q4_0 pp512, where an RTX 3090 Ti reaches 6567 t/s.

The per-SM rate times SMs times boost clock gives, for each generation, a share of the listed
figure (``matrix_share``): A100 108 SM x 1.41 GHz x 1024 = 156 TFLOPS of a listed 312 -> 0.5;
H100 SXM 132 SM x 1.98 GHz x 1024 = 268 of 989 -> 0.27 (H100 PCIe 114 x 1.755 -> 205 of 756 -> 0.27);
B200 148 SM x 1.97 GHz x 1024 = 298 of 2250 -> 0.13.

AMD: RDNA3/3.5/4 list the WMMA rate (512 FLOP/clk/CU for RDNA3, e.g. 7900 XTX 96 CU x 2.5 GHz x 512
= 123 TFLOPS; AMD RDNA3 ISA guide sec. 7.9); llama.cpp's MMQ on RDNA runs int8 dot products
(``v_dot4_i32_i8``, 4 MACs per lane) at the same per-CU rate. RDNA2 lists packed FP16 (256
FLOP/clk/CU); its dot4 path peaks at twice that, but ROCm MMQ and the Vulkan shaders (which on RDNA2
often run without integer dot products) reach 1.4x on the scoreboards (#15021, #10879: the one
per-generation rate here read off measurements rather than a datasheet; 2.0 over-predicts RDNA2
prompts by 40-65 %). CDNA lists MFMA rates of matrix cores
llama.cpp's MMQ uses only for select types and batch sizes -> the vector rate (see the table; rough, no
calibration rows).

Apple GPUs run FP16 at the FP32 rate and the catalog lists no TFLOPS: the rate comes from the
bandwidth at the generation's FLOP-per-byte ratio of its Pro/Max/Ultra chips (Apple spec sheets:
M1 Max 10.4 TFLOPS / 400 GB/s = 26, M2 Max 13.6 / 400 = 34, M3 Max 16.4 / 400 = 41,
M4 Max 17.0 / 546 = 31). The M5 GPU adds per-core neural accelerators that llama.cpp's Metal
backend uses for matrix multiplication (see the table entry); no calibration rows, so rough.

``clock_ghz`` (typical boost clock, TechPowerUp GPU database / vendor spec sheets) scales the fixed
per-layer cost: a kernel launch, a synchronisation and the small latency-bound kernels (norms, rope,
adds) take a number of clock cycles, so a 1.4 GHz A100 pays about twice the per-layer time of a
2.5 GHz RTX 4090 (scoreboard: 5.2 ms vs 5.3 ms per Llama-2-7B token at half the bandwidth).
"""

from __future__ import annotations

from typing import NamedTuple

from core.models import Backend, GpuSpec


class ArchProfile(NamedTuple):  # not a frozen dataclass: as immutable, far cheaper to create at import
    """How llama.cpp sees one chip generation."""

    clock_ghz: float  # typical boost clock: per-layer fixed cost is clock cycles
    matrix_share: float = 1.0  # share of the listed FP16 tensor figure llama.cpp's GEMM kernels are built for
    flop_per_byte: float | None = None  # matrix FLOP/s per byte/s of bandwidth when no TFLOPS are listed
    known: bool = True  # False: figures by analogy, no source for this generation specifically
    hbm: bool = False  # HBM memory: a single decode stream reaches less of its peak (``HBM_BANDWIDTH_FACTOR``)
    pre_ampere: bool = False  # NVIDIA before Ampere: ``PRE_AMPERE_MATRIX_FACTOR`` (kernels tuned for sm_80+)
    # Pascal: ``PRE_AMPERE_BANDWIDTH_FACTOR`` too (Turing's and Volta's decode rows fit without it)
    pre_ampere_decode: bool = False
    # False: flop_per_byte is the basis (Apple, SoCs, Pascal: the listed FP16 figure is not the path
    # llama.cpp takes, or there is none); True: the listed figure, flop_per_byte only as a rough stand-in
    use_listed: bool = True
    # False: before Ampere, where ggml-cuda runs without CUDA graphs (``NO_CUDA_GRAPHS_LATENCY_FACTOR``)
    cuda_graphs: bool = True
    # Intel Xe-HPG (Alchemist): decode reaches ``XE_HPG_BANDWIDTH_FACTOR`` of what Xe2 reaches, whatever the backend
    xe_hpg: bool = False


# Keyed by GpuSpec.arch. Clocks: TechPowerUp GPU database boost clocks of the family's main parts.
ARCH: dict[str, ArchProfile] = {
    # NVIDIA
    # Pascal has no tensor cores: MMQ runs dp4a (4 int8 MACs per lane and clock = 4x the FP32 rate);
    # the catalog lists no usable FP16 figure (1/64 rate on GP102/GP104), so FLOP per byte of the
    # dp4a rate: GTX 1080 Ti 45 TOPS / 484 GB/s = 94, P40 47/347 = 135, GTX 1070 Ti 33/256 = 128.
    # (the catalog lists FP32 or 1/64-rate FP16 figures for these chips; neither is the dp4a path)
    "pascal": ArchProfile(
        1.6, flop_per_byte=110.0, pre_ampere=True, use_listed=False, pre_ampere_decode=True, cuda_graphs=False
    ),
    # P100 (GP100): no dp4a, so no MMQ at all: prompts run dequantize + cuBLAS FP16 GEMM at the listed
    # 2x-FP32 rate (ggml-cuda ggml_cuda_should_use_mmq needs dp4a, cc >= 610; GP100 is cc 600), which the
    # pre-Ampere MMQ factor does not describe; decode runs the dp4a-free mat-vec kernels
    "pascal-hbm": ArchProfile(1.48, matrix_share=1.0, hbm=True, pre_ampere_decode=True, cuda_graphs=False),
    # V100 80 SM x 1.53 x 1024 = 125 = listed; T4 40 SM x 1.59 x 1024 = 65 = listed
    "volta": ArchProfile(1.53, matrix_share=1.0, hbm=True, pre_ampere=True, cuda_graphs=False),
    "turing": ArchProfile(1.6, matrix_share=1.0, pre_ampere=True, cuda_graphs=False),
    # GTX 16xx (TU116/TU117): no tensor cores. The listed figure is packed FP16, 2x FP32, which equals
    # the dp4a int8 rate (4x FP32) at the FP16 basis the GeForce doubling stands for; under CUDA see
    # TURING_GTX_CUDA_MMA_SHARE
    "turing-gtx": ArchProfile(1.6, matrix_share=1.0, pre_ampere=True, cuda_graphs=False),
    "ampere": ArchProfile(1.8, matrix_share=1.0),  # GA10x: listed (after GeForce x2) = 1024/clk/SM
    "ampere-dc": ArchProfile(1.41, matrix_share=0.5, hbm=True),  # A100: 2048/clk/SM tensor, MMQ uses half
    # Jetson AGX Orin 64GB: GA10B has A100-style tensor cores (NVIDIA: 170 sparse INT8 TOPS for the
    # GPU -> 85 dense INT8 -> 42.5 TFLOPS at the FP16 basis) / 204.8 GB/s
    "ampere-soc": ArchProfile(1.3, flop_per_byte=42.5e12 / 204.8e9, use_listed=False),
    "ada": ArchProfile(2.5, matrix_share=1.0),
    # no listed figure (H100/H200 NVL): the mma.sync basis per byte, 132 SM x 1.785 GHz x 1024 = 241 TFLOPS
    # over 3940-4800 GB/s
    "hopper": ArchProfile(1.85, matrix_share=0.27, hbm=True, flop_per_byte=55.0),
    "blackwell": ArchProfile(2.5, matrix_share=1.0),
    "blackwell-dc": ArchProfile(1.97, matrix_share=0.13, hbm=True),
    # GB10 (DGX Spark): 1 PFLOPS sparse FP4 -> 125 TFLOPS dense FP16 (FP16 accumulate) / 273 GB/s
    "blackwell-soc": ArchProfile(2.4, flop_per_byte=125e12 / 273e9, use_listed=False),
    # AMD
    "rdna2": ArchProfile(2.25, matrix_share=1.4),
    "rdna3": ArchProfile(2.5, matrix_share=1.0),
    "rdna3.5": ArchProfile(2.9, matrix_share=1.0),  # Strix Halo 40 CU x 2.9 GHz x 512 = 59.4
    "rdna4": ArchProfile(2.97, matrix_share=1.0),
    "gcn5": ArchProfile(1.73, matrix_share=1.0, hbm=True),  # Vega 20 (MI50): listed packed FP16
    # CDNA: the catalog lists the MFMA (matrix core) FP16 rate; llama.cpp's HIP MMQ takes its MFMA path on CDNA
    # only "on datatype and batch sizes where tested to be more performant" (ggml-org/llama.cpp PR #14949, for
    # gfx908/gfx90a; CDNA3 likewise), the rest runs the int8 dot-product kernels that GCN's MI50 (``gcn5``, with
    # calibration rows) runs, at the vector rate. So the share is the packed-FP16 vector rate (2 x the FP32 vector
    # rate without dual issue) over the listed matrix rate, from AMD's data sheets: MI210/MI250X 45.3/181 and
    # 95.7/383 -> 0.25; MI300X 163.4/1307.4 -> 0.125 (MI325X the same chip); MI355X 157.3/2516 -> 0.0625.
    "cdna2": ArchProfile(1.7, matrix_share=0.25, known=False, hbm=True),
    "cdna3": ArchProfile(2.1, matrix_share=0.125, known=False, hbm=True),
    "cdna4": ArchProfile(2.4, matrix_share=0.0625, known=False, hbm=True),
    # Intel (listed XMX FP16 rate)
    # Alchemist decodes at a lower share of its bandwidth than Battlemage under both backends: Llama-2-7B Q4_0 at
    # 52.6 t/s on an A770 under Vulkan (discussion #10879) and 55 under SYCL (llama.cpp docs/backend/SYCL.md, 2025.2
    # table), 0.36-0.38 of 560 GB/s, where a B580 reaches 0.58 (#10879) and 0.68 (intel/ipex-llm#12991)
    "xe-hpg": ArchProfile(2.1, matrix_share=1.0, xe_hpg=True),
    "xe2": ArchProfile(2.67, matrix_share=1.0),
    # Apple: FLOP per byte of the generation (see module docstring)
    "apple-m1": ArchProfile(1.28, flop_per_byte=26.0, use_listed=False),
    "apple-m2": ArchProfile(1.40, flop_per_byte=34.0, use_listed=False),
    "apple-m3": ArchProfile(1.40, flop_per_byte=41.0, use_listed=False),
    "apple-m4": ArchProfile(1.58, flop_per_byte=31.0, use_listed=False),
    # M5: per-core neural accelerators that llama.cpp's Metal backend drives through the Metal 4 tensor
    # API (ggml-org/llama.cpp PR #16634); with it on, prompt processing is 2-3x the same Mac without it
    # (lmstudio-ai/lmstudio-bug-tracker issue #2040, M5 Max, llama.cpp b9592). M4's 31 FLOP/B, scaled by
    # M5's more bandwidth per core (10 cores on 153.6 vs 120 GB/s) and x2.5: about 62. No rows: rough.
    "apple-m5": ArchProfile(1.58, flop_per_byte=62.0, known=False, use_listed=False),
    # Maxwell: no tensor cores, no dp4a, FP16 at 1/32 or slower: the FP32 rate per byte (GTX 980 Ti
    # 6.1 TFLOPS / 336 GB/s = 18; Tesla M40 7.0 / 288 = 24). No rows: rough.
    "maxwell": ArchProfile(
        1.1,
        flop_per_byte=20.0,
        pre_ampere=True,
        known=False,
        use_listed=False,
        pre_ampere_decode=True,
        cuda_graphs=False,
    ),
    "cdna1": ArchProfile(1.5, matrix_share=0.25, known=False, hbm=True),  # MI100: MFMA FP16 184.6, vector 46.1
    "rdna1": ArchProfile(1.9, matrix_share=1.0, known=False),  # RX 5700 XT: listed packed FP16, no WMMA
    # CPU-only device (core/devices.py, "CPU only with 64 GB RAM"): a 4 GHz core clock, the listed figure as given
    "cpu": ArchProfile(4.0, matrix_share=1.0, known=False),
}
# Other names for the same generations, and devices whose chip differs from their generation's name:
# the Tesla P100 (GP100) is "pascal" in the catalog but, unlike every other Pascal chip, runs FP16 at
# twice the FP32 rate and has no dp4a (its listed FP16 figure is the path llama.cpp takes) and HBM2.
ARCH_ALIASES: dict[str, str] = {"orin": "ampere-soc"}
ARCH_BY_DEVICE: dict[str, str] = {
    "tesla-p100": "pascal-hbm",
    "tesla-p100-12gb": "pascal-hbm",
    "tesla-p100-16gb": "pascal-hbm",
    "tesla-p100-sxm2": "pascal-hbm",
}

# Anything else (unknown generations, accelerators): flagged rough.
# Consumer/workstation/APU parts of an unknown generation (or a generic "N GB" device): the listed
# figure as given; datacenter parts and accelerators: half of it (their listed tensor peaks are the
# ones llama.cpp's kernels use least, see hopper/ampere-dc above) and HBM.
FALLBACK_ARCH = ArchProfile(1.8, matrix_share=1.0, known=False)
ACCELERATOR_ARCH = ArchProfile(1.8, matrix_share=0.5, known=False, hbm=True)
# FLOP per byte when neither TFLOPS nor an arch ratio are known, by category (consumer: RTX 4070
# 117 (FP16-acc) / 504 GB/s = 232; datacenter: H100 mma-basis 268 / 3350 = 80; APU: Strix Halo 59/256).
FLOP_PER_BYTE_BY_CATEGORY: dict[str, float] = {
    "consumer": 200.0,
    "workstation": 200.0,
    "datacenter": 100.0,
    "accelerator": 100.0,
    "apple": 31.0,
    "apu": 230.0,
}
# Cards whose catalog figure is the FP32-accumulate rate (half of FP16-accumulate), besides GeForce:
# NVIDIA L40 datasheet 181 TFLOPS FP16 (362 sparse) for 142 SM x 2.49 GHz x 1024 = 362 at FP16
# accumulate; L20 likewise (92 SM x 2.52 GHz x 1024 = 237, listed 119.5).
FP32_ACCUMULATE_LISTED = frozenset({"l40", "l20"})
# ... except the Titan V: a GV100 (the V100's chip) on a consumer board, whose listed 110 TFLOPS is the
# full tensor rate (NVIDIA's figure, at the ~1.35 GHz it rates the card at; 80 SM x 1.455 GHz boost x 1024 would
# be 119, the catalog row's override says why it keeps NVIDIA's), like the V100's.
FULL_RATE_CONSUMER_ARCHS = frozenset({"volta"})
# Intel Arc under Vulkan: llama.cpp's Vulkan matmul shaders reach the XMX units only through
# cooperative matrices, which ggml-vulkan.cpp (ggml_vk_khr_cooperative_matrix_support) turns off for
# every Intel GPU but Xe2 ("older hardware (ex. Arc A770) has performance regressions"). Without them
# the shaders run on the vector ALUs at the FP16 vector rate: 512 FLOP/clk per Xe core against XMX's
# 2048 (Intel Xe-HPG and Xe2 architecture briefs) -> 1/4 of the listed XMX figure. The Xe2 rows of the
# Vulkan scoreboard (ggml-org/llama.cpp discussion #10879: B580 621 t/s pp512 where the A770 reaches
# 1074 on Llama-2-7B Q4_0) sit at the same vector-rate class, so Xe2 gets the vector rate as well.
VULKAN_INTEL_MATRIX_SHARE = 0.25
# Intel Arc under SYCL (upstream ggml-sycl): a prompt ubatch above 32 tokens leaves MMQ
# (``MMQ_MAX_BATCH_SIZE`` 32 under ``SYCL_USE_XMX``, ggml-sycl.cpp ``ggml_sycl_mul_mat``) for
# ``ggml_sycl_op_mul_mat_sycl``: the weights dequantized and one oneMKL/oneDNN GEMM, in FP32 unless the build
# sets ``GGML_SYCL_F16`` (off by default, llama.cpp docs/backend/SYCL.md; logs print "GGML_SYCL_F16: no",
# ggml-org/llama.cpp issue #6036). Xe-HPG and Xe2 XMX engines have no FP32 mode, so the GEMM runs on the
# vector ALUs at the FP32 rate: 256 FLOP/clk per Xe core against XMX's 2048 FP16 (Intel Xe-HPG and Xe2
# architecture briefs) -> 1/8 of the listed XMX figure. On an A770 oneMKL reaches 16.5 TFLOPS in FP32 and 58.7
# in FP16 at 4096^3 (ollama/ollama PR #2458, oneAPI matrix_mul_mkl sample), the 1/4 that FP32 vs XMX at
# real clocks gives. (IPEX-LLM's fork runs its own XMX kernels: its prompt rows are not this path, see
# bench/speed_data.py ``FORK_BUILD_NOTES``.)
SYCL_INTEL_MATRIX_SHARE = 0.125
# GTX 16xx under CUDA: the chips report compute capability 7.5, so llama.cpp's MMQ takes the Turing
# int8 mma.sync path, which TU116/TU117 execute without tensor cores at a fraction of the dp4a rate the
# Vulkan shaders reach: Llama-2-7B Q4_0 prompts at 2.2 TFLOPS under CUDA against 7 under Vulkan on a
# GTX 1660 (ggml-org/llama.cpp issue #15233; PR #15360 and #15468 proposed turning mma off for these
# chips and were closed unmerged, so current builds still take it) -> 2.2 / 7.
TURING_GTX_CUDA_MMA_SHARE = 2.2 / 7.0
# Per-device exceptions to the generation's matrix_share: the H20's tensor rate is capped at 148 TFLOPS
# (78 SM), close to what its SMs reach through mma.sync (78 x 1.98 GHz x 1024 = 158), so all of it counts.
MATRIX_SHARE_OVERRIDE: dict[str, float] = {"h20-96gb": 1.0, "h20-141gb": 1.0}


def canonical_arch(gpu: GpuSpec) -> str:
    """The generation name the speed constants use for this device (aliases and exceptions resolved).

    The catalog files every Turing chip as ``turing``; the GTX 16 series (TU116/TU117, all named GTX)
    has no tensor cores (NVIDIA Turing whitepaper lists them for TU102/104/106 only), so it is
    ``turing-gtx`` here."""
    if gpu.id in ARCH_BY_DEVICE:
        return ARCH_BY_DEVICE[gpu.id]
    if gpu.arch == "turing" and "gtx" in gpu.name.lower():
        return "turing-gtx"
    return ARCH_ALIASES.get(gpu.arch, gpu.arch)


def arch_profile(gpu: GpuSpec) -> ArchProfile:
    """The generation's profile, or the fallback (``known=False``) for a generation not in the table."""
    arch = canonical_arch(gpu)
    if arch in ARCH:
        return ARCH[arch]
    return ACCELERATOR_ARCH if gpu.category in ("datacenter", "accelerator") else FALLBACK_ARCH


def is_igpu(gpu: GpuSpec) -> bool:
    """Integrated GPU / APU sharing system memory (Strix Halo, Strix Point, Lunar Lake, DGX Spark,
    Jetson): its own class, with power-limited clocks and LPDDR latency. Apple is its own backend."""
    if gpu.backend in (Backend.METAL, Backend.CPU):
        return False
    return gpu.category == "apu" or gpu.unified_memory


def consumer_board(gpu: GpuSpec) -> bool:
    """A discrete consumer board (GeForce, Radeon RX, Arc): ``CONSUMER_CLOCK_FACTOR`` applies."""
    return gpu.category == "consumer" and gpu.backend is not Backend.CPU


def matrix_tflops(gpu: GpuSpec) -> tuple[float, bool]:
    """Dense matrix TFLOPS llama.cpp's prompt kernels are built for, and whether it is a rough figure.

    Listed figure x 2 where the catalog lists the FP32-accumulate rate (GeForce, L40, L20), times the
    generation's ``matrix_share``; without a listed figure, bandwidth x the generation's (or the
    category's) FLOP per byte.
    """
    profile, arch = arch_profile(gpu), canonical_arch(gpu)
    if gpu.fp16_tflops is not None and profile.use_listed:
        geforce = gpu.vendor.upper() == "NVIDIA" and gpu.category == "consumer" and arch not in FULL_RATE_CONSUMER_ARCHS
        half_rate = geforce or gpu.id in FP32_ACCUMULATE_LISTED
        listed = gpu.fp16_tflops * (2.0 if half_rate else 1.0)
        if gpu.backend is Backend.VULKAN and gpu.vendor.lower() == "intel":
            listed *= VULKAN_INTEL_MATRIX_SHARE
        if gpu.backend is Backend.SYCL and gpu.vendor.lower() == "intel":
            listed *= SYCL_INTEL_MATRIX_SHARE
        if gpu.backend is Backend.CUDA and arch == "turing-gtx":
            listed *= TURING_GTX_CUDA_MMA_SHARE
        return listed * MATRIX_SHARE_OVERRIDE.get(gpu.id, profile.matrix_share), not profile.known
    ratio = profile.flop_per_byte
    if ratio is None:
        return gpu.bandwidth_bytes_per_s * FLOP_PER_BYTE_BY_CATEGORY.get(gpu.category, 150.0) / 1e12, True
    return gpu.bandwidth_bytes_per_s * ratio / 1e12, profile.use_listed or not profile.known
