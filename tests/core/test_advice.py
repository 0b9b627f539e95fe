"""Advice: best quant, KV-cache savings, hardware picks, and launch commands that reproduce their estimate."""

from __future__ import annotations

import pytest

from bot.cards.notes import note_text
from core.advice import best_quant, choose_quant, kv_savings, nearest_fix, recommend_hardware
from core.cost import quote_offers
from core.estimate import Request, estimate, scenario
from core.fit import Verdict
from core.launch.commands import launch_command, launch_commands
from core.models import MIB, Catalog, CloudOffer, Engine, KvCacheType, QuantSpec
from core.quants.ladder import candidates
from core.regions import REGION_RESTRICTED
from tests.core.specs import (
    BF16,
    DEEPSEEK_V3,
    H100,
    LLAMA3_8B,
    M3_ULTRA_512,
    PROV,
    Q4_K_M,
    Q8_0,
    RTX_3090,
    RTX_4090,
)
from tests.core.specs import (
    GLM_AIR as GLM_AIR_BARE,
)

LLAMA_8B = LLAMA3_8B.model_copy(
    update={"hf_repo": "meta-llama/Meta-Llama-3-8B-Instruct", "gguf_repo": "bartowski/Meta-Llama-3-8B-Instruct-GGUF"}
)
LLAMA_70B = LLAMA_8B.model_copy(
    update={
        "id": "llama-3-70b",
        "total_params": 70_553_706_496,
        "active_params": 70_553_706_496,
        "n_layers": 80,
        "hidden_size": 8192,
        "n_heads": 64,
        "hf_repo": "meta-llama/Meta-Llama-3-70B-Instruct",
        "gguf_repo": "bartowski/Meta-Llama-3-70B-Instruct-GGUF",
    }
)
GLM_AIR = GLM_AIR_BARE.model_copy(update={"hf_repo": "zai-org/GLM-4.5-Air", "gguf_repo": "unsloth/GLM-4.5-Air-GGUF"})
GPT_OSS = GLM_AIR.model_copy(update={"id": "gpt-oss-120b", "native_dtype": "mxfp4", "hf_repo": "openai/gpt-oss-120b"})
MXFP4 = QuantSpec(
    id="MXFP4",
    label="MXFP4",
    format="checkpoint",
    bits=4.25,
    bpw_dense=16,
    bpw_experts=4.25,
    bpw_embed=16,
    bpw_output=16,
    engines=(Engine.LLAMA_CPP, Engine.VLLM),
    provenance=PROV,
)
FP8 = QuantSpec(
    id="FP8",
    label="FP8",
    format="checkpoint",
    bits=8,
    bpw_dense=8,
    bpw_experts=8,
    bpw_embed=16,
    bpw_output=16,
    engines=(Engine.VLLM,),
    vllm_quantization="fp8",
    provenance=PROV,
)
RTX_3060 = RTX_3090.model_copy(
    update={
        "id": "rtx-3060-12gb",
        "short_name": "RTX 3060",
        "memory_bytes": 12288 * MIB,
        "bandwidth_bytes_per_s": 360e9,
        "price_usd": 250.0,
    }
)
USED_3090 = RTX_3090.model_copy(update={"price_usd": 700.0})
RTX_5090 = RTX_4090.model_copy(
    update={
        "id": "rtx-5090",
        "short_name": "RTX 5090",
        "memory_bytes": 32607 * MIB,
        "bandwidth_bytes_per_s": 1792e9,
        "price_usd": 1999.0,
    }
)
MAC_96 = M3_ULTRA_512.model_copy(
    update={"id": "m3-ultra-96", "short_name": "M3 Ultra 96GB", "memory_bytes": 96 * 1024 * MIB, "price_usd": 3999.0}
)
MAC_512 = M3_ULTRA_512.model_copy(update={"price_usd": 9500.0})
CATALOG = Catalog(
    gpus=(RTX_3060, USED_3090, RTX_4090, RTX_5090, H100, MAC_96, MAC_512),
    models=(LLAMA_8B, LLAMA_70B, GLM_AIR),
    quants=(Q4_K_M, Q8_0, BF16, MXFP4, FP8),
    offers=(
        CloudOffer(
            provider="Hyper",
            instance="1x H100",
            gpu_id="h100-sxm",
            gpu_count=1,
            price_per_hour_usd=2.5,
            seen="2026-10-01",
            provenance=PROV,
        ),
        CloudOffer(
            provider="Budget",
            instance="1x 4090",
            gpu_id="rtx-4090",
            gpu_count=1,
            price_per_hour_usd=0.4,
            seen="2026-10-01",
            provenance=PROV,
        ),
    ),
)


