"""Deploying: does ``fitbot run`` start with the shipped env files, and does ``fitbot health`` catch a wrong directory? (issue 21)

    .venv/bin/python bench/deploy_faults.py [SCENARIO ...] [--quick]

* ``envfile``: each shipped ``deploy/*.env``, loaded as systemd's ``EnvironmentFile=`` (over the
  unit's ``Environment=``), compose's ``env_file`` and ``docker run --env-file`` (over the image's
  ``ENV``) read it (``fitbot_fakes/settings_loaders.py``), empty values included, plus a token: the
  production ``fitbot run`` against the fake Bot API. Seconds to the first answer, exit code and
  seconds after SIGTERM. The example file used to stop the bot ("invalid settings: DISCORD_SHARDS").
* ``health``: ``fitbot health`` on a missing directory, an empty one, a regular file, another
  program's directory, then on a running bot's and a stopped bot's: exit code, what it says, and
  whether it created anything where it should not (it used to say "ok" and create empty databases).
* ``unwritable``: ``fitbot run`` on a data directory it cannot create: exit code, seconds, the message.

``--quick`` loads the env files as systemd only. Prints figures; asserts nothing (the CI-sized
checks are tests/test_deploy_settings_file.py and tests/bot/test_datadir.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fault_harness import ROOT, TOKEN, Child, answered, catalog_template, data_dir, telegram_env, until

SCENARIOS = ("envfile", "health", "unwritable")


def loaded_env(kind: str, path: Path, base_url: str, data: Path) -> dict[str, str]:
    """The host's environment without FitBot's variables, what ``kind`` loads from ``path``, a token."""
    from fitbot_fakes.settings_loaders import LOADED

    env = {k: v for k, v in os.environ.items() if not k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_", "HF_"))}
    env.update({k: v for k, v in LOADED[kind](path).items() if k != "PATH"})  # the image's PATH names its venv
    env.update(
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_BASE_URL=base_url,
        FITBOT_DATA_DIR=str(data),  # the unit's /var/lib/fitbot, the image's /data, here
        HF_HUB_OFFLINE="1",
        PYTHONPATH=str(ROOT),
    )
    return env


async def envfile(work: Path, template: Path, kinds: list[str]) -> list[str]:
    from fitbot_fakes.settings_loaders import ENV_FILES
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    lines = []
    for path in ENV_FILES:
        for kind in kinds:
            async with FakeTelegramAPI(token=TOKEN) as api:
                data = data_dir(work, f"env-{path.stem}-{kind}", template)
                log = work / f"env-{path.stem}-{kind}.log"
                started = time.monotonic()
                bot = await Child(loaded_env(kind, path, api.base_url, data), log).start()
                api.push_update(api.make_message("/fit qwen3 8b 4090", chat_id=77))
                ok = await until(lambda child=bot: 77 in answered(api) or not child.alive, 90)
                first = time.monotonic() - started
                if ok and 77 in answered(api):
                    code, took = await bot.stop()
                    lines.append(
                        f"envfile: {path.name} as {kind} loads it: first answer {first:.1f} s after the start;"
                        f" SIGTERM: exit {code} after {took:.1f} s"
                    )
                else:
                    code, _ = await bot.stop()
                    tail = bot.text().strip().splitlines()[-1:] or ["(no output)"]
                    lines.append(f"envfile: {path.name} as {kind} loads it: NOT STARTED (exit {code}): {tail[0][:200]}")
    return lines


def health(data: Path) -> tuple[int, float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_", "HF_"))}
    env.update(FITBOT_DATA_DIR=str(data), TELEGRAM_BOT_TOKEN=TOKEN, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "bot.app.cli", "health"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    said = " / ".join(line for line in (done.stdout + done.stderr).splitlines() if line.strip())
    return done.returncode, time.monotonic() - started, said


def listing(path: Path) -> list[str]:
    if path.is_dir():
        return sorted(p.name for p in path.iterdir())
    return ["(a file)"] if path.exists() else ["(absent)"]


async def health_cases(work: Path, template: Path) -> list[str]:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    cases = {
        "a missing directory": work / "health" / "nope" / "deeper",
        "an empty directory": work / "health" / "empty",
        "a regular file": work / "health" / "a-file",
        "another program's directory": work / "health" / "other",
    }
    cases["an empty directory"].mkdir(parents=True)
    cases["a regular file"].write_text("not a directory\n", encoding="utf-8")
    cases["another program's directory"].mkdir()
    (cases["another program's directory"] / "notes.txt").write_text("someone else's\n", encoding="utf-8")
    lines = []
    for name, where in cases.items():
        before = listing(where)
        code, took, said = health(where)
        created = sorted(set(listing(where)) - set(before))
        lines.append(f"health: {name}: exit {code} after {took:.1f} s, created {created or 'nothing'}: {said[:220]}")
    async with FakeTelegramAPI(token=TOKEN) as api:
        data = data_dir(work, "health-running", template)
        bot = await Child(telegram_env(api.base_url, data), work / "health-running.log").start()
        await api.wait_call("getUpdates", timeout=90)
        await asyncio.sleep(1.0)  # the health file says "running"
        code, took, said = await asyncio.to_thread(health, data)
        lines.append(f"health: a running bot's directory: exit {code} after {took:.1f} s: {said[:220]}")
        await bot.stop()
        code, took, said = await asyncio.to_thread(health, data)
        lines.append(f"health: the same, bot stopped: exit {code} after {took:.1f} s: {said[:220]}")
    return lines


async def unwritable(work: Path) -> str:
    blocker = work / "unwritable-parent"
    blocker.write_text("a file where the directory's parent should be\n", encoding="utf-8")
    where = blocker / "data"  # cannot be created, as on a read-only mount or outside the unit's sandbox
    env = telegram_env("http://127.0.0.1:9/bot", where)
    started = time.monotonic()
    bot = await Child(env, work / "unwritable.log").start()
    code = await bot.wait(60)
    took = time.monotonic() - started
    said = [line for line in bot.text().splitlines() if '"CRITICAL"' in line or '"ERROR"' in line][:1]
    return f"unwritable: fitbot run exits {code} after {took:.1f} s: {(said or ['(nothing logged)'])[0][:260]}"


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="fitbot-deploy-") as tmp:
        work = Path(tmp)
        template = await catalog_template(work)
        for name in args.scenarios:
            if name == "envfile":
                for line in await envfile(work, template, args.loaders):
                    print(line, flush=True)
            elif name == "health":
                for line in await health_cases(work, template):
                    print(line, flush=True)
            else:
                print(await unwritable(work), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help=f"any of {', '.join(SCENARIOS)} (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="env files loaded as systemd only")
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}")
    args.scenarios = args.scenarios or list(SCENARIOS)
    args.loaders = ["systemd"] if args.quick else ["systemd", "compose", "docker-run"]
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
