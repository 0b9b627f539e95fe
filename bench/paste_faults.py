"""Hostile pastes against the production bot: can one user stall or trick the others? (issue 40)

    .venv/bin/python bench/paste_faults.py [--quick] [--others N]

Runs ``fitbot run`` in a child process against the fake Bot API in this one (production send pacing,
fresh data directory) and prints one line per scenario:

* ``redos``: a llama.cpp command whose ``-ot`` pattern backtracks exponentially (``(.|.)*Z``) and two
  more of that shape, then N other users' questions 0.1 s later: when the paste's answer and the
  others' answers arrive (question -> first message), and whether the health file names a stuck answer.
* ``payload``: shell payloads in the model reference, an argument and the environment of llama.cpp,
  vLLM and Ollama commands that need a fix: of the corrected commands sent back, how many hold a
  shell operator, substitution or newline outside quotes (read as a POSIX shell reads it).

Prints figures; asserts nothing (the checks are tests/bot/test_answer_deadline.py,
tests/bot/test_command_safety.py and tests/core/test_tensor_patterns.py).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fault_harness import Child, answered, ask, catalog_template, data_dir, first_answer_at, telegram_env, until
from fitbot_fakes.hostile_pastes import PAYLOADS, POSITIONS, command_lines, live_shell_syntax

REDOS = (
    'llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -c 8192 -ot "(.|.)*Z=CPU" on my rtx 4090',
    "llama-server -m Qwen3-235B-A22B-Q4_K_M.gguf -c 8192 -ot '(a+)+$=CPU' -ot '(\\w+\\s?)*$=CUDA0' on 2x rtx 3090",
    'llama-server -m gpt-oss-120b-mxfp4.gguf -ot "(blk|blk\\.|b.k)*\\.ffn_.*_exps!=CPU" on my rtx 5090',
)


async def redos(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    async with FakeTelegramAPI() as api:
        data = data_dir(work, "redos", template)
        bot = await Child(telegram_env(api.base_url, data), work / "redos.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            warm = list(range(90_000, 90_004))
            ask(api, warm)
            await until(lambda: answered(api) >= set(warm), 120)
            pastes = list(range(70_000, 70_000 + len(REDOS)))
            since = time.monotonic()
            for chat, text in zip(pastes, REDOS, strict=True):
                api.push_update(api.make_message(text, chat_id=chat))
            await asyncio.sleep(0.1)
            others = list(range(71_000, 71_000 + args.others))
            since_others = ask(api, others)
            await until(lambda: answered(api) >= set(pastes) | set(others), 60)
            health = json.loads((data / "health.json").read_text(encoding="utf-8"))
        finally:
            await bot.stop()
    at = first_answer_at(api)
    paste_s = [at[c] - since for c in pastes if c in at]
    other_s = sorted(at[c] - since_others for c in others if c in at)
    return (
        f"redos: {len(paste_s)} of {len(pastes)} backtracking pastes answered, slowest after"
        f" {max(paste_s, default=float('nan')):.2f} s; {len(other_s)} of {len(others)} other users answered,"
        f" median {statistics.median(other_s) if other_s else float('nan'):.2f} s,"
        f" max {max(other_s, default=float('nan')):.2f} s; stuck answers in health: {health.get('stuck_answers', 0)}"
    )


def _sent_commands(api: Any, chat: int) -> str:
    """The code blocks (``<pre><code class="language-sh">``) of what the bot sent to one chat; the
    quote of the user's own paste (``<blockquote>``) is no suggestion and is left out."""
    texts = [str(e.params.get("text") or "") for e in list(api.exchanges) if str(e.params.get("chat_id")) == str(chat)]
    blocks = [b for t in texts for b in re.findall(r'<code class="language-sh">(.*?)</code>', t, re.S)]
    return "\n".join(html.unescape(re.sub(r"<[^>]+>", "", b)) for b in blocks)


async def payload(work: Path, template: Path, args: argparse.Namespace) -> str:
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    cases = [(template_, p) for _, template_ in POSITIONS for p in PAYLOADS]
    cases = cases[:: 4 if args.quick else 1]
    async with FakeTelegramAPI() as api:
        bot = await Child(telegram_env(api.base_url, data_dir(work, "payload", template)), work / "payload.log").start()
        try:
            await api.wait_call("getUpdates", timeout=90)
            chats = list(range(80_000, 80_000 + len(cases)))
            for chat, (text, p) in zip(chats, cases, strict=True):
                api.push_update(api.make_message(text.format(p=p), chat_id=chat))
            await until(lambda: answered(api) >= set(chats), 180)
        finally:
            await bot.stop()
    lines = [
        line for chat in chats for line in command_lines(_sent_commands(api, chat)) if not line.startswith("FROM ")
    ]
    live = [line for line in lines if live_shell_syntax(line)]
    carrying = sum("evil.example" in line for line in lines)
    return (
        f"payload: {len(cases)} hostile pastes, {len(answered(api) & set(chats))} answered; {len(lines)} command lines"
        f" sent back, {carrying} carry the payload (quoted), {len(live)} with live shell syntax"
    )


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="fitbot-pastes-") as tmp:
        work = Path(tmp)
        template = await catalog_template(work)
        for scenario in (redos, payload):
            print(await scenario(work, template, args), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer users and pastes, for CI")
    parser.add_argument("--others", type=int, default=10, help="redos: other users asking right after the pastes")
    args = parser.parse_args()
    if args.quick:
        args.others = 4
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
