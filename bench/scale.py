"""Several ``fitbot run`` workers on one PostgreSQL: SIGKILL, SIGTERM and a fresh start under load.

    .venv/bin/python bench/scale.py [--updates 2000] [--platform telegram|discord|both] [--quick]

Telegram: a throwaway PostgreSQL (``fitbot_fakes.postgres``: initdb + pg_ctl), the fake Bot API in
this process, and three production ``fitbot run`` workers (``FITBOT_DATABASE_URL`` set, each its
own data directory). ``--updates`` questions from ``updates / 5`` users are queued at once; when a
third are answered the elected poller (the leader) is killed with SIGKILL, at two thirds another
worker gets SIGTERM, and a fresh worker is started. Exactly-once accounting
(``bench.burst_plan.verify``): lost = questions never answered, duplicates = answers sent
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
import sys
import tempfile
import time
from collections.abc import Callable
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

    from storage.leader import lock_key

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


async def until(done: Callable[[], bool], what: str, timeout: float) -> None:
    """Polls ``done``; a round that would wait forever (a worker that never came up) fails, naming what."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        await asyncio.sleep(0.02)


def answered(tally: Any, at_least: int) -> Callable[[], bool]:
    def done() -> bool:
        tally.update()
        return bool(tally.count() >= at_least)

    return done


async def wait_leader(url: str, other_than: str | None, timeout: float) -> tuple[str, float]:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        name = await leader(url)
        if name and name != other_than:
            return name, time.monotonic() - started
        await asyncio.sleep(0.01)
    raise TimeoutError("no new leader")


