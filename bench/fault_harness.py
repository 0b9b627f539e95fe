"""Shared by bench/telegram_faults.py and bench/stop_faults.py: the production ``fitbot run`` in a child
process against the loopback fakes in this one, and the accounting of what reached the chats."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKEN = "123456:FAULTS-bench-token"
QUESTIONS = ("/fit qwen3 8b 4090", "/fit qwen3 32b 3090", "/fit gemma 3 27b 4090", "/fit glm 4.5 air 5090")
SENDS = ("sendMessage", "sendPhoto", "sendDocument")


def question(i: int) -> str:
    return f"{QUESTIONS[i % len(QUESTIONS)]} {4 + i % 28}k"


async def catalog_template(work: Path) -> Path:
    """A built catalog.sqlite to copy into each data directory (building one costs seconds)."""
    from catalog.store import CatalogStore

    path = work / "template" / "catalog.sqlite"
    if not path.exists():
        await CatalogStore(path).load()
    return path


def data_dir(work: Path, name: str, template: Path) -> Path:
    data = work / name
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(template, data / "catalog.sqlite")
    return data


class Child:
    """One ``fitbot run`` (own session, log in a file): start, signal, wait, kill."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> Child:
        with open(self.log, "ab") as out:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.app.cli", "run", cwd=ROOT, env=self.env, stdout=out, stderr=out
            )
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def wait(self, timeout: float) -> int | None:
        assert self.proc is not None
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return None

    async def stop(self, grace: float = 30.0) -> tuple[int, float]:
        """SIGTERM, SIGKILL after ``grace`` (as systemd and compose do); exit code and seconds to exit."""
        assert self.proc is not None
        if not self.alive:
            return self.proc.returncode or 0, 0.0
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = await self.wait(grace)
        if code is None:
            self.proc.kill()
            code = await self.wait(10)
        return (code if code is not None else -9), time.monotonic() - started

    async def kill(self) -> None:
        if self.alive and self.proc is not None:
            self.proc.kill()
            await self.proc.wait()

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def telegram_env(base_url: str, data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_", "HF_"))}
    env.update(
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_BASE_URL=base_url,
        FITBOT_DATA_DIR=str(data),
        FITBOT_ADAPTERS="telegram",
        FITBOT_LOG_LEVEL="INFO",
        PTB_TIMEDELTA="1",
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def first_answer_at(api: Any) -> dict[int, float]:
    """Per chat, when its first accepted send reached the fake (monotonic seconds)."""
    out: dict[int, float] = {}
    for exchange in list(api.exchanges):
        if exchange.method in SENDS and exchange.status == 200:
            try:
                chat = int(exchange.params.get("chat_id"))
            except (TypeError, ValueError):
                continue
            out.setdefault(chat, exchange.at)
    return out


def answered(api: Any) -> set[int]:
    return set(first_answer_at(api))


def duplicated(api: Any, chats: set[int]) -> int:
    """Chats that got the same message text twice."""
    seen: dict[int, list[str]] = {}
    for e in list(api.exchanges):
        if e.method in SENDS and e.status == 200:
            chat = int(e.params.get("chat_id"))
            if chat in chats:
                seen.setdefault(chat, []).append(str(e.params.get("text") or e.params.get("caption") or e.method))
    return sum(len(v) != len(set(v)) for v in seen.values())


async def until(check: Any, timeout: float, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        await asyncio.sleep(step)
    return bool(check())


def ask(api: Any, chats: range | list[int], **kw: Any) -> float:
    """Pushes one question per chat; returns when (monotonic)."""
    at = time.monotonic()
    for chat in chats:
        api.push_update(api.make_message(question(chat), chat_id=chat, **kw))
    return at
