"""Throughput of the Telegram adapter: N fit questions through the real client against the fake Bot API.

    .venv/bin/python bench/telegram_load.py [-n 2000] [--rate 0] [--warmup 50]

The fake Bot API (fitbot_fakes/telegram_api.py) runs in this process; the bot runs in a child process
through the production ``run_telegram`` (built by ``build_application``, no rate limiter, no chart
images) on the production ``open_service`` (user database and usage log in a temporary directory),
started with ``--child``. Every question comes from its own user and private chat, so each sendMessage maps to
one question. ``--rate 0`` queues all N at once (throughput); ``--rate R`` pushes R questions a
second (latency under a load the bot can carry). The service caches whole answers, so a mix of
popular questions is mostly cache hits; ``--unique`` makes every question's text different (a
different context length each) to time the estimator as well. Prints answers/s, p50/p99 latency (push -> the
sendMessage reaching the fake), the bot's CPU time and its RSS idle and at peak (getrusage in the
child). The fake's own CPU competes for the same cores, so the figures are lower bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fitbot_fakes.telegram_api import Exchange, FakeTelegramAPI

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKEN = "123456:BENCH-token"
QUESTIONS = (  # fit questions that give a one-message card without a chart
    "/fit qwen3 32b 4090",
    "can I run qwen3 8b on a 3090 with 32k?",
    "/fit llama 3.3 70b 2x 3090",
    "kann ich qwen3 32b auf einer 4090 laufen lassen?",
    "/fit qwen3 14b rtx 3060 16k",
    "/fit mistral small 24b 4090 32k",
    "passt gemma 3 27b auf eine 3090?",
    "/fit glm 4.5 air 2x 3090",
)
FIRST_CHAT = 1_000_000


def rss_kib(pid: int) -> int:
    """Current resident set size of ``pid`` in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def child(base_url: str) -> None:
    """The bot: production wiring, no rate limiter; prints its peak RSS and CPU time on SIGTERM."""
    from bot.adapters.telegram.bot import run_telegram
    from bot.app.run import open_service
    from bot.app.settings import Settings
    from catalog.store import CatalogStore

    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
        service = await open_service(
            catalog,
            Settings(  # type: ignore[call-arg]  # _env_file: a pydantic-settings option mypy can't see
                _env_file=None,
                fitbot_data_dir=Path(tmp),
                rate_user_per_minute=10_000,
                rate_chat_per_minute=100_000,
            ),
        )
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await run_telegram(service, token=TOKEN, base_url=base_url, rate_limiter=False, charts=False, stop=stop)
        await service.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"maxrss_kib": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)


def answered(api: FakeTelegramAPI, since: int, chats: set[int]) -> list[Exchange]:
    return [
        e
        for e in api.exchanges[since:]
        if e.method == "sendMessage" and e.status == 200 and e.params.get("chat_id") in chats
    ]


async def push_all(api: FakeTelegramAPI, updates: list[dict[str, Any]], rate: float) -> dict[int, float]:
    """Queues the updates (all at once, or ``rate`` a second); returns push time per chat."""
    pushed: dict[int, float] = {}
    start = time.monotonic()
    for i, update in enumerate(updates):
        if rate > 0 and (delay := start + i / rate - time.monotonic()) > 0:
            await asyncio.sleep(delay)
        pushed[update["message"]["chat"]["id"]] = time.monotonic()
        api.push_update(update)
    return pushed


async def wait_answers(api: FakeTelegramAPI, since: int, chats: set[int], timeout: float) -> list[Exchange]:
    deadline = time.monotonic() + timeout
    while len(found := answered(api, since, chats)) < len(chats):
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(found)} of {len(chats)} answers within {timeout:.0f} s")
        await asyncio.sleep(0.05)
    return found


def make_updates(api: FakeTelegramAPI, first: int, count: int, unique: bool = False) -> list[dict[str, Any]]:
    return [
        api.make_message(
            QUESTIONS[i % len(QUESTIONS)] + (f" {4096 + first + i - FIRST_CHAT}" if unique else ""),
            chat_id=first + i,
            language_code="en",
        )
        for i in range(count)
    ]


async def run(n: int, rate: float, warmup: int, unique: bool, profile: str | None = None) -> None:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        profiling = ["--profile", profile] if profile else []
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--child",
            api.base_url,
            *profiling,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            found, pushed, idle_rss, peak_rss, elapsed = await measure(api, proc, n, rate, warmup, unique)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
    stats = json.loads(out.decode().strip().splitlines()[-1])
    report(n, rate, warmup, unique, found, pushed, idle_rss, peak_rss, elapsed, stats)


async def measure(
    api: FakeTelegramAPI, proc: asyncio.subprocess.Process, n: int, rate: float, warmup: int, unique: bool
) -> tuple[list[Exchange], dict[int, float], int, int, float]:
    """Warm-up, then the timed run; returns the answers, push times, RSS figures and elapsed seconds."""
    await api.wait_call("getUpdates", timeout=60)
    warm = make_updates(api, FIRST_CHAT, warmup)
    await push_all(api, warm, 0)
    await wait_answers(api, 0, {u["message"]["chat"]["id"] for u in warm}, 60)
    idle_rss = rss_kib(proc.pid)
    updates = make_updates(api, FIRST_CHAT + warmup, n, unique)
    since = len(api.exchanges)
    start = time.monotonic()
    pushed = await push_all(api, updates, rate)
    found = await wait_answers(api, since, set(pushed), 120 + (n / rate if rate else 0))
    elapsed = max(e.at for e in found) - start
    return found, pushed, idle_rss, rss_kib(proc.pid), elapsed


def report(
    n: int,
    rate: float,
    warmup: int,
    unique: bool,
    found: list[Exchange],
    pushed: dict[int, float],
    idle_rss: int,
    peak_rss: int,
    elapsed: float,
    stats: dict[str, Any],
) -> None:
    latencies = sorted(e.at - pushed[e.params["chat_id"]] for e in found)
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    mode = (f"{rate:g}/s pushed" if rate else "all queued at once") + (", unique texts" if unique else "")
    print(f"telegram_load: {n} fit questions ({mode}), {len(found)} answers, warm-up {warmup}")
    print(f"  answers/s      {n / elapsed:8.1f}")
    print(f"  latency p50    {statistics.median(latencies) * 1000:8.1f} ms")
    print(f"  latency p99    {p99 * 1000:8.1f} ms")
    print(f"  bot CPU        {stats['cpu_s']:8.2f} s total (incl. start-up and warm-up)")
    print(
        f"  bot RSS        {idle_rss / 1024:8.1f} MiB after warm-up, {peak_rss / 1024:.1f} MiB after the run, "
        f"{stats['maxrss_kib'] / 1024:.1f} MiB peak (getrusage)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="questions to time (default 2000)")
    parser.add_argument("--rate", type=float, default=0, help="questions per second; 0 = all at once")
    parser.add_argument("--warmup", type=int, default=50, help="untimed questions first (default 50)")
    parser.add_argument("--unique", action="store_true", help="a different text per question (no answer cache)")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the bot process to FILE")
    parser.add_argument("--child", metavar="BASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a few seconds' smoke run (CI)")
    args = parser.parse_args()
    if args.quick:
        args.n, args.warmup = 100, 10
    if args.child and args.profile:
        import cProfile

        cProfile.run(f"asyncio.run(child({args.child!r}))", args.profile)
    elif args.child:
        asyncio.run(child(args.child))
    else:
        asyncio.run(run(args.n, args.rate, args.warmup, args.unique, args.profile))


if __name__ == "__main__":
    main()