async def kill_and_restart(
    url: str,
    first_leader: str,
    workers: list[asyncio.subprocess.Process],
    tally: Any,
    updates: int,
    start: Any,
    timeout: float,
) -> tuple[float, int]:
    """SIGKILL the leader (timing the failover), at two thirds SIGTERM another, then start a fresh one."""
    killed = next(w for w in workers if first_leader.endswith(f":{w.pid}"))
    killed.send_signal(signal.SIGKILL)
    _, failover_s = await wait_leader(url, first_leader, 30)
    await killed.wait()
    await until(answered(tally, 2 * updates // 3), "two thirds answered", timeout)
    termed = next(w for w in workers if w.returncode is None)
    termed.send_signal(signal.SIGTERM)
    code = await termed.wait()
    await start(len(workers))
    return failover_s, code


def card_tally(api: Any, cards: set[str], slow: Any) -> Any:
    """A tally of the cards from now on: chart photos sent after a card (bare, or with the short caption
    ``caption_for_photo`` gives them) are left out; a card sent as a photo's caption counts."""
    from bench.burst_plan import PHOTO, Tally

    class CardTally(Tally):
        def update(self) -> None:
            super().update()
            for chat, sent in self.sent.items():
                self.sent[chat] = [s for s in sent if s.text != PHOTO and (s.text in cards or slow.fullmatch(s.text))]

    return CardTally(api, pos=len(api.exchanges))


async def start_worker(data: Path, catalog_file: Path, base_url: str, database_url: str) -> asyncio.subprocess.Process:
    """A production ``fitbot run`` (Telegram only) on its own data directory and the shared database."""
    data.mkdir()
    shutil.copy(catalog_file, data / "catalog.sqlite")
    env = {
        **os.environ,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_BASE_URL": base_url,
        "FITBOT_DATABASE_URL": database_url,
        "FITBOT_DATA_DIR": str(data),
        "FITBOT_ADAPTERS": "telegram",
        "FITBOT_LOG_LEVEL": "WARNING",
        "PTB_TIMEDELTA": "1",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.app.cli", "run", cwd=ROOT, env=env, stderr=asyncio.subprocess.DEVNULL
    )


async def telegram_round(updates: int, timeout: float, faults: bool = True) -> dict[str, Any]:
    from bench.burst_plan import (
        apology_texts,
        expectations,
        make_plan,
        slow_down_pattern,
        verify,
        wait_for_responses,
    )
    from catalog.store import CatalogStore
    from fitbot_fakes.postgres import TempPostgres
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    asks = make_plan(max(1, updates // 5), 5, seed=25)[:updates]

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
                proc = await start_worker(root / f"worker{n}", catalog_file, api.base_url, pg.url)
                workers.append(proc)
                return proc

            try:
                for n in range(3):
                    await start(n)
                first_leader, _ = await wait_leader(pg.url, None, 60)
                await api.wait_call("getUpdates", timeout=60)
                await asyncio.sleep(1.0)  # every worker up (setMyCommands)
                tally = card_tally(api, cards, slow)
                pushed: dict[int, list[float]] = {}
                for a in asks:
                    api.push_update(api.make_message(a.text, chat_id=a.chat, language_code=a.lang))
                    pushed.setdefault(a.chat, []).append(time.monotonic())
                await until(answered(tally, updates // 3), "a third answered", timeout)
                failover_s, term_code = float("nan"), -1
                if faults:
                    failover_s, term_code = await kill_and_restart(
                        pg.url, first_leader, workers, tally, updates, start, timeout
                    )
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


# --------------------------------------------------------------------------- Discord


async def discord_child(port: int) -> None:
    """``fitbot run``'s Discord adapter (settings from the environment) pointed at the fake on ``port``."""
    import yarl

    from bot.adapters.discord.bot import discord, run_discord
    from bot.app.run import open_service
    from bot.app.settings import Settings
    from catalog.store import CatalogStore

    discord.http.Route.BASE = f"http://127.0.0.1:{port}/api/v10"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(f"ws://127.0.0.1:{port}/")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    service = await open_service(await CatalogStore(settings.catalog_path()).load(), settings)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await run_discord(
        service,
        "fake-token",
        shards=settings.discord_shards,
        shard_ids=settings.shard_ids(),
        sync_state_path=settings.data_dir() / "discord_sync.json",
        stop=stop,
        on_state=lambda s: print(s, flush=True),
    )
    await service.close()


GUILDS = tuple(g << 22 for g in range(1, 9))  # (id >> 22) % 2: four guilds on each shard


def shard_of(interaction: Any) -> int:
    return (int(interaction.payload["guild_id"]) >> 22) % 2


async def discord_round(interactions: int, rate: float, faults: bool = True) -> dict[str, Any]:
    from catalog.store import CatalogStore
    from fitbot_fakes.discord_api import FakeDiscord
    from fitbot_fakes.postgres import TempPostgres
    from locales import t

    models = ("qwen3-8b", "qwen3-32b", "glm-4.5-air", "gpt-oss-20b", "llama-3.3-70b-instruct")
    gpus = ("rtx-4090", "rtx-3090", "2x rtx-3090", "h100-sxm", "rtx-4060")
    with tempfile.TemporaryDirectory() as tmp, TempPostgres() as pg:
        root = Path(tmp)
        await CatalogStore(root / "catalog.sqlite").load()
        async with FakeDiscord(guild_ids=GUILDS, shards=2) as fake:
            procs: dict[int, asyncio.subprocess.Process] = {}

            async def start(shard: int) -> None:
                data = root / f"shard{shard}"
                data.mkdir(exist_ok=True)
                if not (data / "catalog.sqlite").exists():
                    shutil.copy(root / "catalog.sqlite", data / "catalog.sqlite")
                env = {
                    **os.environ,
                    "PYTHONWARNINGS": "ignore",
                    "PYTHONPATH": str(ROOT),
                    "FITBOT_DATA_DIR": str(data),
                    "FITBOT_DATABASE_URL": pg.url,
                    "DISCORD_SHARD_COUNT": "2",
                    "DISCORD_SHARD_IDS": str(shard),
                    "HF_HUB_OFFLINE": "1",
                    "FITBOT_LOG_LEVEL": "WARNING",
                }
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, __file__, "--discord-child", str(fake.port), cwd=ROOT, env=env,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
                )  # fmt: skip
                assert proc.stdout is not None

                def identified() -> int:
                    return sum(1 for f in fake.gateway_frames if f.get("op") == 2 and f["d"].get("shard") == [shard, 2])

                before = identified()
                while (line := await asyncio.wait_for(proc.stdout.readline(), 60)).strip() != b"running":
                    if not line:
                        raise RuntimeError(f"shard process {shard} exited with {await proc.wait()} before running")
                # the shard is held again once its new session identified
                await until(lambda: identified() > before, f"shard {shard} identified", 60)
                procs[shard] = proc

            await asyncio.gather(start(0), start(1))
            await asyncio.sleep(1.0)  # both shards READY with their guilds
            payloads = [
                fake.make_slash(
                    "fit",
                    {"model": models[i % 5], "gpu": gpus[(i // 5) % 5], "context": 4096 + 256 * i},
                    user_id=1100000000000000300 + i,
                    guild_id=GUILDS[i % len(GUILDS)],
                )
                for i in range(interactions)
            ]
            outage: list[str] = []

            async def stream() -> None:
                """``rate`` interactions a second. One for a shard while no process holds it (from the
                kill or exit until the new process is READY) is what Discord shows as "the application
                did not respond": nobody can answer it, and Discord does not deliver it again."""
                started = time.monotonic()
                for n, payload in enumerate(payloads):
                    await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))
                    try:
                        await fake.dispatch("INTERACTION_CREATE", payload)
                    except (RuntimeError, ConnectionError):
                        outage.append(payload["id"])

            def acked() -> int:
                return sum(1 for i in fake.interactions.values() if i.acked is not None)

            streaming = asyncio.create_task(stream())
            await until(lambda: acked() >= interactions // 3, "a third acknowledged", 120)
            down: list[tuple[int, float, float]] = []  # (shard, from, to): no process holds the shard
            term_code = -1
            if faults:
                procs[1].send_signal(signal.SIGKILL)  # a crash: the restart edits what it left deferred
                killed_at = time.monotonic()
                await procs[1].wait()
                await start(1)
                down.append((1, killed_at, time.monotonic()))
                # what shard 1 had not acknowledged is gone with it (Discord does not deliver it again)
                stranded = sum(1 for i in fake.interactions.values() if i.acked is None and shard_of(i) == 1)
                await until(
                    lambda: acked() + len(outage) + stranded >= 2 * interactions // 3, "two thirds acknowledged", 120
                )
                procs[0].send_signal(signal.SIGTERM)  # a rolling restart: it drains, then starts again
                term_code = await procs[0].wait()
                exited_at = time.monotonic()
                await start(0)
                down.append((0, exited_at, time.monotonic()))
            await streaming
            for _ in range(600):
                if not fake.thinking():
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)
            for proc in procs.values():
                proc.send_signal(signal.SIGTERM)
            await asyncio.gather(*(proc.wait() for proc in procs.values()))
            shard_down = {
                i.id
                for i in fake.interactions.values()
                for shard, start_s, end_s in down
                if shard_of(i) == shard and start_s <= i.dispatched_at <= end_s
            }
            outage += sorted(shard_down)
            received = [i for i in fake.interactions.values() if i.id not in outage]
            restarting = {t("en", "discord.restarting"), t("de", "discord.restarting")}
            told = {
                r.path.split("/")[-3]
                for r in fake.requests_to("PATCH", "/messages/@original")
                if r.json and r.json.get("content") in restarting
            }
            told |= {
                r.path.split("/")[-3]
                for r in fake.requests_to("POST", "/callback")
                if (r.json or {}).get("data", {}).get("content") in restarting
            }
            callbacks = {r.path.split("/")[-3]: r for r in fake.requests_to("POST", "/callback")}
            latencies = [callbacks[i.id].at - i.dispatched_at for i in received if i.id in callbacks]
            answer_at: dict[str, float] = {}  # by token: the card arrived (callback type 4, followup, or edit)
            for r in fake.requests_to("POST", "/callback"):
                if (r.json or {}).get("type") == 4 and (r.json.get("data") or {}).get("embeds"):
                    answer_at.setdefault(r.path.split("/")[-2], r.at)
            for r in fake.requests_to("POST", "/webhooks/") + fake.requests_to("PATCH", "/messages/@original"):
                token = r.path.split("/")[-3] if r.path.endswith("@original") else r.path.split("/")[-1]
                if (r.json or {}).get("content") not in restarting:
                    answer_at.setdefault(token, r.at)
            answer_latencies = [answer_at[i.token] - i.dispatched_at for i in received if i.token in answer_at]
            told_ids = {i.id for i in received if i.id in told or i.token in told}
            answered = sum(1 for i in received if i.acked is not None and i.id not in told_ids)
            never = sum(1 for i in received if i.acked is None)
            thinking = len(fake.thinking())
    return {
        "platform": "discord",
        "interactions": interactions,
        "processes": (
            f"2 shard processes; shard 1 SIGKILLed at 1/3, shard 0 SIGTERMed at 2/3 (exit {term_code}), both restarted"
            if faults
            else "2 shard processes, no faults"
        ),
        "rate_per_s": rate,
        "answered": answered,
        "told_to_ask_again": len(told_ids),
        "left_on_thinking": thinking,
        "received_never_acknowledged": never,
        "sent_while_shard_down": len(outage),
        "first_response_p50_s": round(percentile(latencies, 0.5), 2),
        "first_response_p99_s": round(percentile(latencies, 0.99), 2),
        "card_p50_s": round(percentile(answer_latencies, 0.5), 2),
        "card_p99_s": round(percentile(answer_latencies, 0.99), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=2000, help="questions queued at once (default 2000)")
    parser.add_argument("--platform", choices=("telegram", "discord", "both"), default="both")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for every answer")
    parser.add_argument("--quick", action="store_true", help="a CI-sized run: 60 updates")
    parser.add_argument("--no-faults", action="store_true", help="the baseline: nobody is killed")
    parser.add_argument("--rate", type=float, default=50.0, help="Discord interactions a second (default 50)")
    parser.add_argument("--discord-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.discord_child:
        asyncio.run(discord_child(args.discord_child))
        return
    updates = 60 if args.quick else args.updates
    if args.platform in ("telegram", "both"):
        report(asyncio.run(telegram_round(updates, args.timeout, faults=not args.no_faults)))
    if args.platform in ("discord", "both"):
        report(asyncio.run(discord_round(updates, args.rate, faults=not args.no_faults)))


def report(result: dict[str, Any]) -> None:
    print(" · ".join(f"{k} {v}" for k, v in result.items()), flush=True)


if __name__ == "__main__":
    main()
