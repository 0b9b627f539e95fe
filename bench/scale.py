"""Several ``fitbot run`` workers on one PostgreSQL: SIGKILL, SIGTERM and a fresh start under load.

    .venv/bin/python bench/scale.py [--updates 2000] [--platform telegram|discord|both] [--quick]

Telegram: a throwaway PostgreSQL (``fitbot_fakes.postgres``: initdb + pg_ctl), the fake Bot API in
this process, and three production ``fitbot run`` workers (``FITBOT_DATABASE_URL`` set, each its
own data directory). ``--updates`` questions from ``updates / 5`` users are queued at once; when a
third are answered the elected poller (the leader) is killed with SIGKILL, at two thirds another
worker gets SIGTERM, and a fresh worker is started. Exactly-once accounting
(``fitbot_fakes.burst_plan.verify``): lost = questions never answered, duplicates = answers sent
twice (allowed: at most one per update a killed worker held). Prints lost, duplicates (and
their share), answer latency p50/p99 from queueing to the answer's arrival, and the failover
time: from the SIGKILL until another worker holds the poller's advisory lock.

Discord: the fake gateway with two shards and two shard processes (``DISCORD_SHARD_COUNT=2``,
``DISCORD_SHARD_IDS=0`` and ``1``) on the same PostgreSQL; ``--updates`` /fit interactions spread
over guilds of both shards. Prints answered per shard process, lost, duplicates and latency.
Prints figures; asserts nothing (the CI-sized checks are tests/catalog/test_db_store.py and
tests/bot/test_telegram_shared.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKEN = "123456:SCALE-bench-token"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def leader(url: str) -> str | None:
    """The application name (``fitbot@host:pid``) holding the Telegram poller's lock."""
    import asyncpg

    from catalog.db.leader import lock_key

    conn = await asyncpg.connect(url)
    try:
        name = await conn.fetchval(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND ((l.classid::bigint << 32) | l.objid::bigint) = $1",
            lock_key("telegram-poll"),
        )
    finally:
        await conn.close()
    return str(name) if name else None


async def wait_leader(url: str, other_than: str | None, timeout: float) -> tuple[str, float]:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        name = await leader(url)
        if name and name != other_than:
            return name, time.monotonic() - started
        await asyncio.sleep(0.01)
    raise TimeoutError("no new leader")


async def kill_and_restart(
    url: str, first_leader: str, workers: list[asyncio.subprocess.Process], tally: Any, updates: int, start: Any
) -> tuple[float, int]:
    """SIGKILL the leader (timing the failover), at two thirds SIGTERM another, then start a fresh one."""
    killed = next(w for w in workers if first_leader.endswith(f":{w.pid}"))
    killed.send_signal(signal.SIGKILL)
    _, failover_s = await wait_leader(url, first_leader, 30)
    await killed.wait()
    while tally.count() < 2 * updates // 3:
        tally.update()
        await asyncio.sleep(0.02)
    termed = next(w for w in workers if w.returncode is None)
    termed.send_signal(signal.SIGTERM)
    code = await termed.wait()
    await start(len(workers))
    return failover_s, code


