"""`fitbot run` end to end: the production entry point serves Telegram, logs JSON, stops on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from fitbot_fakes.telegram_api import FakeTelegramAPI

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "424242:RUN-test-secret-token"


async def test_run_answers_on_telegram_and_stops_cleanly_on_sigterm(tmp_path, monkeypatch):
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    async with FakeTelegramAPI(token=TOKEN) as api:
        env = {
            **os.environ,
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_BASE_URL": api.base_url,
            "FITBOT_DATA_DIR": str(tmp_path / "data"),
            "PTB_TIMEDELTA": "1",
            "FITBOT_LOG_LEVEL": "INFO",
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.app.cli",
            "run",
            cwd=ROOT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            await api.wait_call("getUpdates", timeout=30)
            api.push_update(api.make_message("/quant qwen3-8b rtx 4090", chat_id=777))  # a card without a chart
            call = await api.wait_call("sendMessage", timeout=30, where=lambda p: p.get("chat_id") == 777)
            assert "Qwen3-8B" in call.params["text"]
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), timeout=30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        stderr = (await proc.stderr.read()).decode()
    assert code == 0, stderr
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    messages = [line["msg"] for line in lines]
    assert "fitbot running" in messages and "shutting down" in messages
    answered = [line for line in lines if line["msg"] == "answered"]
    assert answered and answered[0]["platform"] == "tg" and answered[0]["latency_ms"] >= 0
    assert TOKEN not in stderr and TOKEN.split(":")[1] not in stderr
    assert "/fit qwen3-8b" not in stderr  # no message text in the logs
