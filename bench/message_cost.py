"""Cost per message (issue 40 item 7), for ``bench/bounded_faults.py``: the event loop's share of a long
message, and the memory of many distinct questions.

``loop_cost``: the production Telegram application (``build_application``, real python-telegram-bot)
against the fake Bot API in this process, no charts; plain questions and pasted commands of 1,000,
4,096 and 8,000 characters in private chats; the CPU time of the event loop's thread per message
(intake, handler, the service's loop side, rendering, the send; the fake's own parsing included, so an
upper bound), and the ratio 8,000 / 4,096 (2 is linear).

``memory_growth``: a child process answers ``n`` distinct /fit questions (random catalog model, GPU and
context, as the attack did) through ``Service.answer`` and renders each for Telegram and Discord; RSS
after 1,000, 5,000, 10,000 and 20,000 questions (of those that fit in ``n``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "123456:BENCH-message-cost"
LENGTHS = (1000, 4096, 8000)


def question(kind: str, n: int, i: int) -> str:
    if kind == "paste":
        head = f"llama-server -m Qwen3-8B-Q4_K_M.gguf -c {8192 + i} on my rtx 4090 "
        return (head + "-ngl 99 --flash-attn on " * n)[:n]
    return (f"can i run qwen3 {8 + i % 3 * 6}b on my 4090 with {16 + i} gb ram and 32k context " * n)[:n]


def _to_chat(chat: int) -> Callable[[dict[str, Any]], bool]:
    return lambda params: params.get("chat_id") == chat


async def loop_cost(repeats: int = 20) -> str:
    from bot.adapters.telegram.bot import build_application, serve
    from bot.service import Service
    from catalog.store import CatalogStore
    from fitbot_fakes.telegram_api import FakeTelegramAPI
    from storage.userdata import UserDataStore

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
        async with FakeTelegramAPI(token=TOKEN) as api, UserDataStore(Path(tmp) / "user.sqlite") as store:
            service = Service(catalog, store=store)
            service.warm_up()
            app = build_application(
                service, TOKEN, base_url=api.base_url, base_file_url=api.base_file_url, charts=False
            )
            async with serve(app, poll_timeout=1):
                chat = 10_000
                for kind in ("question", "paste"):
                    cost = {}
                    for n in (200, *LENGTHS):  # 200: a warm-up round per kind
                        started = time.thread_time()
                        chats = list(range(chat, chat + repeats))
                        chat += repeats
                        for i, c in enumerate(chats):
                            api.push_update(api.make_message(question(kind, n, i), chat_id=c, user_id=c))
                        for c in chats:
                            await api.wait_call("sendMessage", timeout=60, where=_to_chat(c))
                        cost[n] = (time.thread_time() - started) / repeats * 1000
                    figures = ", ".join(f"{n:,} chars {cost[n]:.1f} ms" for n in LENGTHS)
                    rows.append(f"{kind}s {figures} (8,000/4,096: {cost[8000] / cost[4096]:.2f}x)")
    return "loop: event-loop CPU per message, " + "; ".join(rows)


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def memory_child(n: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bot.render.discord_embed import to_discord
    from bot.render.telegram_html import to_telegram
    from bot.service import Service, User
    from catalog.store import CatalogStore
    from storage.userdata import UserDataStore

    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
        async with UserDataStore(Path(tmp) / "user.sqlite") as store:
            service = Service(catalog, store=store)
            service.warm_up()
            rnd = random.Random(3)
            models, gpus = [m.id for m in catalog.models], [g.id for g in catalog.gpus]
            samples = {}
            started = time.monotonic()
            for i in range(n):
                text = f"/fit {rnd.choice(models)} {rnd.choice(gpus)} {rnd.choice([4, 8, 16, 32, 64])}k"
                reply = await service.answer(text, "en", User(id=f"tg:{i}"))
                to_telegram(reply)
                to_discord(reply)
                if i + 1 in (1_000, 5_000, 10_000, 20_000):
                    samples[i + 1] = round(_rss_mib(), 1)
            seconds = time.monotonic() - started
            await service.close()
    print(json.dumps({"rss": samples, "ms": seconds / n * 1000}))


async def memory_growth(n: int) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        f"import asyncio, sys; sys.path.insert(0, {str(ROOT)!r}); from bench.message_cost import memory_child;"
        f" asyncio.run(memory_child({n}))",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out, _ = await proc.communicate()
    result = json.loads(out.decode().strip().splitlines()[-1])
    rss = {int(k): v for k, v in result["rss"].items()}
    shown = ", ".join(f"{k:,}: {v:.0f} MiB" for k, v in sorted(rss.items()))
    growth = ""
    if 5_000 in rss and 20_000 in rss:
        growth = f"; 5k to 20k {100 * (rss[20_000] / rss[5_000] - 1):+.1f} %"
    return f"memory: RSS after distinct /fit questions {shown}{growth} ({result['ms']:.1f} ms per question)"


__all__ = ["loop_cost", "memory_child", "memory_growth"]
