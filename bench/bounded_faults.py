"""Bounded under faults (issue 40 items 5-7): a Discord REST outage, a 200 MB price answer, long messages, many questions.

    .venv/bin/python bench/bounded_faults.py [SCENARIO ...] [--quick]

* ``outage``: the production Discord adapter (``bench/restart.py``'s child, ``open_service`` wiring)
  with its REST calls through a proxy that goes down (connections refused, open ones reset) for 5 s,
  once 40 /fit interactions (each a new chart: deferred) were all acknowledged, and again 0.3 s after
  they were dispatched (the attack's timing: a callback that cannot reach Discord within its 3 s is
  Discord's "did not respond", which nothing can repair). Counts the interactions answered (a card,
  at once or after the defer), left on "thinking…", and never acknowledged, once the proxy is back.
* ``prices``: ``catalog.prices.refresh.refresh`` in a child process against the fake price APIs,
  Vast.ai streaming a 200 MiB answer: the child's peak RSS during that refresh over its RSS before
  it, the providers' results, and how much the fake wrote before the client hung up.
* ``loop``: the work an adapter does on the event loop with a message's text before the service's
  worker thread (Telegram: intake and the mention strip; Discord: the mention strip), at 1,000 /
  4,096 / 8,000 characters: ms per message, and the ratio 8,000 / 4,096 (2 = linear).
* ``memory``: ``Service.answer`` over 20,000 distinct questions in a child process: RSS after 5,000,
  10,000 and 20,000 (flat within 10 % is the bar).

``--quick`` runs each with a tenth of the work (a 1 s outage over 10 interactions, a 50 MiB answer,
2,000 questions). Prints figures; asserts nothing (the CI-sized checks are tests/bot/test_discord_stop.py,
tests/catalog/test_prices.py and tests/bot/test_bounded_memory.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIOS = ("outage", "prices", "loop", "memory")


def rss_mib(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


# --------------------------------------------------------------------------- Discord REST outage


async def outage(count: int, down_s: float, after_callbacks: bool) -> str:
    from catalog.store import CatalogStore
    from fitbot_fakes.discord_api import FakeDiscord
    from fitbot_fakes.proxy import Proxy

    models = ("qwen3-8b", "qwen3-32b", "glm-4.5-air", "gpt-oss-20b", "llama-3.3-70b-instruct")
    gpus = ("rtx-4090", "rtx-3090", "2x rtx-3090", "h100-sxm", "rtx-4060")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        await CatalogStore(data / "catalog.sqlite").load()
        async with FakeDiscord() as fake:
            proxy = await Proxy(fake.port).up()
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(ROOT / "bench" / "restart.py"),
                "--discord-child",
                str(fake.port),
                "--rest-port",
                str(proxy.port),
                "--data",
                str(data),
                cwd=ROOT,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)},
            )
            assert proc.stdout is not None
            while (await asyncio.wait_for(proc.stdout.readline(), 90)).strip() != b"running":
                pass
            payloads = [
                fake.make_slash(
                    "fit",
                    {"model": models[i % 5], "gpu": gpus[(i // 5) % 5], "context": 4096 + 256 * i},
                    user_id=1100000000000000300 + i,
                )
                for i in range(count)
            ]
            for p in payloads:
                await fake.dispatch("INTERACTION_CREATE", p)
            if after_callbacks:  # every interaction acknowledged: the cut meets follow-ups only
                await fake.wait_request("POST", "/callback", count=count, timeout=60)
            else:
                await asyncio.sleep(0.3)
            await proxy.down()
            deferred_at_cut = sum(
                1 for p in payloads if fake.interactions[p["id"]].acked == 5 and not fake.interactions[p["id"]].answered
            )
            await asyncio.sleep(down_s)
            await proxy.up()
            back = time.monotonic()
            ids = [p["id"] for p in payloads]

            def answered() -> int:
                return sum(
                    1
                    for i in ids
                    if fake.interactions[i].acked == 4
                    or (fake.interactions[i].acked == 5 and fake.interactions[i].answered)
                )

            last = 0.0
            while (
                time.monotonic() - back < 90
                and answered() + sum(fake.interactions[i].acked is None for i in ids) < count
            ):
                await asyncio.sleep(0.1)
                last = time.monotonic() - back
            got = answered()
            thinking = sum(1 for i in ids if fake.interactions[i].acked == 5 and not fake.interactions[i].answered)
            never = sum(1 for i in ids if fake.interactions[i].acked is None)
            proc.terminate()
            await proc.wait()
            await proxy.down()
    when = "once all were acknowledged" if after_callbacks else "0.3 s after dispatch"
    return (
        f"outage: REST down {down_s:.0f} s {when}, {count} /fit interactions ({deferred_at_cut} deferred and"
        f" unanswered at the cut): {got} of {count} answered, {thinking} left on 'thinking…', {never} never"
        f" acknowledged; the last answer {last:.1f} s after REST was back"
    )


# --------------------------------------------------------------------------- a huge price answer


async def price_child(endpoint: str) -> None:
    """Refreshes once normally, waits for a line on stdin (the parent makes Vast.ai huge), refreshes again."""
    from catalog.facts import load_facts
    from catalog.prices.plausible import PriceBounds
    from catalog.prices.refresh import refresh
    from catalog.prices.sources import default_sources
    from catalog.prices.store import PriceStore

    bounds, keys = PriceBounds.of(load_facts()), {"VAST_API_KEY": "bench"}  # Vast.ai answers only with a key
    with tempfile.TemporaryDirectory() as tmp:
        store = PriceStore(Path(tmp) / "prices.sqlite")
        await refresh(store, default_sources(endpoint), keys, bounds)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        before = rss_mib()
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak RSS, to the RSS now
        results = await refresh(store, default_sources(endpoint), keys, bounds)
        peak = rss_mib("VmHWM")
    print(json.dumps({"before": before, "peak": peak, "results": {r.provider: [r.status, r.detail] for r in results}}))


async def prices(huge_mb: int) -> str:
    from fitbot_fakes.price_apis import FakePriceApis

    with FakePriceApis() as fake:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--price-child",
            fake.endpoint,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.stdout is not None and proc.stdin is not None
        while (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() != b"ready":
            pass
        fake.huge_mb, fake.broken["vast"] = huge_mb, "huge"
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
        out = json.loads((await asyncio.wait_for(proc.stdout.readline(), 120)).decode())
        await proc.wait()
        sent = fake.sent.get("vast", 0) / (1 << 20)
    vast = out["results"]["vast"]
    others = sorted(name for name, (status, _) in out["results"].items() if status == "ok")
    return (
        f"prices: Vast.ai answers {huge_mb} MiB: peak RSS {out['peak'] - out['before']:.1f} MiB over the"
        f" {out['before']:.0f} MiB before; vast {vast[0]} ({vast[1]}); ok: {', '.join(others)};"
        f" the fake wrote {sent:.0f} MiB before the client hung up"
    )


# --------------------------------------------------------------------------- main


async def main_async(args: argparse.Namespace) -> None:
    for name in args.scenarios or SCENARIOS:
        if name == "outage":
            for after_callbacks in (True, False):
                print(await outage(10 if args.quick else 40, 1.0 if args.quick else 5.0, after_callbacks), flush=True)
        elif name == "prices":
            print(await prices(50 if args.quick else 200), flush=True)
        elif name == "loop":
            from bench.message_cost import loop_cost

            print(await loop_cost(repeats=3 if args.quick else 20), flush=True)
        elif name == "memory":
            from bench.message_cost import memory_growth

            print(await memory_growth(2_000 if args.quick else 20_000), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="*", help=f"any of {', '.join(SCENARIOS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the work each")
    parser.add_argument("--price-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if set(args.scenarios) - set(SCENARIOS):
        parser.error(f"unknown scenario; choose from {', '.join(SCENARIOS)}")
    if args.price_child:
        asyncio.run(price_child(args.price_child))
    else:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
