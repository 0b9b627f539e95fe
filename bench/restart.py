"""SIGTERM and kill -9 under a backlog: is any question lost, is anyone left on "thinking…"?

    .venv/bin/python bench/restart.py [--backlog 1000] [--platform telegram|discord|both] [--quick]

Telegram: the production ``fitbot run`` (with production send pacing, about 30 messages a second)
in a child process against the fake Bot API in this one. ``--backlog`` questions from
``backlog / 5`` users are queued at once; once a tenth are answered the bot gets SIGTERM (then
kill -9 in a second round) and is started again on the same data directory. Exactly-once
accounting (``bench.burst_plan.verify``): lost = questions never answered, duplicates =
answers sent twice. Prints both per round, the stop time and how many were answered before the stop.

Discord: the production ``run_discord`` (``open_service`` wiring, a user database) in a child
process against the fake gateway/REST. ``--backlog`` /fit interactions from distinct users are
dispatched at once; once a tenth have their callback, the child gets SIGTERM (it drains: answers
in flight get the grace period, the rest a "restarting, ask again" edit), then kill -9 in a
second round, after which the bot is started again and edits what the dead process left deferred.
Prints interactions left on "thinking…" (deferred, never followed up), answered, told to ask
again, and never acknowledged. Prints figures; asserts nothing (the CI-sized checks are
tests/bot/test_telegram_restart.py and tests/bot/test_discord_stop.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKEN = "123456:RESTART-bench-token"


# --------------------------------------------------------------------------- Telegram


async def telegram_round(backlog: int, how: signal.Signals, timeout: float) -> dict[str, Any]:
    from bench.burst_plan import PHOTO, Tally, expectations, make_plan, verify, wait_for_responses
    from catalog.store import CatalogStore
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    class CardTally(Tally):
        """``fitbot run`` sends charts; the accounting is about the cards, so the chart photos are left out."""

        def update(self) -> None:
            super().update()
            for chat, sent in self.sent.items():
                self.sent[chat] = [s for s in sent if s.text != PHOTO]

    asks = make_plan(max(1, backlog // 5), 5, seed=21)[:backlog]
    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "bench-catalog.sqlite").load()
        expected = await expectations(catalog, asks)
        async with FakeTelegramAPI(token=TOKEN) as api:
            env = {
                **os.environ,
                "TELEGRAM_BOT_TOKEN": TOKEN,
                "TELEGRAM_BASE_URL": api.base_url,
                "FITBOT_DATA_DIR": str(Path(tmp) / "data"),
                "FITBOT_ADAPTERS": "telegram",
                "FITBOT_LOG_LEVEL": "WARNING",
                "PTB_TIMEDELTA": "1",
                "HF_HUB_OFFLINE": "1",
                "PYTHONPATH": str(ROOT),
            }

            async def start() -> asyncio.subprocess.Process:
                return await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot.app.cli", "run", cwd=ROOT, env=env, stderr=asyncio.subprocess.DEVNULL
                )

            proc = await start()
            await api.wait_call("getUpdates", timeout=60)
            await asyncio.sleep(0.5)  # setMyCommands
            tally = CardTally(api, pos=len(api.exchanges))
            for a in asks:
                api.push_update(api.make_message(a.text, chat_id=a.chat, language_code=a.lang))
            while tally.count() < backlog // 10:
                tally.update()
                await asyncio.sleep(0.02)
            stop_at = time.monotonic()
            proc.send_signal(how)
            code = await proc.wait()
            stop_s = time.monotonic() - stop_at
            tally.update()
            before = verify(asks, expected, tally)
            answered_before = before.answered + before.slow_downs + before.apologies
            proc = await start()
            try:
                verdict, _ = await wait_for_responses(tally, asks, expected, timeout, grace=2.0)
            finally:
                proc.send_signal(signal.SIGTERM)
                await proc.wait()
    return {
        "signal": how.name,
        "backlog": backlog,
        "answered_before_stop": answered_before,
        "stop_s": round(stop_s, 1),
        "exit_code": code,
        "answered": verdict.answered + verdict.slow_downs + verdict.apologies,
        "lost": verdict.missing,
        "duplicates": verdict.duplicates,
        "incomplete": verdict.incomplete,
    }


# --------------------------------------------------------------------------- Discord


async def discord_child(port: int, data_dir: Path, grace: float, rest_port: int | None = None) -> None:
    """The production Discord adapter pointed at the fake on ``port`` (REST on ``rest_port``, a proxy, when
    given); SIGTERM stops it gracefully."""
    import discord
    import yarl

    from bot.adapters.discord.bot import run_discord
    from bot.app.run import open_service
    from bot.app.settings import Settings
    from catalog.store import CatalogStore

    discord.http.Route.BASE = f"http://127.0.0.1:{rest_port or port}/api/v10"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(f"ws://127.0.0.1:{port}/")
    # _env_file: a pydantic-settings option mypy can't see (pydantic's dataclass_transform hides it)
    settings = Settings(_env_file=None, fitbot_data_dir=data_dir, hf_hub_offline=True)  # type: ignore[call-arg]
    service = await open_service(await CatalogStore(settings.catalog_path()).load(), settings)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await run_discord(service, "fake-token", stop=stop, grace_s=grace, on_state=lambda s: print(s, flush=True))
    await service.close()


async def discord_round(backlog: int, how: signal.Signals, grace: float) -> dict[str, Any]:
    from catalog.store import CatalogStore
    from fitbot_fakes.discord_api import FakeDiscord
    from locales import t

    models = ("qwen3-8b", "qwen3-32b", "glm-4.5-air", "gpt-oss-20b", "llama-3.3-70b-instruct")
    gpus = ("rtx-4090", "rtx-3090", "2x rtx-3090", "h100-sxm", "rtx-4060")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        await CatalogStore(data / "catalog.sqlite").load()
        async with FakeDiscord() as fake:

            async def start() -> asyncio.subprocess.Process:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    __file__,
                    "--discord-child",
                    str(fake.port),
                    "--data",
                    str(data),
                    "--grace",
                    str(grace),
                    cwd=ROOT,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,
                    env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)},
                )
                assert proc.stdout is not None
                while (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() != b"running":
                    pass
                return proc

            proc = await start()
            payloads = [
                fake.make_slash(
                    "fit",
                    {"model": models[i % 5], "gpu": gpus[(i // 5) % 5], "context": 4096 + 256 * i},
                    user_id=1100000000000000300 + i,
                    locale="de" if i % 3 == 0 else "en-US",
                )
                for i in range(backlog)
            ]
            for p in payloads:
                await fake.dispatch("INTERACTION_CREATE", p)
            while len(fake.requests_to("POST", "/callback")) < backlog // 10:
                await asyncio.sleep(0.01)
            stop_at = time.monotonic()
            proc.send_signal(how)
            code = await proc.wait()
            stop_s = time.monotonic() - stop_at
            thinking_at_exit = len(fake.thinking())
            if how is signal.SIGKILL:  # the next start edits what the dead process left deferred
                proc = await start()
                for _ in range(200):
                    if not fake.thinking():
                        break
                    await asyncio.sleep(0.05)
                proc.send_signal(signal.SIGTERM)
                await proc.wait()
            ids = {p["id"] for p in payloads}
            acked = {i.id for i in fake.interactions.values() if i.id in ids and i.acked is not None}
            restarting = {t("en", "discord.restarting"), t("de", "discord.restarting")}
            edits = [r.json.get("content") for r in fake.requests_to("PATCH", "/messages/@original") if r.json]
            immediate = [
                r
                for r in fake.requests_to("POST", "/callback")
                if (r.json or {}).get("data", {}).get("content") in restarting
            ]
            return {
                "signal": how.name,
                "backlog": backlog,
                "stop_s": round(stop_s, 1),
                "exit_code": code,
                "thinking_at_exit": thinking_at_exit,
                "thinking_left": len(fake.thinking()),
                "acknowledged": len(acked),
                "told_to_ask_again": sum(e in restarting for e in edits) + len(immediate),
                "never_acknowledged": backlog - len(acked),
            }


# --------------------------------------------------------------------------- main


def report(rounds: list[dict[str, Any]]) -> None:
    for r in rounds:
        if "lost" in r:
            print(
                f"telegram {r['signal']:>7} with {r['backlog']} queued: {r['answered_before_stop']} answered before the"
                f" stop ({r['stop_s']} s to exit, code {r['exit_code']}); after the restart {r['answered']} answered,"
                f" {r['lost']} lost, {r['duplicates']} duplicates, {r['incomplete']} card parts missing"
            )
        else:
            print(
                f"discord  {r['signal']:>7} with {r['backlog']} in flight: {r['stop_s']} s to exit (code"
                f" {r['exit_code']}); on 'thinking…' at exit {r['thinking_at_exit']}, left after"
                f" {'the restart' if r['signal'] == 'SIGKILL' else 'the stop'} {r['thinking_left']};"
                f" told to ask again {r['told_to_ask_again']}; never acknowledged {r['never_acknowledged']}"
            )


async def main_async(args: argparse.Namespace) -> None:
    rounds: list[dict[str, Any]] = []
    for how in (signal.SIGTERM, signal.SIGKILL):
        if args.platform in ("telegram", "both"):
            rounds.append(await telegram_round(args.backlog, how, args.timeout))
            report(rounds[-1:])
        if args.platform in ("discord", "both"):
            rounds.append(await discord_round(args.backlog, how, args.grace))
            report(rounds[-1:])
    if args.json:
        print(json.dumps(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backlog", type=int, default=1000, help="questions queued at once")
    parser.add_argument("--platform", choices=("telegram", "discord", "both"), default="both")
    parser.add_argument("--grace", type=float, default=20.0, help="Discord drain grace (production: 20 s)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the rest after a restart")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--quick", action="store_true", help="a short smoke run: 30 questions, 2 s Discord grace")
    parser.add_argument("--discord-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rest-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.backlog, args.timeout, args.grace = 30, 60.0, 2.0
    if args.discord_child:
        asyncio.run(discord_child(args.discord_child, args.data, args.grace, args.rest_port))
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
