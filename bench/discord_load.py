"""Load test: N /fit slash interactions through the real discord.py bot against the loopback fake.

Two processes, so the bot has a core to itself as in production: this one runs the fake Discord
(REST + gateway, ``fitbot_fakes/discord_api.py``) and the load driver; a child process runs the
production bot from ``bot.adapters.discord.bot.build_bot`` on the real catalog, pointed at the fake (charts
off unless ``--charts``: the target is fit answers without charts). The
driver keeps ``--window`` interactions in flight (closed loop: it measures what the bot can keep up
with, inside the fake's 3-second answer deadline) and, with ``--rate``, also paces dispatch.

Latency is dispatch (frame written to the websocket) to arrival of the interaction callback at the
fake. Peak RSS is the child's VmHWM (the bot process alone). Prints figures; asserts nothing.

    .venv/bin/python bench/discord_load.py [-n 2000] [--window 64] [--rate 0] [--users 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = (
    "qwen3-32b",
    "qwen3-8b",
    "glm-4.5-air",
    "glm-4.5",
    "qwen3-4b",
    "qwen3-14b",
    "qwen3-30b-a3b",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "llama-3.1-8b-instruct",
    "llama-3.3-70b-instruct",
    "gemma-3-27b-it",
    "mistral-small-3.2-24b",
)
GPUS = (
    "rtx-4090",
    "rtx-3090",
    "rtx-5090",
    "2x rtx-3090",
    "rtx-4060",
    "rtx-3060-12gb",
    "rtx-4080-super",
    "h100-sxm",
    "a100-80gb-sxm",
    "rtx-4070-ti-super",
)
CONTEXTS = (None, 8192, 16384, 32768, 65536, 131072)


def _vm(key: str) -> int:
    """A /proc/self/status field in KiB (VmHWM = peak RSS), or 0 where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# --------------------------------------------------------------------------------------------- child: the bot


async def run_bot(port: int, catalog_path: Path, charts: bool) -> None:
    """The production bot pointed at the fake on ``port``; prints "ready", then stats on each stdin line."""
    import discord
    import yarl

    from bot.adapters.discord.bot import build_bot
    from bot.service import Service
    from catalog.store import CatalogStore

    discord.http.Route.BASE = f"http://127.0.0.1:{port}/api/v10"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(f"ws://127.0.0.1:{port}/")
    service = Service(await CatalogStore(catalog_path).load())
    bot = build_bot(service, guild_ready_timeout=0.05, charts=charts)
    idle_rss = _vm("VmRSS")

    async def on_ready() -> None:
        print(json.dumps({"ready": True, "idle_rss_kib": _vm("VmRSS"), "import_rss_kib": idle_rss}), flush=True)

    bot.add_listener(on_ready)
    profile = None
    if os.environ.get("FITBOT_PROFILE"):  # write a cProfile of the bot process to this file on stop
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    task = asyncio.create_task(bot.start("fake-token"))
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(
            json.dumps(
                {"peak_rss_kib": _vm("VmHWM"), "rss_kib": _vm("VmRSS"), "cpu_s": usage.ru_utime + usage.ru_stime}
            ),
            flush=True,
        )
        if not line or line.strip() == "stop":
            break
    await bot.close()
    await asyncio.gather(task, return_exceptions=True)
    if profile is not None:
        profile.disable()
        profile.dump_stats(os.environ["FITBOT_PROFILE"])


# --------------------------------------------------------------------------------------------- parent: fake + driver