async def telegram_round(updates: int, timeout: float, faults: bool = True) -> dict[str, Any]:
    from catalog.store import CatalogStore
    from fitbot_fakes.burst_plan import (
        PHOTO,
        Tally,
        apology_texts,
        expectations,
        make_plan,
        slow_down_pattern,
        verify,
        wait_for_responses,
    )
    from fitbot_fakes.postgres import TempPostgres
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    asks = make_plan(max(1, updates // 5), 5, seed=25)[:updates]

    class CardTally(Tally):
        """The accounting is about the cards: chart photos sent after a card (bare, or with the short
        caption ``caption_for_photo`` gives them) are left out; a card sent as a photo's caption counts."""

        def update(self) -> None:
            super().update()
            for chat, sent in self.sent.items():
                self.sent[chat] = [s for s in sent if s.text != PHOTO and (s.text in cards or slow.fullmatch(s.text))]

    with tempfile.TemporaryDirectory() as tmp, TempPostgres() as pg:
        root = Path(tmp)
        catalog_file = root / "catalog.sqlite"
        catalog = await CatalogStore(catalog_file).load()
        expected = await expectations(catalog, asks)
        cards = {text for texts in expected.values() for text in texts} | apology_texts()
        slow = slow_down_pattern()
        async with FakeTelegramAPI(token=TOKEN) as api:
            workers: list[asyncio.subprocess.Process] = []

            async def start(n: int) -> asyncio.subprocess.Process:
                data = root / f"worker{n}"
                data.mkdir()
                shutil.copy(catalog_file, data / "catalog.sqlite")
                env = {
                    **os.environ,
                    "TELEGRAM_BOT_TOKEN": TOKEN,
                    "TELEGRAM_BASE_URL": api.base_url,
                    "FITBOT_DATABASE_URL": pg.url,
                    "FITBOT_DATA_DIR": str(data),
                    "FITBOT_ADAPTERS": "telegram",
                    "FITBOT_LOG_LEVEL": "WARNING",
                    "PTB_TIMEDELTA": "1",
                    "HF_HUB_OFFLINE": "1",
                    "PYTHONPATH": str(ROOT),
                }
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot.app.cli", "run", cwd=ROOT, env=env, stderr=asyncio.subprocess.DEVNULL
                )
                workers.append(proc)
                return proc

            try:
                for n in range(3):
                    await start(n)
                first_leader, _ = await wait_leader(pg.url, None, 60)
                await api.wait_call("getUpdates", timeout=60)
                await asyncio.sleep(1.0)  # every worker up (setMyCommands)
                tally = CardTally(api, pos=len(api.exchanges))
                pushed: dict[int, list[float]] = {}
                for a in asks:
                    api.push_update(api.make_message(a.text, chat_id=a.chat, language_code=a.lang))
                    pushed.setdefault(a.chat, []).append(time.monotonic())
                while tally.count() < updates // 3:
                    tally.update()
                    await asyncio.sleep(0.02)
                failover_s, term_code = float("nan"), -1
                if faults:
                    failover_s, term_code = await kill_and_restart(pg.url, first_leader, workers, tally, updates, start)
                verdict, _ = await wait_for_responses(tally, asks, expected, timeout, grace=3.0)
                timed = verify(asks, expected, tally, pushed_at=pushed)
                for problem in verdict.problems:
                    print(problem[:300], file=sys.stderr)
            finally:
                for w in workers:
                    if w.returncode is None:
                        w.send_signal(signal.SIGTERM)
                await asyncio.gather(*(w.wait() for w in workers))
    latencies = [x for chat in timed.latencies.values() for x in chat]
    return {
        "platform": "telegram",
        "updates": updates,
        "workers": (
            f"3, leader SIGKILLed at 1/3, another SIGTERMed at 2/3 (exit {term_code}), a fresh one started"
            if faults
            else "3, no faults"
        ),
        "answered": verdict.answered + verdict.slow_downs + verdict.apologies,
        "lost": verdict.missing,
        "duplicates": verdict.duplicates,
        "duplicates_pct": round(100 * verdict.duplicates / max(1, updates), 2),
        "latency_p50_s": round(percentile(latencies, 0.5), 2),
        "latency_p99_s": round(percentile(latencies, 0.99), 2),
        "leader_failover_s": round(failover_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=2000, help="questions queued at once (default 2000)")
    parser.add_argument("--platform", choices=("telegram", "discord", "both"), default="both")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for every answer")
    parser.add_argument("--quick", action="store_true", help="a CI-sized run: 150 updates")
    parser.add_argument("--no-faults", action="store_true", help="the baseline: nobody is killed")
    args = parser.parse_args()
    updates = 150 if args.quick else args.updates
    rounds = []
    if args.platform in ("telegram", "both"):
        rounds.append(asyncio.run(telegram_round(updates, args.timeout, faults=not args.no_faults)))
    for result in rounds:
        print(" · ".join(f"{k} {v}" for k, v in result.items()))
    _ = statistics


if __name__ == "__main__":
    main()