def sc(model, gpu, request, catalog=None, quant=None):
    """The test's question resolved once (``core.estimate.scenario``); a quant handed in keeps its catalog size."""
    catalog = catalog or CATALOG
    if quant is None:
        return scenario(model, gpu, request, catalog)
    return scenario(model, gpu, request, quant=quant, measured=catalog.size(model.id, quant.id))


def test_best_quant_is_the_first_of_the_ladder_that_fits():
    # Llama-3-8B: Q8_0 tops the practitioners' ladder (BF16 doubles the bytes for no visible gain)
    assert best_quant(sc(LLAMA_8B, RTX_4090, Request(), CATALOG), CATALOG).quant == "Q8_0"
    best = best_quant(sc(LLAMA_8B, RTX_3060, Request(), CATALOG), CATALOG)
    assert best.quant == "Q8_0" and best.verdict is Verdict.FITS
    assert estimate(LLAMA_8B, RTX_3060, BF16, Request(quant="BF16")).verdict is not Verdict.FITS
    assert best_quant(sc(DEEPSEEK_V3, RTX_3060, Request(), CATALOG), CATALOG) is None  # 671B: nothing fits 12 GB


def test_best_quant_respects_engine_and_mxfp4():
    assert "MXFP4" not in {q.id for q in candidates(LLAMA_8B, Engine.LLAMA_CPP, CATALOG)}
    assert "MXFP4" in {q.id for q in candidates(GPT_OSS, Engine.LLAMA_CPP, CATALOG)}
    assert {q.id for q in candidates(LLAMA_8B, Engine.VLLM, CATALOG)} == {"BF16", "FP8"}
    assert best_quant(sc(LLAMA_8B, H100, Request(engine=Engine.VLLM), CATALOG), CATALOG).quant == "BF16"
    # 16 GB of BF16 does not fit a 12 GB card under vLLM; FP8 (~9 GB incl. 16-bit embeddings) does only
    # with an fp8 KV cache, which is recommended before anything below 3 bits
    best = best_quant(sc(LLAMA_8B, RTX_3060, Request(engine=Engine.VLLM), CATALOG), CATALOG)
    assert best.quant == "FP8" and best.kv_cache is KvCacheType.FP8


def test_kv_savings_glm_air_at_128k_on_h100():
    options = kv_savings(sc(GLM_AIR, H100, Request(context=131072), quant=Q4_K_M))
    assert [o.kv_cache for o in options] == [KvCacheType.F16, KvCacheType.Q8_0, KvCacheType.Q4_0]
    # 46 layers * 131,072 tokens * 8 heads * (128 + 128) * 2 B = 24,696,061,952 (23 GiB)
    assert options[0].kv_cache_bytes == 24_696_061_952
    # q8_0: 34 bytes per 32 values -> * 34/64 of f16; q4_0: 18/32 bytes -> * 18/64
    assert options[1].kv_cache_bytes == 24_696_061_952 * 34 // 64 == 13_119_782_912
    assert options[2].kv_cache_bytes == 24_696_061_952 * 18 // 64 == 6_945_767_424
    assert options[2].saved_bytes == 24_696_061_952 - 6_945_767_424
    # ~98 GB with f16 and ~87 GB with q8_0 overflow the H100's 85.5 GB; q4_0 (~81 GB) fits on the GPU
    assert [o.verdict for o in options] == [Verdict.OFFLOAD, Verdict.OFFLOAD, Verdict.FITS]
    assert [o.verdict_changed for o in options] == [False, False, True]
    assert options[0].max_context < options[1].max_context < options[2].max_context == 131072


def test_kv_savings_vllm_offers_fp8():
    options = kv_savings(sc(LLAMA_8B, H100, Request(engine=Engine.VLLM, context=32768), quant=BF16))
    assert [o.kv_cache for o in options] == [KvCacheType.BF16, KvCacheType.FP8]
    # 32 layers * 32,768 * 8 * 256 * 2 B = 4 GiB, halved by fp8
    assert options[0].kv_cache_bytes == 4 * 1024 * MIB and options[1].saved_bytes == 2 * 1024 * MIB


