"""Every answer has a deadline; one past it is set aside, the others go on, and health says so (issue 40)."""

from __future__ import annotations

import asyncio
import json
import time

from bot.app.run import Health, adapter_health
from bot.service import Service
from catalog.facts import load_facts

REDOS_PASTE = 'llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -c 8192 -ot "(.|.)*Z=CPU" on my rtx 4090'
OTHERS = [f"/fit qwen3-{size}b rtx 4090" for size in (4, 8, 14, 32)] + ["can I run gpt-oss-20b on a 3060?"] * 6


def _hold(service: Service, seconds: float) -> None:
    """Keeps the one answer thread busy, as a stuck answer would (the next answer queues behind it)."""
    service.worker.submit(lambda: time.sleep(seconds))


async def test_an_answer_past_its_deadline_is_set_aside_and_the_next_is_answered():
    service = Service(load_facts(), answer_deadline_s=0.2)
    try:
        _hold(service, 1.0)
        late = await service.answer("/gpus qwen3-14b 23k")  # a question no other test asks: not memoised
        assert late.kind == "error" and "set it aside" in late.summary
        assert service.stuck_answers() == 1
        reply = await service.answer("/fit qwen3-8b rtx 4090 12k")  # a fresh thread: not behind the held one
        assert reply.kind != "error" and reply.subjects
        _hold(service, 1.0)
        german = await service.answer("/modelle rtx 4070 ti 19k", locale="de")
        assert "beiseitegelegt" in german.summary
    finally:
        await service.close()


async def test_set_aside_answers_are_counted_until_they_end():
    service = Service(load_facts(), answer_deadline_s=0.2)
    try:
        _hold(service, 0.5)
        await service.answer("/models rtx 3090 21k")
        assert service.stuck_answers() == 1
        while service.stuck_answers():  # it finishes in the background; the count follows it
            await asyncio.sleep(0.05)
        assert service.stuck_answers() == 0
    finally:
        await service.close()


async def test_the_redos_paste_and_ten_other_users_are_all_answered():
    service = Service(load_facts())
    try:
        replies = await asyncio.gather(service.answer(REDOS_PASTE), *(service.answer(q) for q in OTHERS))
        assert replies[0].kind == "diagnose" and replies[0].title.startswith("Diagnosis")
        assert all(r.kind != "error" for r in replies[1:])
        assert service.stuck_answers() == 0
    finally:
        await service.close()


def test_health_fails_while_an_answer_is_stuck(tmp_path, capsys):
    health = Health(tmp_path / "health.json")
    health.set("telegram", "running")
    assert adapter_health(tmp_path / "health.json", ["telegram"]) == 0
    health.set_stuck(1)
    assert json.loads((tmp_path / "health.json").read_text())["stuck_answers"] == 1
    assert adapter_health(tmp_path / "health.json", ["telegram"]) == 1
    assert "past the deadline" in capsys.readouterr().out
    health.set_stuck(0)
    assert adapter_health(tmp_path / "health.json", ["telegram"]) == 0
