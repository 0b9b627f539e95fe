"""`fitbot run` end to end: the production entry point serves Telegram, logs JSON, stops on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from fitbot_fakes.telegram_api import FakeTelegramAPI

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "424242:RUN-test-secret-token"


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGHUP])
async def test_run_answers_on_telegram_and_stops_cleanly_on_a_stop_signal(tmp_path, monkeypatch, stop_signal):
    """SIGHUP drains like SIGTERM (it had no handler: the process died with answers in flight)."""
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
            proc.send_signal(stop_signal)
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


# --------------------------------------------------------------------------- independence, health, secrets

import contextlib  # noqa: E402
import logging  # noqa: E402

from aiohttp import web  # noqa: E402

from bot.app import run as run_module  # noqa: E402
from bot.app.logs import setup_logging  # noqa: E402
from bot.app.settings import Settings  # noqa: E402


@contextlib.contextmanager
def json_logging(level: str, secrets: list[str]):
    """``fitbot run``'s logging (JSON on stderr, the redaction filter), restored afterwards."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    setup_logging(level, secrets)
    try:
        yield
    finally:
        root.handlers[:], root.level = saved
        for name in ("httpx", "httpcore", "discord.gateway", "discord.client", "discord.http", "aiohttp"):
            logging.getLogger(name).setLevel(logging.NOTSET)


async def run_until(settings: Settings, condition, timeout: float = 20) -> int:
    stop = asyncio.Event()
    task = asyncio.create_task(run_module.run(settings, stop=stop))
    try:
        async with asyncio.timeout(timeout):
            while not await condition():
                assert not task.done(), "fitbot run ended by itself"
                await asyncio.sleep(0.05)
    finally:
        stop.set()
    return await asyncio.wait_for(task, 30)


async def test_a_failing_discord_does_not_take_telegram_down_and_health_says_so(tmp_path, monkeypatch, capsys):
    """Both tokens, Discord unreachable: the process used to exit after ~4 s, Telegram unanswered."""
    import discord.http

    monkeypatch.setattr(discord.http.Route, "BASE", "http://127.0.0.1:9/api/v10")  # nothing listens there
    monkeypatch.setattr(run_module, "BACKOFF_S", (0.2,))
    async with FakeTelegramAPI(token=TOKEN) as api:
        settings = Settings(
            _env_file=None,
            telegram_bot_token=TOKEN,
            telegram_base_url=api.base_url,
            discord_bot_token="discord-secret-token-value",
            fitbot_data_dir=tmp_path,
            hf_hub_offline=True,
        )
        health = tmp_path / "health.json"
        pushed = False

        async def answered_while_discord_retries() -> bool:
            nonlocal pushed
            if not pushed and api.calls_of("getUpdates"):
                api.push_update(api.make_message("/fit qwen3-8b rtx 4090", chat_id=777))
                pushed = True
            if not any(e.method in ("sendMessage", "sendPhoto") and e.status == 200 for e in api.exchanges):
                return False
            state = json.loads(health.read_text())["adapters"] if health.exists() else {}
            return (
                state.get("discord", {}).get("attempt", 0) >= 2 and state.get("telegram", {}).get("state") == "running"
            )

        code = await run_until(settings, answered_while_discord_retries)
        assert code == 0
        state = json.loads(health.read_text())
        assert state["adapters"]["discord"]["state"] == "stopped"
    # `fitbot health` reports each adapter; stopped ones make it fail
    capsys.readouterr()
    assert run_module.adapter_health(health, ["telegram", "discord"]) == 1
    printed = capsys.readouterr().out
    assert "telegram: stopped" in printed and "discord: stopped" in printed


async def test_health_reports_each_adapters_state(tmp_path, capsys):
    health = run_module.Health(tmp_path / "health.json")
    health.set("telegram", "running")
    health.set("discord", "retrying", error="ClientConnectorError", attempt=3)
    assert run_module.adapter_health(tmp_path / "health.json", ["telegram", "discord"]) == 0
    out = capsys.readouterr().out
    assert "telegram: running" in out and "discord: retrying" in out and "ClientConnectorError, attempt 3" in out


class RedirectLoop:
    """An HTTP server that redirects every request to itself (aiohttp gives up: TooManyRedirects)."""

    async def __aenter__(self) -> str:
        async def loop(request: web.Request) -> web.Response:
            raise web.HTTPFound(str(request.url))

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", loop)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/bot"  # type: ignore[union-attr]

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()


@pytest.mark.parametrize("failure", ["revoked token", "mistyped base url", "redirect loop", "invalid url", "debug"])
async def test_the_token_never_reaches_the_logs(tmp_path, capfd, monkeypatch, failure):
    monkeypatch.setattr(run_module, "BACKOFF_S", (30.0,))
    async with FakeTelegramAPI(token=TOKEN if failure != "revoked token" else "999999:ANOTHER-token-of-the-bot") as api:
        base = {
            "revoked token": api.base_url,
            "mistyped base url": api.base_url + "t",
            "invalid url": "http://127.0.0.1:99999/bot",
            "debug": api.base_url,
        }.get(failure)
        async with RedirectLoop() as loop_url:
            settings = Settings(
                _env_file=None,
                telegram_bot_token=TOKEN,
                telegram_base_url=base or loop_url,
                fitbot_data_dir=tmp_path,
                fitbot_log_level="DEBUG" if failure == "debug" else "INFO",
                hf_hub_offline=True,
            )
            if failure == "debug":
                api.push_update(api.make_message("/fit qwen3-8b rtx 4090", chat_id=777))

            seen: list[str] = []

            async def happened() -> bool:
                seen.append(capfd.readouterr().err)
                if failure == "debug":
                    return any(e.method in ("sendMessage", "sendPhoto") for e in api.exchanges)
                return any("adapter_failed" in chunk for chunk in seen)

            with json_logging(settings.fitbot_log_level, settings.secrets()):
                await run_until(settings, happened)
                seen.append(capfd.readouterr().err)
    logged = "".join(seen)
    assert logged.count("\n") > 3 and ("adapter_failed" in logged or failure == "debug")
    assert TOKEN not in logged and TOKEN.split(":")[1] not in logged
    assert "«redacted»" in logged or failure in ("redirect loop", "invalid url")


async def test_start_up_errors_are_json_lines(tmp_path):
    """An unusable data directory or invalid settings: JSON log lines with an event, not a raw traceback."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data directory should be")
    for extra in ({"FITBOT_DATA_DIR": str(blocker / "data")}, {"RATE_USER_PER_MINUTE": "lots"}):
        env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "HF_HUB_OFFLINE": "1", **extra}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.app.cli", "run", cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        lines = err.decode().strip().splitlines()
        assert proc.returncode in (1, 2) and lines
        parsed = [json.loads(line) for line in lines]  # every line is JSON
        assert any(p.get("event") == "startup_failed" for p in parsed)
        assert TOKEN not in err.decode()
