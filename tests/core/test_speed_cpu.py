"""CPU inference (issue 35 item 6): memory channels per platform, prompt speed from the int8 peak, and CPU
cards without GPU flags or GPU words, over every CPU row, several models and both languages."""

from __future__ import annotations

import asyncio
import re
import statistics

import pytest

from bench import cpu_speed
from bot.render.text import to_console
from bot.reply import Reply
from bot.service import Service
from catalog.facts import load_facts
from core.devices import generic_device
from core.speed.cpu import cpu_device, cpus, find_cpu, prompt_quant_factor
from locales import t

CATALOG = load_facts()
SERVICE = Service(CATALOG)


def ask(text: str) -> Reply:
    return asyncio.run(SERVICE.answer(text))


# --- memory channels per platform: channels x MT/s x channel width, each CPU row's vendor figure --------


@pytest.mark.parametrize(
    ("cpu_id", "platform", "gbps"),
    [("epyc-9654", "epyc", 460.8), ("epyc-9755", "epyc", 576.0), ("threadripper-7980x", "threadripper", 166.4),
     ("threadripper-pro-7995wx", "threadripper", 332.8), ("xeon-8480", "xeon", 307.2),
     ("xeon-6980p", "xeon", 614.4), ("ryzen-9-7950x", "desktop", 83.2), ("raspberry-pi-5", "pi", 17.1)],
)  # fmt: skip
def test_bandwidth_is_channels_times_rate_per_platform(cpu_id, platform, gbps):
    cpu = cpus()[cpu_id]
    assert cpu.platform == platform
    assert cpu.bandwidth_gbps == pytest.approx(gbps, abs=0.05)
    assert cpu.source.startswith("https://")  # the vendor's page for the row


@pytest.mark.parametrize(
    ("text", "cpu_id"),
    [("epyc 9654", "epyc-9654"), ("AMD EPYC 9654", "epyc-9654"), ("threadripper 7980x", "threadripper-7980x"),
     ("xeon 8480", "xeon-8480"), ("Xeon Platinum 8480+", "xeon-8480"), ("7950x", "ryzen-9-7950x"),
     ("ryzen 9 7950x", "ryzen-9-7950x"), ("i9-13900k", "core-i9-13900k")],
)  # fmt: skip
def test_cpu_names_find_their_row(text, cpu_id):
    found = find_cpu(text)
    assert found is not None and found.id == cpu_id


@pytest.mark.parametrize(
    ("text", "bandwidth"),
    [("llama 3.1 8b on epyc 9654 with 384gb ram", "460.8"), ("qwen3 8b on threadripper 7980x with 128gb ram", "166.4"),
     ("qwen3 8b on xeon 8480 with 256gb ram", "307.2"), ("qwen3 8b on 7950x with 64gb ram", "83.2"),
     ("qwen3 8b auf einem 7950x mit 64gb ram", "83,2")],
)  # fmt: skip
def test_a_named_cpu_answers_with_its_platform_bandwidth(text, bandwidth):
    r = ask(text)
    assert r.kind == "fit", to_console(r)
    assert f"{bandwidth} GB/s" in to_console(r)
    assert "dual-channel" not in to_console(r).lower()


def test_a_pi_answers_with_its_one_32_bit_channel():
    out = to_console(ask("qwen3 1.7b on raspberry pi 5"))
    assert "17 GB/s" in out and "32-bit" in out


def test_a_named_cpu_without_ram_says_its_bandwidth_and_asks_for_the_ram():
    r = ask("llama 3.1 8b on epyc 9654")
    out = to_console(r)
    assert "460.8 GB/s" in out and "12 × DDR5-4800" in out
    assert r.actions and all("gb ram" in a.question for a in r.actions)
    assert ask(r.actions[0].question).kind == "fit"


# --- prompt speed -----------------------------------------------------------------------------------


def test_the_7950x_first_token_is_no_longer_minutes():
    """The issue's example: Qwen3-14B on a Ryzen 9 7950X showed 309 s to the first token of a 4K prompt."""
    r = ask("qwen3 14b on ryzen 9 7950x with 64gb ram")
    m = re.search(r"first token after ([\d.]+) s", to_console(r))
    assert m and float(m.group(1)) < 150, to_console(r)