async def drive(args: argparse.Namespace) -> None:
    from aiohttp import web

    from catalog.store import CatalogStore
    from fitbot_fakes.discord_api import FakeDiscord

    class TimedFake(FakeDiscord):
        """Resolves a future when an interaction's callback arrives (any status)."""

        def __init__(self) -> None:
            super().__init__()
            self.waiters: dict[str, asyncio.Future[float]] = {}

        async def _r_callback(
            self, request: web.Request, body: Any, files: list[dict[str, Any]], iid: str, token: str, **kw: Any
        ) -> Any:
            try:
                return await super()._r_callback(request, body, files, iid, token, **kw)
            finally:
                waiter = self.waiters.pop(iid, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(time.monotonic())

    catalog_path = Path(tempfile.mkdtemp(prefix="fitbot-bench-")) / "catalog.sqlite"
    await CatalogStore(catalog_path).load()  # build once here so the child only reads
    rng = random.Random(7)
    async with TimedFake() as fake:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--bot",
            str(fake.port),
            "--catalog",
            str(catalog_path),
            *(["--charts"] if args.charts else []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=str(ROOT),
            env={**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"},
        )
        assert child.stdin is not None and child.stdout is not None
        started = time.monotonic()
        ready = json.loads(await asyncio.wait_for(child.stdout.readline(), 60))
        startup_s = time.monotonic() - started

        def payload() -> dict[str, Any]:
            options: dict[str, Any] = {"model": rng.choice(MODELS), "gpu": rng.choice(GPUS)}
            if (ctx := rng.choice(CONTEXTS)) is not None:
                options["context"] = ctx
            user = 1100000000000000300 + rng.randrange(args.users)
            return fake.make_slash("fit", options, user_id=user, locale=rng.choice(("en-US", "de", "en-GB")))

        async def one(latencies: list[float] | None) -> None:
            data = payload()
            waiter: asyncio.Future[float] = asyncio.get_running_loop().create_future()
            fake.waiters[data["id"]] = waiter
            sent = time.monotonic()
            await fake.dispatch("INTERACTION_CREATE", data)
            try:
                arrived = await asyncio.wait_for(waiter, 10)
            except TimeoutError:
                return
            if latencies is not None:
                latencies.append(arrived - sent)

        async def run(count: int, latencies: list[float] | None) -> float:
            gate = asyncio.Semaphore(args.window)
            interval = 1.0 / args.rate if args.rate else 0.0
            begin = time.monotonic()

            async def slot(i: int) -> None:
                async with gate:
                    if interval:
                        await asyncio.sleep(max(begin + i * interval - time.monotonic(), 0))
                    await one(latencies)

            await asyncio.gather(*(slot(i) for i in range(count)))
            return time.monotonic() - begin

        await run(args.warmup, None)
        before = len(fake.requests)
        child.stdin.write(b"stats\n")
        await child.stdin.drain()
        cpu_before = json.loads(await child.stdout.readline())["cpu_s"]
        latencies: list[float] = []
        elapsed = await run(args.n, latencies)
        child.stdin.write(b"stop\n")
        await child.stdin.drain()
        stats = json.loads(await child.stdout.readline())
        await child.wait()

    callbacks = [r for r in fake.requests[before:] if "/callback" in r.path]
    ok = sum(1 for r in callbacks if r.status == 200)
    late = sum(1 for r in callbacks if r.status == 404)
    other = len(callbacks) - ok - late
    latencies.sort()

    def p(q: float) -> float:
        return latencies[min(int(q * len(latencies)), len(latencies) - 1)] * 1000 if latencies else 0.0

    cpu = stats["cpu_s"] - cpu_before
    print(
        f"discord load: {args.n} /fit slash interactions ({'with' if args.charts else 'without'} charts),"
        f" {args.users} users, window {args.window}"
        + (f", paced at {args.rate:.0f}/s" if args.rate else ", unpaced")
        + f", {os.cpu_count()} CPUs"
    )
    print(f"  bot start-up (spawn → ready): {startup_s:.2f} s; bot RSS idle {ready['idle_rss_kib'] / 1024:.0f} MiB")
    print(
        f"  answers/s: {ok / elapsed:.0f}   ({ok} answered in {elapsed:.2f} s; {late} late (10062), {other} other errors,"
        f" {args.n - len(callbacks)} unanswered)"
    )
    print(
        f"  latency dispatch → callback: p50 {p(0.50):.1f} ms  p99 {p(0.99):.1f} ms  max {p(1.0):.1f} ms"
        f"  mean {statistics.fmean(latencies) * 1000 if latencies else 0:.1f} ms"
    )
    print(f"  bot CPU: {cpu:.2f} s = {cpu / max(ok, 1) * 1000:.2f} ms per answer")
    print(
        f"  bot peak RSS (VmHWM): {stats['peak_rss_kib'] / 1024:.0f} MiB; driver+fake peak RSS:"
        f" {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="interactions to measure")
    parser.add_argument("--window", type=int, default=64, help="interactions in flight at once")
    parser.add_argument("--rate", type=float, default=0.0, help="pace dispatch at this many per second (0: unpaced)")
    parser.add_argument("--users", type=int, default=500, help="distinct user ids")
    parser.add_argument("--warmup", type=int, default=100, help="unmeasured interactions first")
    parser.add_argument("--charts", action="store_true", help="attach chart PNGs (fit cards defer, then follow up)")
    parser.add_argument("--bot", type=int, help=argparse.SUPPRESS)  # child mode: the fake's port
    parser.add_argument("--catalog", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a few seconds' smoke run (CI)")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.warmup = 100, 10
    if args.bot:
        asyncio.run(run_bot(args.bot, args.catalog, args.charts))
    else:
        asyncio.run(drive(args))


if __name__ == "__main__":
    main()
