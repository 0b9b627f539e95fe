"""Telegram faults other than a crash: is any question lost, is anyone held up? (issue 21)

    .venv/bin/python bench/telegram_faults.py [SCENARIO ...] [--quick]

Each scenario runs the production ``fitbot run`` (production send pacing) in a child process
against the fake Bot API in this one, on a fresh data directory, and prints one line of figures:

* ``partition``: 120 questions; once 20 are answered, the network to Telegram is cut for 8 s
  (a TCP proxy stops listening and resets open connections: "connection refused"). Lost = never
  answered once the network is back.
* ``locked`` / ``deleted`` / ``full``: 300 questions while the user database is write-locked by
  another process (20 s), deleted (with -wal and -shm), or on a full disk (a 3 MB tmpfs, needs
  root; else skipped); once 60 are answered (or after 60 s) the bot is killed with SIGKILL, the
  fault cleared and the bot started again. Lost = never answered after the restart.
* ``readonly``: 300 questions; once 60 are answered, the user database, its journals and the data
  directory become immutable (``chattr +i``, as after a remount read-only; needs root, else
  skipped) for 10 s, then writable; 2 s later SIGKILL and a restart. Lost, and answered twice (the
  marks of what was answered while read-only must land once the disk recovers).
* ``biggroup``: 60 askers in one supergroup, 2 s later 30 private users: the private users' wait
  (question -> first message of the answer), median and max; first the same 30 on a quiet bot.
* ``flood``: one supergroup under Telegram flood control (every call naming it answered 429 with
  ``retry_after`` 40 for 60 s, as in issue 40's attack) asks 3 questions; private users ask 1 s later
  and again 45 s later (when, before, the transport had given up and PTB's limiter paused every
  chat): their wait per wave, median and max, against a quiet bot; when the group's answers came,
  how many of its sends were refused, lost or sent twice.
* ``poison``: an update python-telegram-bot cannot parse, then 20 questions: their wait, against 20
  questions without it just before.
* ``crashpill``: one question kills the process (emulated with ``os._exit`` in a sitecustomize), 30
  others queued behind it; a supervisor restarts the bot after each death (as systemd does): deaths
  before the question is quarantined, and how many of the others are answered.
* ``twoproc``: a second ``fitbot run`` on the data directory of a running one: refused? (exit code,
  seconds, message).

``--quick`` runs smaller versions of partition, locked, flood, poison and twoproc for CI. Prints figures;
asserts nothing (the CI-sized checks are tests/bot/test_telegram_faults.py and tests/bot/test_datadir.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fault_harness import (
    SENDS,
    Child,
    answered,
    ask,
    catalog_template,
    data_dir,
    duplicated,
    first_answer_at,
    question,
    telegram_env,
    until,
)

SCENARIOS = (
    "partition",
    "locked",
    "deleted",
    "full",
    "readonly",
    "biggroup",
    "flood",
    "poison",
    "crashpill",
    "twoproc",
)
PILL_SITE = """
import os
import bot.service as _service
_answer = _service.Service.answer
async def answer(self, text, *args, **kwargs):
    if "POISON-PILL" in (text or ""):
        os._exit(137)  # stands for a bug that kills the process on this one question (OOM, segfault)
    return await _answer(self, text, *args, **kwargs)
