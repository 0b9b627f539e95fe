"""Calibrate to my rig (issue 38 item 2) through the real service and user database: a pasted run is read,
checked and kept; that user's later answers on that device are scaled and say so; nobody else's change;
/mygpu lists the runs and /forget deletes them; a hostile, impossible or flooding paste changes nothing.

Every pasted figure is generated from FitBot's own estimate of the setup times a factor, so the tests hold
for any estimator: the format is llama-bench's markdown (tools/llama-bench/llama-bench.cpp,
``markdown_printer``), ``-o jsonl`` (``jsonl_printer``) and llama-server's ``print_timings`` lines.
"""

from __future__ import annotations

import json

import pytest

from bot.service import Service, User
from bot.users.runs import MAX_RUNS_PER_DAY
from catalog.facts import load_facts
from core.estimate import Request, estimate_of, prompt_of, scenario
from core.models import Engine
from core.runs.calibrate import PRIOR_MODELS
from storage.userdata import UserDataStore

CATALOG = load_facts()
ALICE, BOB = User(id="tg:1"), User(id="tg:2")
SLOWER = 0.8  # Alice's 4090 runs 20 % below the estimate
APPLIED = SLOWER ** (1 / (1 + PRIOR_MODELS))  # one model's runs: drawn toward 1 (core.runs.calibrate)


def estimate(model_id: str, gpu_id: str, prompt: int = 512, context: int = 640) -> tuple[float, float]:
    """FitBot's (decode tg128, prefill ppN) for a llama.cpp run of the setup, as a paste is checked against."""
    model, gpu = CATALOG.model(model_id), CATALOG.gpu(gpu_id)
    assert model and gpu
    decode = estimate_of(scenario(model, gpu, Request(quant="Q4_K_M", context=128, engine=Engine.LLAMA_CPP), CATALOG))
    request = Request(quant="Q4_K_M", context=context, engine=Engine.LLAMA_CPP, prompt_tokens=prompt)
    prefill = estimate_of(scenario(model, gpu, request, CATALOG))
    return decode.speed.decode_tokens_per_s, prefill.speed.prefill_tokens_per_s


def table(decode: float, prefill: float, label: str = "llama 8B Q4_K - Medium", params: str = "8.03 B") -> str:
    return (
        "| model                          |       size |     params | backend    | ngl |  test |           t/s |\n"
        "| ------------------------------ | ---------: | ---------: | ---------- | --: | ----: | ------------: |\n"
        f"| {label} |   4.58 GiB | {params} | CUDA       |  99 | pp512 | {prefill:.2f} ± 12.10 |\n"
        f"| {label} |   4.58 GiB | {params} | CUDA       |  99 | tg128 | {decode:.2f} ± 0.31 |\n"
        "\nbuild: 8a1d9c25 (4305)\n"
    )


