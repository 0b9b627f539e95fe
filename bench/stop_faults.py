"""Stopping under faults: does ``fitbot run`` exit within 10 s of SIGTERM, and is every @mention answered? (issue 21)

    .venv/bin/python bench/stop_faults.py [SCENARIO ...] [--quick]

* ``hang`` / ``drip`` / ``nodns``: the production ``fitbot run`` (Telegram, against the fake Bot API)
  with ``HUB_TIMEOUT_S=10`` (the default) and a Hugging Face endpoint whose search never answers
  (questions about unknown names), whose model info drips one byte a second (questions naming
  repos), or whose host name does not resolve. Once the look-ups are under way the bot gets
  SIGTERM: seconds to exit (Docker kills at 10 s), exit code, questions answered.
* ``mentions``: the production Discord adapter (``bench/restart.py``'s child) gets 40 @mentions at
  once and SIGTERM 0.5 s later: how many were answered (a reply to the mention).

``--quick`` runs ``nodns`` and ``mentions`` with 10 mentions. Prints figures; asserts nothing (the
CI-sized checks are tests/catalog/test_hub_deadlines.py and tests/bot/test_discord_stop.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fault_harness import ROOT, Child, answered, catalog_template, data_dir, telegram_env

SCENARIOS = ("hang", "drip", "nodns", "mentions")


async def hub_stop(work: Path, template: Path, kind: str, lookups: int) -> str:
    from fitbot_fakes.hostile_hub import HostileHub
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    repos = [f"fitbot-test/{name}" for name in ("dense-8b", "moe-30b-a3b", "slow")]
    with HostileHub(drip=set(repos), drip_every_s=1.0) as hub:
        hub.search_hangs = kind == "hang"
        endpoint = "http://fitbot-bench.invalid" if kind == "nodns" else hub.endpoint
        async with FakeTelegramAPI() as api:
            env = telegram_env(
                api.base_url,
                data_dir(work, kind, template),
                HF_ENDPOINT=endpoint,
                HF_HUB_OFFLINE="0",
                HUB_TIMEOUT_S="10",
            )
            bot = await Child(env, work / f"{kind}.log").start()
            await api.wait_call("getUpdates", timeout=90)
            for i in range(lookups):
                text = f"/fit zorblax {7 + i}b 4090" if kind == "hang" else f"/fit {repos[i % len(repos)]} 4090"
                api.push_update(api.make_message(text, chat_id=70_000 + i))
            await asyncio.sleep(1.5)  # the look-ups are under way
            code, took = await bot.stop(grace=40)
        got = len(answered(api) & set(range(70_000, 70_000 + lookups)))
        return f"{kind}: SIGTERM with {lookups} hub look-ups under way: exit {code} after {took:.1f} s; {got} answered"


async def mentions(work: Path, template: Path, count: int) -> str:
    from fitbot_fakes.discord_api import FakeDiscord

    data = data_dir(work, "mentions", template)
    async with FakeDiscord() as fake:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ROOT / "bench" / "restart.py"),
            "--discord-child",
            str(fake.port),
            "--data",
            str(data),
            "--grace",
            "20",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)},
        )
        assert child.stdout is not None
        while (await asyncio.wait_for(child.stdout.readline(), 90)).strip() != b"running":
            pass
        sent = [
            fake.make_mention(
                f"can I run qwen3 {[8, 14, 32][i % 3]}b on a {[4090, 3090][i % 2]} with {4 + i}k?",
                user_id=1100000000000000500 + i,
            )
            for i in range(count)
        ]
        for message in sent:
            await fake.dispatch("MESSAGE_CREATE", message)
        await asyncio.sleep(0.5)
        started = time.monotonic()
        child.terminate()
        code = await child.wait()
        took = time.monotonic() - started
        replied = {
            str((r.json or {}).get("message_reference", {}).get("message_id"))
            for r in fake.requests_to("POST", "/messages")
            if r.status == 200 and isinstance(r.json, dict)
        }
        got = len(replied & {m["id"] for m in sent})
        return f"mentions: {got} of {count} @mentions in flight at SIGTERM answered (exit {code} after {took:.1f} s)"


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="fitbot-stop-") as tmp:
        work = Path(tmp)
        template = await catalog_template(work)
        for name in args.scenarios:
            if name == "mentions":
                print(await mentions(work, template, args.mentions), flush=True)
            else:
                print(await hub_stop(work, template, name, args.lookups), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help=f"any of {', '.join(SCENARIOS)} (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="nodns and 10 mentions")
    parser.add_argument("--lookups", type=int, default=6, help="hub questions under way at the SIGTERM")
    parser.add_argument("--mentions", type=int, default=40, help="@mentions in flight at the SIGTERM")
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}")
    if args.quick:
        args.scenarios, args.mentions = args.scenarios or ["nodns", "mentions"], 10
    args.scenarios = args.scenarios or list(SCENARIOS)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
