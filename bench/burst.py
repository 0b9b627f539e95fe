"""A burst of questions through the production Telegram wiring, checked for exactly-once answers.

    .venv/bin/python bench/burst.py [--users 500] [--per-user 10] [--fail] [--flood] [--paced]

The fake Bot API (fitbot_fakes/telegram_api.py) runs in this process; the bot runs in a child process
(``--child``) through the production ``run_telegram`` on the production ``open_service`` with the
default rate limits from ``Settings`` (20 questions per user a minute, so 10 each stay under it),
charts off. Every user has a private chat and asks ``--per-user`` questions, a mix of fit, quant,
cloud, speed, table and help questions in English and German, popular ones repeated; all are queued
at once, interleaved.

The production rate limiter (``telegram_flood.ChatFloodLimiter``: PTB's ``AIORateLimiter`` with flood
control per chat) is in the path, but with its pacing switched off: its defaults let out 30 messages
a second, Telegram's own broadcast limit, so a burst of 5,000 takes three minutes by design.
``--paced`` keeps the production pacing (give it ``--timeout 300``); bench/fairness.py measures what
one user's flood does to the others under that pacing.

Exactly once: the texts the bot got accepted in each chat are compared with the cards the same
``Service`` renders for that chat's questions (a card of two or three messages counts once, by its
first message; a card of more goes out as its first message plus a document). After the last
answer the bench waits ``--grace`` seconds and checks again, so late duplicates count.

``--fail`` answers sendMessage with 429 (retry_after 1) three times in each of three episodes and
with 500 twice, mid-burst. ``--flood`` adds one user sending 500 questions in the same burst: the
others' latency is printed separately, and the flooder's real answers and slow-down card (one per
minute; further refusals are silent by design and count as neither missing nor duplicated).

Prints answers/s, p50/p99 latency (push -> first message of the card at the fake), the bot's peak
RSS (VmHWM) and CPU time, failures injected, retries seen, and the exactly-once verdict. It prints,
it does not assert; the CI-sized checks are tests/bot/test_burst.py, which import the helpers here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: the repository root, for ``bench.burst_plan``

from bench.burst_plan import (  # noqa: E402, F401
    CONTEXTS,
    DOCUMENT,
    FIRST_CHAT,
    FLOODER,
    GPUS,
    MAX_CHAT_MESSAGES,
    MODELS,
    PHOTO,
    SENDS,
    TOKEN,
    Ask,
    Sent,
    Tally,
    Verdict,
    apology_texts,
    card_texts,
    expectations,
    flood_plan,
    interleave,
    make_plan,
    plain,
    question_pool,
    slow_down_pattern,
    verify,
    wait_for_responses,
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --------------------------------------------------------------------------- the bot process


def vm_kib(pid: int, field_name: str) -> int:
    """A /proc/<pid>/status figure in KiB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    return 0


async def child(base_url: str, paced: bool, log_path: str) -> None:
    """The bot: production wiring and Settings defaults; prints CPU time and max RSS on SIGTERM."""
    handler = logging.FileHandler(log_path)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("telegram.ext.AIORateLimiter").setLevel(logging.INFO)
    logging.getLogger("bot.adapters.telegram.flood").setLevel(logging.INFO)
    from bot.adapters.telegram.bot import run_telegram
    from bot.app.run import open_service
    from bot.app.settings import Settings
    from catalog.store import CatalogStore

    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
        # _env_file: a pydantic-settings option mypy can't see (pydantic's dataclass_transform hides it)
        settings = Settings(_env_file=None, fitbot_data_dir=Path(tmp))  # type: ignore[call-arg]
        service = await open_service(catalog, settings)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await run_telegram(service, token=TOKEN, base_url=base_url, rate_limiter=paced, charts=False, stop=stop)
        await service.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"maxrss_kib": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)


async def inject_failures(api: Any, tally: Tally, total: int, log: list[str]) -> None:
    """Mid-burst: 429 (retry_after 1) x3 at 20 %, 45 % and 70 % of the answers, 500 x2 at 30 %."""
    plan = sorted([(0.20, 429, 3), (0.30, 500, 2), (0.45, 429, 3), (0.70, 429, 3)])
    for share, status, times in plan:
        while tally.count() < share * total:
            await asyncio.sleep(0.01)
        api.fail_next("sendMessage", status=status, retry_after=1, times=times)
        log.append(f"{status} x{times} after {tally.count()} answers")