def test_peak_comes_from_cores_clock_and_isa():
    epyc, desktop = cpus()["epyc-9654"], cpus()["ryzen-9-7950x"]
    assert epyc.peak_tops() == pytest.approx(96 * 2.4 * 128 / 1000)
    assert desktop.peak_tops() == pytest.approx(16 * 4.5 * 128 / 1000)
    assert cpus()["ryzen-9-9950x"].isa.int8_ops == 2 * desktop.isa.int8_ops  # Zen 5: full 512-bit datapaths
    assert prompt_quant_factor("IQ3_S") > 1.0 == prompt_quant_factor("Q4_K_M")


def test_held_out_prompt_error_meets_the_target_and_readme_says_it():
    """bench/cpu_speed.py: every source predicted by the efficiency fitted on the others. The issue's target
    (``TARGET``, 30 %) holds, and README's table is what the bench computes now (``--write`` rewrites it)."""
    result = cpu_speed.run(baseline=False)
    graded = [abs(p / r.measured - 1) for r, p, g in result["rows"] if r.kind == "prefill" and g]
    assert len(graded) >= 10
    assert statistics.median(graded) <= cpu_speed.TARGET
    assert cpu_speed.readme_block() == cpu_speed.readme_lines(result)


# --- no GPU flags, no GPU words on a CPU card ------------------------------------------------------------

GPU_FLAGS = re.compile(r"(?<!\w)(?:-ngl|--n-gpu-layers|--gpu-layers|--tensor-split|--split-mode|--n-cpu-moe|--main-gpu"
                       r"|-DGGML_(?:CUDA|HIP|VULKAN|SYCL|METAL))\b")  # fmt: skip
GPU_WORDS = re.compile(r"\bGPUs?\b|GPU-|VRAM|Grafik|CUDA|ROCm|Vulkan|usable by the|für die GPU", re.IGNORECASE)
MODELS = ("qwen3-8b", "qwen3-30b-a3b", "gpt-oss-20b")
DEVICE_IDS = [f"cpu-{cpu_id}-{64 if cpus()[cpu_id].platform != 'pi' else 8}" for cpu_id in cpus()]
DEVICE_IDS += ["generic-cpu-32", "generic-sbc-pi5-8", "generic-sbc-pi4-4"]


def _card_text(r: Reply, *, skip_sections: tuple[str, ...] = ()) -> str:
    """What a user reads on the card, without the echo of their own words and the button questions."""
    sections = [s for s in r.sections if s.title not in skip_sections]
    parts = [r.title, r.summary, r.assumptions, r.footer, *(c.text for c in r.code)]
    parts += [f"{s.title} {row.label} {row.value}" for s in sections for row in s.rows]
    return "\n".join(parts)


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("device_id", DEVICE_IDS)
def test_cpu_cards_have_no_gpu_flags_or_gpu_words(device_id, lang):
    words = {"en": "on {device} with {ram}gb ram", "de": "auf {device} mit {ram}gb ram"}[lang]
    ram = device_id.rsplit("-", 1)[1]
    for model in MODELS:
        fit = ask(f"/fit {model} {words.format(device=device_id, ram=ram)}")
        assert fit.kind == "fit", (device_id, model, to_console(fit))
        text = _card_text(fit)
        assert not GPU_FLAGS.search(text), (device_id, model, lang, text)
        assert not GPU_WORDS.search(text), (device_id, model, lang, GPU_WORDS.search(text), text)
        speed = ask(f"/speed {model} {words.format(device=device_id, ram=ram)}")
        # the comparison with common GPUs (and the no-fit summary pointing to it) names GPUs on purpose
        text = _card_text(speed, skip_sections=(t(lang, "speed.other_gpus"),)).replace(t(lang, "speed.no_fit"), "")
        assert not GPU_FLAGS.search(text), (device_id, model, lang, text)
        assert not GPU_WORDS.search(text), (device_id, model, lang, GPU_WORDS.search(text), text)


def test_a_cpu_command_has_no_ngl_and_a_gpu_command_keeps_it():
    cpu = to_console(ask("qwen3 8b on epyc 9654 with 256gb ram"))
    gpu = to_console(ask("qwen3 8b on rtx 4090"))
    assert "llama-server" in cpu and "-ngl" not in cpu
    assert "-ngl 999" in gpu


def test_cpu_devices_are_cpu_backend_with_their_channels():
    for cpu in cpus().values():
        spec = cpu_device(cpu, 64)
        assert spec.backend.value == "cpu" and spec.bandwidth_bytes_per_s == pytest.approx(cpu.bandwidth_gbps * 1e9)
    pi = generic_device(CATALOG, "sbc", 8, board="pi5").gpu
    assert pi.fp16_tflops == pytest.approx(cpus()["raspberry-pi-5"].peak_tops())
