"""Fit cards with the commands people use: Ollama and LM Studio first when asked, all on details."""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service, User
from catalog.facts import load_facts


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(load_facts().model_copy(update={"version": "test"}))


def ask(service: Service, text: str):
    return asyncio.run(service.answer(text, None, User()))


def test_ollama_question_gets_an_ollama_command_first(service):
    reply = ask(service, "can I run qwen3 32b with ollama on my 4090?")
    assert reply.code[0].label == "Ollama"
    assert "ollama run qwen3:32b" in reply.code[0].text
    assert "OLLAMA_CONTEXT_LENGTH=8192" in reply.code[0].text and "OLLAMA_FLASH_ATTENTION=1" in reply.code[0].text
    assert reply.code[1].label == "llama.cpp"


def test_german_ollama_question(service):
    reply = ask(service, "läuft gpt-oss-120b mit ollama auf meiner rtx 4090?")
    assert reply.locale == "de" and reply.code[0].label == "Ollama"
    assert "ollama run gpt-oss:120b" in reply.code[0].text  # the library tag, not a Hugging Face GGUF
    assert "ganze Schichten" in reply.code[0].text


def test_lm_studio_question_gets_its_settings_first(service):
    reply = ask(service, "gpt-oss-120b on rtx 4090 in lm studio")
    assert reply.code[0].label == "LM Studio" and "GPU Offload: 36/36" in reply.code[0].text


def test_plain_question_keeps_one_command(service):
    reply = ask(service, "/fit qwen3-32b rtx 4090")
    assert [c.label for c in reply.code] == ["llama.cpp"]


def test_details_page_points_vllm_at_the_awq_repository(service):
    reply = ask(service, "/fit qwen3-32b awq rtx 4090 details")
    vllm = next(c for c in reply.code if c.label == "vllm")
    assert vllm.text.startswith("vllm serve Qwen/Qwen3-32B-AWQ ")


def test_unknown_checkpoint_is_said_on_the_details_page(service):
    reply = ask(service, "/fit qwen3-32b gptq rtx 4090 details")
    assert any("no GPTQ checkpoint of Qwen/Qwen3-32B known" in c.text for c in reply.code)


def test_automatic_fit_question_gets_the_fit_command_and_the_manual_flags_explained(service):
    reply = ask(service, "gpt-oss-120b on rtx 4090 with llama.cpp auto fit")
    auto = reply.code[0]
    assert auto.label == "llama.cpp (automatic fit)" and "--fit on" in auto.text
    assert "-ngl 999 above" in auto.text and "--n-cpu-moe 24 above" in auto.text
    assert reply.code[1].label == "llama.cpp" and "--n-cpu-moe 24" in reply.code[1].text


def test_details_page_carries_the_ollama_command_after_the_others(service):
    reply = ask(service, "/fit llama-3.1-8b-instruct rtx 4090 details")
    labels = [c.label for c in reply.code]
    assert labels[0] == "llama.cpp" and labels[-1] == "Ollama"
    ollama = reply.code[-1].text
    assert "ollama run llama3.1" in ollama and "OLLAMA_FLASH_ATTENTION=1" in ollama
    assert "does not show its quant" not in ollama


def test_a_tag_whose_quant_the_library_page_does_not_show_says_so(service):
    reply = ask(service, "/fit qwen3-8b rtx 4090 details")
    ollama = next(c for c in reply.code if c.label == "Ollama")
    assert "ollama run qwen3:8b" in ollama.text
    assert "does not show its quant there: Q4_K_M assumed" in ollama.text


def test_gpt_oss_without_a_library_tag_gets_no_hugging_face_path(service):
    reply = ask(service, "gpt-oss-safeguard-20b with ollama on my rtx 4090")
    ollama = reply.code[0]
    assert ollama.label == "Ollama" and "hf.co/" not in ollama.text
    assert "do not load in Ollama" in ollama.text


def test_awq_without_a_checkpoint_gets_no_vllm_command(service):
    for text, lang, words in (
        ("/fit gemma-3-27b-it awq h100 vllm", "en", "no AWQ checkpoint of google/gemma-3-27b-it known"),
        ("/fit gemma-3-27b-it awq h100 vllm", "de", "kein AWQ-Checkpoint von google/gemma-3-27b-it bekannt"),
    ):
        reply = asyncio.run(service.answer(text, locale=lang))
        assert reply.code[0].label == "vllm" and words in reply.code[0].text
        assert not any("--quantization awq" in c.text for c in reply.code)


def test_nvfp4_is_refused_without_fp4_hardware(service):
    for gpu in ("h100", "rtx 4090"):
        reply = asyncio.run(service.answer(f"/fit qwen3-32b nvfp4 {gpu} vllm", locale="en"))
        assert "NVFP4 needs 10.0 or newer" in reply.summary, reply.summary
        assert not reply.code
    german = asyncio.run(service.answer("/fit qwen3-32b nvfp4 h100 vllm", locale="de"))
    assert "NVFP4 braucht 10.0 oder neuer" in german.summary and not german.code


def test_fp8_loads_the_published_checkpoint(service):
    reply = ask(service, "/fit qwen3-32b fp8 h100 vllm")
    assert reply.code[0].text.startswith("vllm serve Qwen/Qwen3-32B-FP8 ")
    assert "--quantization" not in reply.code[0].text


def test_gpt_oss_quant_table_lists_only_the_published_mxfp4_file(service):
    reply = ask(service, "/quant gpt-oss-20b rtx 4090")
    assert reply.table is not None
    assert [r[0] for r in reply.table.rows] == ["MXFP4"]


def test_bf16_on_a_t4_is_served_as_half(service):
    reply = ask(service, "/fit qwen3-4b t4 vllm")
    assert reply.code[0].text.startswith("vllm serve Qwen/Qwen3-4B ") and "--dtype half" in reply.code[0].text


def test_device_scans_leave_out_gpus_vllm_cannot_run_the_quant_on(service):
    gpus = ask(service, "/gpus qwen3-32b nvfp4 vllm")
    listed = " ".join(r[0] for r in gpus.table.rows) if gpus.table else ""
    assert "RTX 5090" in listed and "RTX 4090" not in listed and "H100" not in listed
    assert not any("3090" in r.label for s in gpus.sections for r in s.rows)  # no 2x RTX 3090 rig either
    cloud = ask(service, "/cloud qwen3-32b nvfp4 vllm")
    assert cloud.table is not None and not any("A100" in r[0] or "H100" in r[0] for r in cloud.table.rows)


def test_vllm_splits_over_gpus_the_heads_divide_by(service):
    reply = ask(service, "/fit qwen3-32b 3x rtx 3090 vllm")  # 64 attention heads: no tensor parallel of 3
    line = next(c.text for c in reply.code if c.text.startswith("vllm serve"))
    assert "--pipeline-parallel-size 3" in line and "--tensor-parallel-size" not in line
    two = ask(service, "/fit qwen3-32b 2x rtx 3090 vllm")
    assert "--tensor-parallel-size 2" in next(c.text for c in two.code if c.text.startswith("vllm serve"))