_service.Service.answer = answer
"""


async def warm_up(api: Any) -> None:
    """A few answers first, so that the figures leave out the first chart (matplotlib's import) and cold caches."""
    chats = list(range(90_000, 90_008))
    ask(api, chats)
    await until(lambda: answered(api) >= set(chats), 120)


def waits(api: Any, chats: list[int], since: float) -> list[float]:
    at = first_answer_at(api)
    return sorted(at[c] - since for c in chats if c in at)


def summary(values: list[float]) -> str:
    if not values:
        return "none answered"
    return f"median {statistics.median(values):.2f} s, max {max(values):.2f} s ({len(values)} answered)"


async def partition(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.proxy import Proxy
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        proxy = await Proxy(api.port).up()
        data = data_dir(work, "partition", template)
        bot = await Child(telegram_env(f"http://127.0.0.1:{proxy.port}/bot", data), work / "partition.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            chats = list(range(10_000, 10_000 + args.users))
            ask(api, chats)
            await until(lambda: len(answered(api)) >= args.users // 6, 60)
            before = len(answered(api))
            await proxy.down()
            await asyncio.sleep(args.seconds)
            await proxy.up()
            await until(lambda: answered(api) >= set(chats), 180)
        finally:
            code, _ = await bot.stop()
            await proxy.down()
        lost = len(set(chats) - answered(api))
        return (
            f"partition {args.seconds:g} s: {lost} of {args.users} lost ({before} answered before it,"
            f" {duplicated(api, set(chats))} chats got a message twice, exit {code})"
        )


async def storage_fault(work: Path, template: Path, kind: str, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    mount: Path | None = None
    if kind == "full":
        mount = work / "tmpfs"
        mount.mkdir(exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True)
        if done.returncode != 0:
            return "full: skipped (mounting a small tmpfs needs root)"
        data = data_dir(mount, "data", template)
    else:
        data = data_dir(work, kind, template)
    try:
        async with FakeTelegramAPI() as api:
            env = telegram_env(api.base_url, data)
            bot = await Child(env, work / f"{kind}-1.log").start()
            await api.wait_call("getUpdates", timeout=90)
            ask(api, [9_000])  # the database exists and is in use
            await until(lambda: 9_000 in answered(api), 30)
            locker = await fault_on(kind, data, args.lock_s)
            chats = list(range(20_000, 20_000 + args.backlog))
            ask(api, chats)
            await until(lambda: len(answered(api) & set(chats)) >= args.backlog // 5, 60)
            before = len(answered(api) & set(chats))
            await bot.kill()
            await clear_fault(kind, data, locker, mount)
            bot = await Child(env, work / f"{kind}-2.log").start()
            await until(lambda: answered(api) >= set(chats), 180)
            await bot.stop()
            lost = len(set(chats) - answered(api))
            loud = [line for line in (work / f"{kind}-1.log").read_text().splitlines() if "inbox" in line][:1]
            said = "said so" if loud else "said nothing"
            return (
                f"{kind}: {lost} of {args.backlog} lost after a kill -9 ({before} answered before the kill,"
                f" {duplicated(api, set(chats))} chats got a message twice; the bot {said} in its log)"
            )
    finally:
        if mount is not None:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


async def readonly(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    data = data_dir(work, "readonly", template)
    names = [data / n for n in ("user.sqlite", "user.sqlite-wal", "user.sqlite-shm", "user.sqlite.answered")]
    async with FakeTelegramAPI() as api:
        env = telegram_env(api.base_url, data)
        bot = await Child(env, work / "readonly-1.log").start()
        await api.wait_call("getUpdates", timeout=90)
        chats = list(range(25_000, 25_000 + args.backlog))
        ask(api, chats)
        await until(lambda: len(answered(api) & set(chats)) >= args.backlog // 5, 60)
        for path in names:
            path.touch(exist_ok=True)
        if subprocess.run(["chattr", "+i", *map(str, names), str(data)], capture_output=True).returncode != 0:
            await bot.stop()
            return "readonly: skipped (chattr +i needs root and a file system that has it)"
        try:
            await asyncio.sleep(args.lock_s / 2)
        finally:
            subprocess.run(["chattr", "-i", *map(str, names), str(data)], capture_output=True)
        await asyncio.sleep(2.0)
        before = len(answered(api) & set(chats))
        await bot.kill()
        bot = await Child(env, work / "readonly-2.log").start()
        await until(lambda: answered(api) >= set(chats), 180)
        await bot.stop()
    lost = len(set(chats) - answered(api))
    return (
        f"readonly {args.lock_s / 2:g} s: {lost} of {args.backlog} lost after a kill -9 ({before} answered before"
        f" the kill, {duplicated(api, set(chats))} chats got a message twice)"
    )


async def fault_on(kind: str, data: Path, lock_s: float) -> Any:
    if kind == "locked":  # an operator's sqlite3 shell (or a backup) holding the write lock
        locker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
            "con.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(float(sys.argv[2]))\n"
            "con.execute('COMMIT')",
            str(data / "user.sqlite"),
            str(lock_s),
            stdout=asyncio.subprocess.PIPE,
        )
        assert locker.stdout is not None
        await locker.stdout.readline()
        return locker
    if kind == "deleted":
        for name in ("user.sqlite", "user.sqlite-wal", "user.sqlite-shm"):
            (data / name).unlink(missing_ok=True)
    if kind == "full":
        subprocess.run(["dd", "if=/dev/zero", f"of={data.parent / 'filler'}", "bs=4k"], capture_output=True)
    return None


async def clear_fault(kind: str, data: Path, locker: Any, mount: Path | None) -> None:
    if locker is not None:
        await locker.wait()
    if mount is not None:
        (mount / "filler").unlink(missing_ok=True)


async def biggroup(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        bot = await Child(telegram_env(api.base_url, data_dir(work, "biggroup", template)), work / "bg.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            await warm_up(api)
            alone = list(range(30_000, 30_000 + args.others))  # the baseline: private users on a quiet bot
            since_alone = ask(api, alone)
            await until(lambda: answered(api) >= set(alone), 120)
            group = -100_888
            api.add_chat(group, "supergroup")
            for i in range(args.members):
                api.push_update(
                    api.make_message(
                        f"/fit qwen3 8b 4090 {4 + i}k", chat_id=group, chat_type="supergroup", user_id=60_000 + i
                    )
                )
            await asyncio.sleep(2.0)
            chats = list(range(31_000, 31_000 + args.others))
            since = ask(api, chats)
            await until(lambda: answered(api) >= set(chats), 300)
        finally:
            await bot.stop()
        return (
            f"biggroup: {args.members} askers in one group, then {args.others} private users wait"
            f" {summary(waits(api, chats, since))}; alone they wait {summary(waits(api, alone, since_alone))}"
        )


async def flood(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        bot = await Child(telegram_env(api.base_url, data_dir(work, "flood", template)), work / "flood.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            await warm_up(api)
            alone = list(range(32_000, 32_000 + args.others))  # the baseline: private users on a quiet bot
            since_alone = ask(api, alone)
            await until(lambda: answered(api) >= set(alone), 120)
            group = -100_777
            api.flood_control(group, args.flood_s, args.retry_after)
            started = time.monotonic()
            for i in range(3):
                api.push_update(
                    api.make_message(question(i), chat_id=group, chat_type="supergroup", user_id=62_000 + i)
                )
            waves = []
            for n, at in enumerate(args.waves):
                await asyncio.sleep(max(0.0, started + at - time.monotonic()))
                chats = list(range(33_000 + n * 1_000, 33_000 + n * 1_000 + args.others))
                waves.append((at, chats, ask(api, chats)))
                await until(lambda chats=chats: answered(api) >= set(chats), 300)
            await until(lambda: len(group_sends(api, group, 200)) >= 3, args.flood_s + 120)
            await asyncio.sleep(1.0)  # a late duplicate would arrive now
        finally:
            await bot.stop()
        sent = group_sends(api, group, 200)
        lines = [f"{at:g} s after it: {summary(waits(api, chats, since))}" for at, chats, since in waves]
        return (
            f"flood: one group under flood control (429 retry_after {args.retry_after} for {args.flood_s:g} s); "
            f"private users asking {'; '.join(lines)}; on a quiet bot {summary(waits(api, alone, since_alone))}."
            f" The group: {len({text for text, _ in sent})} of 3 answered, the first"
            f" {min((at for _, at in sent), default=float('nan')) - started:.1f} s after"
            f" its questions, {len(group_sends(api, group, 429))} sends refused,"
            f" {duplicated(api, {group})} chats got a message twice"
        )


def group_sends(api: Any, chat: int, status: int) -> list[tuple[str, float]]:
    """The sends to ``chat`` (text or caption, and when) that the fake answered ``status``."""
    return [
        (str(e.params.get("text") or e.params.get("caption")), e.at)
        for e in list(api.exchanges)
        if e.method in SENDS and e.status == status and str(e.params.get("chat_id")) == str(chat)
    ]


async def poison(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        bot = await Child(telegram_env(api.base_url, data_dir(work, "poison", template)), work / "poison.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            await warm_up(api)
            plain = list(range(40_000, 40_000 + args.after))  # the baseline: the same number, no poison
            since_plain = ask(api, plain)
            await until(lambda: answered(api) >= set(plain), 60)
            api.push_update({"callback_query": {"id": "9", "from": "not a user", "chat_instance": "x"}})
            chats = list(range(41_000, 41_000 + args.after))
            since = ask(api, chats)
            await until(lambda: answered(api) >= set(chats), 60)
        finally:
            await bot.stop()
        after, before = waits(api, chats, since), waits(api, plain, since_plain)
        delay = statistics.median(after) - statistics.median(before) if after and before else float("nan")
        reported = bot.text().count('"poison_update"')
        return (
            f"poison: {args.after} questions after an unparseable update wait {summary(after)}; without it"
            f" {summary(before)}: delayed {delay:+.2f} s (median); the poison reported {reported}x"
        )


async def crashpill(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    site = work / "pill-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(PILL_SITE)
    data = data_dir(work, "crashpill", template)
    async with FakeTelegramAPI() as api:
        env = telegram_env(api.base_url, data)
        env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"
        bot = await Child(env, work / "pill.log").start()
        await api.wait_call("getUpdates", timeout=90)
        api.push_update(api.make_message("/fit POISON-PILL 4090", chat_id=50_000))
        chats = list(range(50_001, 50_001 + args.others))
        ask(api, chats)
        deaths, started = 0, time.monotonic()
        while time.monotonic() - started < 120 and deaths < 8:
            if await bot.wait(0.5) is not None:  # a supervisor restarts it (systemd: Restart=on-failure)
                deaths += 1
                bot = await Child(env, work / "pill.log").start()
            if answered(api) >= set(chats):
                break
        await bot.stop()
        with contextlib.closing(sqlite3.connect(data / "user.sqlite")) as db:
            failed = db.execute("SELECT failed FROM tg_inbox WHERE data LIKE '%POISON-PILL%'").fetchone()
        got = len(answered(api) & set(chats))
        verdict = f"quarantined ({failed[0]})" if failed and failed[0] else "not quarantined"
        return f"crashpill: {deaths} deaths, then {verdict}; {got} of {args.others} others answered"


async def twoproc(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        env = telegram_env(api.base_url, data_dir(work, "twoproc", template))
        first = await Child(env, work / "a.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            second = await Child(env, work / "b.log").start()
            started = time.monotonic()
            code = await second.wait(60)
            took = time.monotonic() - started
        finally:
            await first.stop()
        said = next((line for line in second.text().splitlines() if "another fitbot process" in line), "")
        verdict = f"refused (exit {code} after {took:.1f} s)" if code else f"NOT refused (exit {code})"
        return f"twoproc: the second fitbot run on one data directory was {verdict}: {said[:160]}"


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="fitbot-faults-") as tmp:
        work = Path(tmp)
        template = await catalog_template(work)
        for name in args.scenarios:
            if name in ("locked", "deleted", "full"):
                line = await storage_fault(work, template, name, args)
            else:
                line = await globals()[name](work, template, args)
            print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help=f"any of {', '.join(SCENARIOS)} (default: all)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="small versions of partition, locked, flood, poison, twoproc"
    )
    parser.add_argument("--users", type=int, default=120, help="partition: questions")
    parser.add_argument("--seconds", type=float, default=8.0, help="partition: how long the network is cut")
    parser.add_argument("--backlog", type=int, default=300, help="locked/deleted/full: questions")
    parser.add_argument("--lock-s", type=float, default=20.0, help="locked: how long the lock is held (readonly: half)")
    parser.add_argument("--members", type=int, default=60, help="biggroup: askers in the group")
    parser.add_argument("--others", type=int, default=30, help="biggroup/crashpill: other users")
    parser.add_argument("--after", type=int, default=20, help="poison: questions after the poison")
    parser.add_argument("--flood-s", type=float, default=60.0, help="flood: how long the group is refused")
    parser.add_argument("--retry-after", type=int, default=40, help="flood: the retry_after of each refusal")
    parser.add_argument(
        "--waves", type=float, nargs="+", default=[1.0, 45.0], help="flood: when private users ask (s after the group)"
    )
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}")
    if args.quick:
        args.scenarios = args.scenarios or ["partition", "locked", "flood", "poison", "twoproc"]
    args.scenarios = args.scenarios or list(SCENARIOS)
    if args.quick:
        args.users, args.seconds, args.backlog, args.lock_s, args.after = 20, 2.0, 30, 3.0, 5
        args.others, args.flood_s, args.retry_after, args.waves = 10, 8.0, 5, [1.0, 6.0]
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