@pytest.fixture
async def service(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(CATALOG, store=store)
        yield service
        await service.usage.flush()


def decode_of(reply) -> float:
    figures = reply.subjects[0].figures
    assert figures is not None and figures.decode_tokens_per_s
    return figures.decode_tokens_per_s


async def test_a_slower_rig_scales_that_users_later_answers_and_nobody_elses(service):
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    card = await service.answer("my rtx 4090\n" + table(decode * SLOWER, prefill * SLOWER), user=ALICE)
    assert card.kind == "runs" and card.tone.value == "good", card.summary
    assert "RTX 4090" in card.summary and "Q4_K_M" in card.summary and "8a1d9c25" in card.summary
    assert card.table is not None and len(card.table.rows) == 2 and not card.sections
    for question in ("/speed qwen3 14b rtx 4090", "can I run qwen3 32b on a 4090?"):
        mine, theirs = await service.answer(question, user=ALICE), await service.answer(question, user=BOB)
        assert decode_of(mine) == pytest.approx(APPLIED * decode_of(theirs), rel=0.02)
        assert "Calibrated to your run of" in mine.summary and "Calibrated" not in theirs.summary
    other_device = await service.answer("/speed qwen3 14b rtx 3090", user=ALICE)
    assert "Calibrated" not in other_device.summary  # a factor belongs to the device it was measured on


@pytest.mark.parametrize("gpu_id", ["rtx-4090", "rtx-3090", "rtx-5090"])
@pytest.mark.parametrize("depth", [4096, 32768])
async def test_a_prompt_at_depth_is_measured_against_the_estimate_at_that_depth(service, gpu_id, depth):
    """llama-bench ``-d``: a prompt after ``depth`` cached tokens is mostly attention; it is checked and kept against
    FitBot's estimate of that prompt at that depth (not of pp512 on an empty cache), so a rig 20 % slow reads 0.8."""
    model, gpu = CATALOG.model("llama-3.1-8b-instruct"), CATALOG.gpu(gpu_id)
    assert model and gpu
    decode, prefill = estimate("llama-3.1-8b-instruct", gpu_id)
    request = Request(quant="Q4_K_M", context=depth + 2048, engine=Engine.LLAMA_CPP, prompt_tokens=2048)
    deep = prompt_of(scenario(model, gpu, request, CATALOG), 2048, depth)
    assert deep.attention_share > 0.1  # what the calibration tells apart from the GEMMs
    paste = table(decode * SLOWER, prefill * SLOWER).replace(
        "\nbuild:",
        f"| llama 8B Q4_K - Medium |   4.58 GiB | 8.03 B | CUDA       |  99 | pp2048 @ d{depth} "
        f"| {2048 / deep.seconds * SLOWER:.2f} ± 3.10 |\n\nbuild:",
    )
    card = await service.answer(f"{gpu.short_name}\n" + paste, user=ALICE)
    assert card.kind == "runs" and card.table is not None, card.summary
    rows = {row[0]: row[-1] for row in card.table.rows}
    assert set(rows) == {"pp512", "tg128", f"pp2048 @ d{depth}"}, rows
    assert set(rows.values()) == {"×0.80"}, rows


async def test_mygpu_lists_the_runs_and_forget_deletes_them(service):
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    await service.answer("rtx 4090\n" + table(decode * 0.9, prefill * 0.9), user=ALICE)
    listed = await service.answer("/mygpu", user=ALICE)
    rows = [r.value for s in listed.sections for r in s.rows if "tg128" in r.value or "pp512" in r.value]
    assert len(rows) == 2 and all("RTX 4090" in r and "Llama 3.1 8B" in r for r in rows)
    await service.answer("/forget", user=ALICE)
    after = await service.answer("/speed qwen3 14b rtx 4090", user=ALICE)
    assert "Calibrated" not in after.summary
    listed = await service.answer("/settings", user=ALICE)
    assert not any("tg128" in r.value for s in listed.sections for r in s.rows)


async def test_a_saved_gpu_and_jsonl_identify_the_setup_and_german_words_get_a_german_card(service):
    await service.answer("/mygpu rtx 3090", user=ALICE)
    decode, prefill = estimate("qwen3-8b", "rtx-3090")
    rows = [
        {"model_type": "qwen3 8B Q4_K - Medium", "model_filename": "Qwen3-8B-Q4_K_M.gguf", "backends": "CUDA",
         "n_prompt": p, "n_gen": g, "n_depth": 0, "avg_ts": v, "build_commit": "8cf427ff", "build_number": 5163}
        for p, g, v in ((512, 0, prefill * 1.1), (0, 128, decode * 1.1))
    ]  # fmt: skip
    card = await service.answer("mein Lauf:\n" + "\n".join(json.dumps(r) for r in rows), user=ALICE)
    assert card.kind == "runs" and card.locale == "de" and "RTX 3090" in card.summary and "Qwen3-8B" in card.summary
    later = await service.answer("/speed qwen3 14b", user=ALICE)
    assert "Auf deinen Lauf vom" in later.summary or "Calibrated to your run" in later.summary


@pytest.mark.parametrize(
    ("factor", "words"), [(40.0, "memory bandwidth"), (0.1, "under a quarter")], ids=["impossible", "far-below"]
)
async def test_an_implausible_run_is_refused_with_its_reason_and_changes_nothing(service, factor, words):
    decode, _ = estimate("llama-3.1-8b-instruct", "rtx-4090")
    server = (
        "on my rtx 4090 with llama 3.1 8b q4_k_m\n"
        f"       eval time =    1000.00 ms /   128 tokens (    7.81 ms per token, {decode * factor:10.2f} tokens per second)"
    )
    card = await service.answer(server, user=ALICE)
    assert card.kind == "runs" and card.table is None and "unchanged" in card.summary
    (reason,) = card.sections[0].rows
    assert reason.value.startswith("eval:") and words in reason.value
    after = await service.answer("/speed qwen3 14b rtx 4090", user=ALICE)
    assert "Calibrated" not in after.summary


@pytest.mark.parametrize(
    "paste",
    [
        table(100.0, 5000.0),  # no device named, none saved
        table(100.0, 5000.0, label="mystery 3B Q4_K - Medium", params="3.33 B") + "rtx 4090",  # no such model
        '[{"avg_ts": 120.5, "n_prompt": 0, "n_gen": 128, "model_type": "llama 8B Q4_K - Me',  # cut-off JSON
        "| model | test | t/s |\n|---|---|---|\n| llama 8B Q4_K - Medium | tg128 | inf |",  # no usable number
        "[" * 5000 + '"avg_ts":',  # hostile nesting
    ],
    ids=["no-device", "unknown-model", "truncated-json", "bad-values", "hostile"],
)
async def test_pastes_that_cannot_be_used_say_why_and_change_nothing(service, paste):
    card = await service.answer(paste, user=ALICE)
    assert card.kind == "runs" and card.tone.value == "warn" and "unchanged" in card.summary
    listed = await service.answer("/mygpu", user=ALICE)
    assert not any("tg128" in r.value for s in listed.sections for r in s.rows)


async def test_a_flooding_user_is_read_but_not_stored(service):
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    paste = "rtx 4090\n" + table(decode * 0.9, prefill * 0.9)
    for _ in range(MAX_RUNS_PER_DAY // 2):
        assert (await service.answer(paste, user=ALICE)).tone.value == "good"
    refused = await service.answer(paste, user=ALICE)
    assert refused.kind == "runs" and "24 hours" in refused.summary


async def test_an_anonymous_client_reads_a_run_but_keeps_nothing(service):
    decode, prefill = estimate("llama-3.1-8b-instruct", "rtx-4090")
    mcp = User(id="mcp:127.0.0.1", anonymous=True)
    card = await service.answer("rtx 4090\n" + table(decode * 0.8, prefill * 0.8), user=mcp)
    assert card.kind == "runs" and card.table is not None and "not stored" in card.summary
    assert "Calibrated" not in (await service.answer("/speed qwen3 14b rtx 4090", user=mcp)).summary