def test_recommend_hardware_for_a_70b_q4():
    advice = recommend_hardware(sc(LLAMA_70B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)
    # ~43 GB of weights: the 80 GB H100 is the only single GPU that holds it (and so the fastest)
    assert advice.best_single_gpu.gpu_id == "h100-sxm"
    assert (advice.cheapest.gpu_id, advice.cheapest.count) == ("rtx-3060-12gb", 4)  # $1,000 < 2x 3090 $1,400
    # 2x used 3090 ($1,400) beats 2x 5090 ($3,998): not 1.9x faster for 2.9x the price
    value = advice.best_price_performance
    assert (value.gpu_id, value.count, value.price_usd) == ("rtx-3090", 2, 1400.0)
    assert value.usd_per_token_per_s == pytest.approx(1400.0 / value.decode_tokens_per_s)
    assert advice.best_apple.gpu_id == "m3-ultra-96"  # 72 GB usable of 96 is enough; cheaper than 512 GB
    assert advice.cheapest_cloud.offer.instance == "1x H100"  # the $0.40 4090 cannot hold it
    for setup in (advice.best_single_gpu, value, advice.best_apple):
        assert setup.verdict in (Verdict.FITS, Verdict.TIGHT)
        assert setup.total_bytes <= setup.usable_bytes


def test_best_single_gpu_is_the_fastest_that_fits_and_cheapest_is_cheapest():
    advice = recommend_hardware(sc(LLAMA_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)
    picked = advice.best_single_gpu
    others = [
        estimate(LLAMA_8B, g, Q4_K_M, Request()) for g in CATALOG.gpus if not g.unified_memory and g.id != picked.gpu_id
    ]
    assert all(
        e.speed.decode_tokens_per_s <= picked.decode_tokens_per_s * 1.05 for e in others if e.verdict.value != "no_fit"
    )
    assert picked.gpu_id == "h100-sxm"
    assert advice.cheapest.gpu_id == "rtx-3060-12gb" and advice.cheapest.price_usd == 250.0
    assert advice.cheapest_cloud == quote_offers(sc(LLAMA_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)[0]


def parse(argv: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """Split a server argv into its program and --flag value pairs (every flag here takes a value)."""
    start = 3 if argv[0] == "vllm" else 1
    rest = argv[start:]
    assert len(rest) % 2 == 0, argv
    return argv[0], dict(zip(rest[::2], rest[1::2], strict=True))


def replay(argv: tuple[str, ...], quant: str, ram_gb: float | None) -> Request:
    """The request a command's settings amount to."""
    program, opts = parse(argv)
    if program == "llama-server":
        slots = int(opts.get("--parallel", "1"))
        assert opts["--cache-type-k"] == opts["--cache-type-v"] if "--cache-type-k" in opts else True
        assert opts["--flash-attn"] == "on"
        return Request(
            quant=quant,
            engine=Engine.LLAMA_CPP,
            context=int(opts["--ctx-size"]) // slots,
            concurrent=slots,
            kv_cache=KvCacheType(opts.get("--cache-type-k", "f16")),
            ram_gb=ram_gb,
            gpu_count=len(opts["--tensor-split"].split(",")) if "--tensor-split" in opts else 1,
        )
    assert float(opts["--gpu-memory-utilization"]) == 0.9  # what the estimate assumed
    return Request(
        quant=quant,
        engine=Engine.VLLM,
        context=int(opts["--max-model-len"]),
        concurrent=int(opts.get("--max-num-seqs", "1")),
        gpu_count=int(opts.get("--tensor-parallel-size", "1")),
        kv_cache=KvCacheType(opts.get("--kv-cache-dtype", "bf16")),
        ram_gb=ram_gb,
    )


SCENARIOS = [
    (LLAMA_8B, RTX_4090, Request()),
    (LLAMA_8B, RTX_4090, Request(kv_cache=KvCacheType.Q8_0, concurrent=4, context=16384)),
    (LLAMA_70B, RTX_4090, Request()),  # dense, layer offload: -ngl N
    (GLM_AIR, RTX_4090, Request()),  # MoE, expert offload: --n-cpu-moe N
    (GLM_AIR, RTX_3090, Request(gpu_count=2, kv_cache=KvCacheType.Q4_0, context=32768)),
    (GLM_AIR, H100, Request(context=131072, kv_cache=KvCacheType.Q4_0)),
    (LLAMA_8B, H100, Request(engine=Engine.VLLM, gpu_count=2, kv_cache=KvCacheType.FP8, concurrent=16)),
    (LLAMA_70B, H100, Request(engine=Engine.VLLM, quant="FP8", gpu_count=2)),
    (LLAMA_70B, MAC_512, Request(quant="Q8_0", context=65536)),
]


@pytest.mark.parametrize(("model", "gpu", "request_"), SCENARIOS)
def test_every_launch_command_reproduces_its_estimate(model, gpu, request_):
    commands = launch_commands(sc(model, gpu, request_, CATALOG), CATALOG)
    assert commands
    for cmd in commands:
        replayed = replay(cmd.argv, cmd.quant, request_.ram_gb)
        est = estimate(model, gpu, CATALOG.quant(cmd.quant), replayed, CATALOG.size(model.id, cmd.quant))
        assert est.verdict in (Verdict.FITS, Verdict.TIGHT, Verdict.OFFLOAD)
        assert est.verdict is cmd.verdict
        assert (est.context, est.kv_cache, est.hardware.count) == (cmd.context, cmd.kv_cache, cmd.gpu_count)
        _, opts = parse(cmd.argv)
        if cmd.engine is Engine.LLAMA_CPP:
            assert opts["-hf"] == f"{model.gguf_repo}:{cmd.quant}"
            if "--n-cpu-moe" in opts:
                assert est.offload.mode == "experts" and est.offload.cpu_moe_layers == int(opts["--n-cpu-moe"])
            elif opts["-ngl"] != "999":
                assert est.offload.mode == "layers" and est.offload.layers_on_gpu == int(opts["-ngl"])
            else:
                assert est.offload.mode == "none"
        else:
            assert cmd.argv[2] == model.hf_repo and est.offload.mode == "none"


def test_offload_commands_say_which_and_how_much():
    (dense,) = [c for c in launch_commands(sc(LLAMA_70B, RTX_4090, Request(), CATALOG), CATALOG)]
    assert dense.offload_mode == "layers" and "--n-cpu-moe" not in dense.argv
    moe = launch_commands(sc(GLM_AIR, RTX_4090, Request(), CATALOG), CATALOG)[0]
    assert moe.offload_mode == "experts" and moe.argv[moe.argv.index("-ngl") + 1] == "999"
    assert any("system RAM" in note_text(n, "en") for n in moe.notes)


def test_no_command_that_would_not_fit():
    request = Request()
    est = estimate(DEEPSEEK_V3, RTX_4090, Q4_K_M, request)
    assert est.verdict is Verdict.NO_FIT
    assert launch_command(sc(DEEPSEEK_V3, RTX_4090, request, quant=Q4_K_M), est) is None
    assert launch_commands(sc(DEEPSEEK_V3, RTX_4090, request, CATALOG), CATALOG) == ()
    # vLLM cannot offload: BF16 70B on one H100 gives no vLLM command, llama.cpp still offloads
    engines = {c.engine for c in launch_commands(sc(LLAMA_70B, H100, Request(quant="BF16"), CATALOG), CATALOG)}
    assert Engine.VLLM not in engines


def test_vllm_flags():
    fp8 = launch_commands(sc(LLAMA_70B, H100, Request(engine=Engine.VLLM, quant="FP8", gpu_count=2), CATALOG), CATALOG)[
        0
    ]
    assert fp8.argv[:3] == ("vllm", "serve", "meta-llama/Meta-Llama-3-70B-Instruct")
    _, opts = parse(fp8.argv)
    assert opts["--quantization"] == "fp8" and opts["--tensor-parallel-size"] == "2"
    native = LLAMA_70B.model_copy(update={"native_dtype": "fp8"})
    est = estimate(native, H100, FP8, Request(engine=Engine.VLLM, quant="FP8", gpu_count=2))
    native_s = sc(native, H100, Request(engine=Engine.VLLM, quant="FP8", gpu_count=2), quant=FP8)
    assert "--quantization" not in launch_command(native_s, est).argv  # checkpoint already FP8
    mac = estimate(LLAMA_8B, MAC_512, BF16, Request(engine=Engine.VLLM, quant="BF16"))
    mac_s = sc(LLAMA_8B, MAC_512, Request(engine=Engine.VLLM, quant="BF16"), quant=BF16)
    assert launch_command(mac_s, mac) is None  # no vLLM on Metal


def test_llama_server_flags_and_shell_text():
    cmd = launch_commands(sc(LLAMA_8B, RTX_3090, Request(gpu_count=2, kv_cache=KvCacheType.Q8_0), CATALOG), CATALOG)[0]
    assert cmd.argv[:3] == ("llama-server", "-hf", "bartowski/Meta-Llama-3-8B-Instruct-GGUF:Q4_K_M")
    _, opts = parse(cmd.argv)
    assert opts["--tensor-split"] == "1,1" and opts["--cache-type-v"] == "q8_0"
    assert cmd.shell.startswith("llama-server -hf bartowski/")
    bare = LLAMA_8B.model_copy(update={"gguf_repo": None})
    local = launch_command(sc(bare, RTX_4090, Request(), quant=Q4_K_M), estimate(bare, RTX_4090, Q4_K_M, Request()))
    assert local.argv[1:3] == ("-m", "llama-3-8b-Q4_K_M.gguf")


def test_kv_cache_is_quantized_before_weights_go_below_three_bits():
    # GLM-4.5-Air at 128K on an H100: Q4_K_M with f16 KV offloads, 2-bit UD weights would fit; a q4_0 KV
    # cache keeps the 4-bit weights and fits (kv_savings), which costs far less quality
    cat = CATALOG.model_copy(update={"quants": (*CATALOG.quants, quant_spec("UD-Q2_K_XL", 2.625, 3.1))})
    assert estimate(GLM_AIR, H100, cat.quant("UD-Q2_K_XL"), Request(context=131072)).verdict is Verdict.FITS
    choice = choose_quant(sc(GLM_AIR, H100, Request(context=131072), cat), cat)
    assert (choice.quant, choice.kv_cache, choice.reason) == ("Q4_K_M", KvCacheType.Q4_0, "kv_before_low_bits")


def test_legacy_quants_are_never_recommended():
    legacy = quant_spec("Q5_1", 6.0, 6.0)
    cat = CATALOG.model_copy(update={"quants": (*CATALOG.quants, legacy)})
    for gpu in (RTX_3060, RTX_4090, H100):
        choice = choose_quant(sc(LLAMA_70B, gpu, Request(), cat), cat)
        assert choice is None or choice.quant != "Q5_1"


def test_nearest_fix_leads_with_the_smallest_change():
    # GLM-4.5-Air Q4_K_M at 128K on an H100 offloads; q4_0 KV makes it fit on the GPU (see kv_savings)
    est = estimate(GLM_AIR, H100, Q4_K_M, Request(context=131072))
    assert est.verdict is Verdict.OFFLOAD
    fix = nearest_fix(sc(GLM_AIR, H100, Request(context=131072), CATALOG, quant=Q4_K_M), CATALOG, est)
    assert fix is not None and fix.kind == "kv" and fix.value == "q4_0"
    assert fix.verdict in (Verdict.FITS, Verdict.TIGHT) and fix.reserve_bytes >= 0
    assert fix.estimate.kv_cache is KvCacheType.Q4_0


def test_nearest_fix_for_a_no_fit_names_a_setup_that_runs():
    est = estimate(LLAMA_70B, RTX_3060, BF16, Request(quant="BF16", ram_gb=16))
    assert est.verdict is Verdict.NO_FIT
    fix = nearest_fix(sc(LLAMA_70B, RTX_3060, Request(quant="BF16", ram_gb=16), CATALOG, quant=BF16), CATALOG, est)
    assert fix is not None and fix.verdict is not Verdict.NO_FIT
    assert fix.estimate.verdict is fix.verdict


def test_region_restricted_parts_are_left_out_unless_allowed():
    h800 = H100.model_copy(update={"id": "h800", "short_name": "H800", "price_usd": 100.0})
    assert "h800" in REGION_RESTRICTED
    cat = CATALOG.model_copy(update={"gpus": (*CATALOG.gpus, h800)})
    advice = recommend_hardware(sc(LLAMA_70B, None, Request(), cat, quant=Q4_K_M), cat)
    picks = (advice.best_single_gpu, advice.best_price_performance, advice.cheapest)
    assert all(p is None or p.gpu_id != "h800" for p in picks)
    allowed = recommend_hardware(sc(LLAMA_70B, None, Request(), cat, quant=Q4_K_M), cat, allow_restricted=True)
    assert allowed.cheapest.gpu_id == "h800"


def quant_spec(qid: str, bits: float, bpw: float) -> QuantSpec:
    return QuantSpec(
        id=qid,
        label=qid,
        format="gguf",
        bits=bits,
        bpw_dense=bpw,
        bpw_experts=bpw,
        bpw_embed=bits,
        bpw_output=6.5625,
        provenance=PROV,
    )
