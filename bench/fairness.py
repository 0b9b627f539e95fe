"""One user floods while others ask at a steady pace: how long do the others wait? (production pacing on)

    .venv/bin/python bench/fairness.py [--flood 300] [--others 100] [--rate 5] [--quick]

The bot runs in a child process through the production ``run_telegram`` on ``open_service`` with the
default limits and the production ``AIORateLimiter`` pacing (30 messages a second in all) — the
child of bench/burst.py with ``--paced``. At t = 0 one user sends ``--flood`` questions at once;
meanwhile ``--others`` users each ask one question, ``--rate`` a second. Prints the others' wait
(push -> first message of their card) p50/p90/max, and what the flooder got (answers, slow-down
cards). Before the fix the refused messages each got a card, and under the pacing those crowded out
the others (p50 9.5 s with 300 flood messages, issue 15). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FLOODER = 4_000_000


async def run(args: argparse.Namespace) -> None:
    from bench.burst_plan import Ask, Tally, expectations, make_plan, slow_down_pattern
    from catalog.store import CatalogStore
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    others = [Ask(4_100_000 + i, a.text, a.lang) for i, a in enumerate(make_plan(args.others, 1, seed=31))]
    flood = [Ask(FLOODER, a.text, a.lang) for a in make_plan(1, args.flood, seed=32, first_chat=FLOODER)]
    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
        expected = await expectations(catalog, others)
        async with FakeTelegramAPI() as api:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(ROOT / "bench" / "burst.py"),
                "--child",
                api.base_url,
                "--paced",
                cwd=ROOT,
                stdout=asyncio.subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": str(ROOT), "PTB_TIMEDELTA": "1", "HF_HUB_OFFLINE": "1"},
            )
            try:
                await api.wait_call("getUpdates", timeout=60)
                await asyncio.sleep(1.0)  # setMyCommands, and the limiter's bucket refills
                tally = Tally(api, pos=len(api.exchanges))
                for a in flood:
                    api.push_update(api.make_message(a.text, chat_id=a.chat, language_code=a.lang))
                pushed: dict[int, float] = {}
                for a in others:
                    pushed[a.chat] = time.monotonic()
                    api.push_update(api.make_message(a.text, chat_id=a.chat, language_code=a.lang))
                    await asyncio.sleep(1.0 / args.rate)
                deadline = time.monotonic() + args.timeout
                while time.monotonic() < deadline:
                    tally.update()
                    if all(tally.sent.get(a.chat) for a in others):
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(1.0)
                tally.update()
            finally:
                proc.send_signal(signal.SIGTERM)
                await proc.wait()
    waits = sorted(tally.sent[a.chat][0].at - pushed[a.chat] for a in others if tally.sent.get(a.chat))
    wrong = sum(
        1 for a in others if tally.sent.get(a.chat) and tally.sent[a.chat][0].text != expected[(a.text, a.lang)][0]
    )
    slow = slow_down_pattern()
    mine = tally.sent.get(FLOODER, [])
    cards = sum(1 for s in mine if slow.fullmatch(s.text))
    unanswered = sum(1 for a in others if not tally.sent.get(a.chat))
    print(
        f"fairness: 1 user floods {args.flood} questions at once; {args.others} others ask one each at"
        f" {args.rate:g}/s; production pacing (30 messages/s)"
    )
    print(
        f"  others' wait: p50 {statistics.median(waits):.2f} s, p90 {waits[int(0.9 * (len(waits) - 1))]:.2f} s,"
        f" max {waits[-1]:.2f} s; {unanswered} unanswered, {wrong} not their card"
    )
    print(f"  flooder: {len(mine) - cards} answer messages, {cards} slow-down card(s), the rest refused silently")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flood", type=int, default=300, help="questions the flooder sends at once")
    parser.add_argument("--others", type=int, default=100, help="other users, one question each")
    parser.add_argument("--rate", type=float, default=5.0, help="others' questions per second")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--quick", action="store_true", help="a few seconds' smoke run (CI)")
    args = parser.parse_args()
    if args.quick:
        args.flood, args.others, args.rate = 60, 10, 10.0
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