async def run(args: argparse.Namespace) -> None:
    from bot.app.settings import Settings
    from catalog.store import CatalogStore
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    asks = make_plan(args.users, args.per_user, seed=args.seed)
    flood = flood_plan(args.flood_count) if args.flood else []
    burst = interleave(asks, flood) if flood else asks
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "bot.log"
        async with FakeTelegramAPI() as api:
            child_args = [sys.executable, __file__, "--child", api.base_url, "--log", str(log_path)]
            proc = await asyncio.create_subprocess_exec(
                *child_args,
                *(["--paced"] if args.paced else []),
                cwd=ROOT,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT), "PTB_TIMEDELTA": "1", "HF_HUB_OFFLINE": "1"},
            )
            try:
                catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
                expected = await expectations(catalog, burst)
                await api.wait_call("getUpdates", timeout=60)
                await asyncio.sleep(0.5)  # let setMyCommands finish
                tally = Tally(api, pos=len(api.exchanges))
                updates = [api.make_message(a.text, chat_id=a.chat, language_code=a.lang) for a in burst]
                injected: list[str] = []
                injector = asyncio.create_task(inject_failures(api, tally, len(burst), injected)) if args.fail else None
                pushed_at: dict[int, list[float]] = defaultdict(list)
                start = time.monotonic()
                for a, update in zip(burst, updates, strict=True):
                    pushed_at[a.chat].append(time.monotonic())
                    api.push_update(update)
                # _env_file: a pydantic-settings option mypy can't see (pydantic's dataclass_transform hides it)
                limit = Settings(_env_file=None).rate_user_per_minute  # type: ignore[call-arg]  # the child's default
                verdict, last = await wait_for_responses(tally, burst, expected, args.timeout, args.grace, limit=limit)
                if injector is not None:
                    injector.cancel()
                verdict = verify(burst, expected, tally, pushed_at, limit=limit)
                hwm, rss = vm_kib(proc.pid, "VmHWM"), vm_kib(proc.pid, "VmRSS")
            finally:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
                out, _ = await asyncio.wait_for(proc.communicate(), 30)
        stats = json.loads(out.decode().strip().splitlines()[-1])
        bot_log = log_path.read_text()
    report(args, burst, flood, verdict, tally, last - start, hwm, rss, stats, injected, bot_log)


def report(
    args: argparse.Namespace,
    burst: list[Ask],
    flood: list[Ask],
    verdict: Verdict,
    tally: Tally,
    elapsed: float,
    hwm: int,
    rss: int,
    stats: dict[str, Any],
    injected: list[str],
    bot_log: str,
) -> None:
    others = [x for chat, xs in verdict.latencies.items() if chat != FLOODER for x in xs]
    responses = verdict.answered + verdict.slow_downs + verdict.apologies
    mode = ", ".join(m for m, on in (("--fail", args.fail), ("--flood", args.flood), ("--paced", args.paced)) if on)
    print(
        f"burst: {len(burst)} questions from {args.users} users x {args.per_user}"
        + (f" + 1 flooder x {len(flood)}" if flood else "")
        + f" ({mode or 'clean'}), all queued at once"
    )
    print(f"  distinct questions   {len({(a.text, a.lang) for a in burst})}")
    print(
        f"  responses            {responses} ({verdict.answered} answers, {verdict.slow_downs} slow-downs, "
        f"{verdict.apologies} apologies), {tally.count()} messages accepted"
    )
    print(f"  answers/s            {responses / elapsed:8.1f}  (questions answered per second, {elapsed:.2f} s)")
    print(
        f"  latency p50 / p99    {statistics.median(others) * 1000:8.1f} / {percentile(others, 0.99) * 1000:.1f} ms"
        + ("  (everyone but the flooder)" if flood else "")
    )
    if flood:
        mine = verdict.responses(FLOODER)
        fl = verdict.latencies.get(FLOODER, [])
        print(
            f"  flooder              {mine['answers']} answers, {mine['slow_downs']} slow-downs, "
            f"{mine['apologies']} apologies of {len(flood)} ({verdict.silenced} refused silently after its one"
            f" slow-down card); its p50 {statistics.median(fl) * 1000:.1f} ms"
        )
        others_slow = sum(c["slow_downs"] for chat, c in verdict.per_chat.items() if chat != FLOODER)
        print(f"  others slowed down   {others_slow}")
    print(
        f"  bot RSS              {hwm / 1024:8.1f} MiB peak (VmHWM), {rss / 1024:.1f} MiB at the end; "
        f"bot CPU {stats['cpu_s']:.2f} s total"
    )
    failed = Counter(status for status, _, _ in tally.failed)
    print(f"  failures injected    {', '.join(injected) if injected else 'none'}; sends refused {dict(failed) or 0}")
    print(
        f"  retries seen         {tally.retried} (a refused message sent again); bot log: "
        f"{bot_log.count('Rate limit hit. Retrying')} limiter retries, "
        f"{bot_log.count('is under Telegram flood control')} chats under flood control, "
        f"{bot_log.count('Rate limit hit after maximum')} given up, {bot_log.count('failed')} failed updates"
    )
    lost = [(s, c, t[:40]) for s, c, t in tally.failed if s != 429]
    if lost:
        print(f"  not retried          {len(lost)} sends refused with 5xx: {lost[:3]}")
    ok = verdict.exactly_once
    print(
        f"  exactly once         {'yes' if ok else 'NO'}: {verdict.missing} missing, {verdict.duplicates} "
        f"duplicates, {verdict.incomplete} card parts missing (after a {args.grace:g} s grace period)"
    )
    for problem in verdict.problems:
        print(f"    {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--per-user", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fail", action="store_true", help="inject 429s and 500s on sendMessage mid-burst")
    parser.add_argument("--flood", action="store_true", help="one more user sends --flood-count questions")
    parser.add_argument("--flood-count", type=int, default=500)
    parser.add_argument("--paced", action="store_true", help="keep AIORateLimiter's 30/s production pacing")
    parser.add_argument("--grace", type=float, default=2.0, help="seconds to wait for late duplicates")
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--child", metavar="BASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a few seconds' smoke run (CI)")
    args = parser.parse_args()
    if args.quick:
        args.users, args.per_user, args.flood_count = 20, 3, 30
    if args.child:
        asyncio.run(child(args.child, args.paced, args.log or os.devnull))
    else:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
