"""The console adapter: ``fitbot ask`` answers one question, ``fitbot chat`` keeps a session open.

Both take a ``Service`` or an async factory of one (the CLI passes ``run.open_service``, so the
console asks Hugging Face like the chat bots do); a service the adapter opened it also closes, all
inside one event loop (the user database and the hub client belong to the loop that opened them).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from bot.render.text import to_console
from bot.service import Service, User

PROMPT = "fitbot> "
# ``fitbot chat`` is one person at their own machine: their /mygpu and pasted runs are kept in the user
# database like a chat user's; a one-shot ``fitbot ask`` stays stateless
CONSOLE_USER = "console:local"
# a line that starts a multi-line paste (a llama-bench table or JSON, a log): read on to the next empty line
PASTE_STARTS = ("|", "[", "{", "llama_", "ggml_", "slot ", "srv ", "prompt eval", "total duration")
MAX_PASTE_LINES = 400
LLAMA_BENCH_BUILD = re.compile(r"^build: [0-9a-f]{6,40} \(\d{1,7}\)$")
ServiceSource = Service | Callable[[], Awaitable[Service]]


def ask(source: ServiceSource, question: str, lang: str | None = None, as_json: bool = False) -> str:
    """Answer one question and return the text to print."""

    async def once() -> str:
        service = source if isinstance(source, Service) else await source()
        try:
            reply = await service.answer(question, user=User(lang=lang) if lang else None)  # type: ignore[arg-type]
        finally:
            if service is not source:
                await service.close()
        return reply.model_dump_json(indent=1, exclude={"chart"}) if as_json else to_console(reply)

    return asyncio.run(once())


def chat(source: ServiceSource, lang: str | None = None) -> None:
    """Read questions until EOF or /quit; numbers pick a button of the last card."""
    try:
        import readline  # noqa: F401  (history and line editing where available)
    except ImportError:  # pragma: no cover
        pass
    print("FitBot — ask a question, /help for examples, /quit to leave.")
    asyncio.run(session(source, User(id=CONSOLE_USER, lang=lang)))  # type: ignore[arg-type]


async def _rest_of_paste() -> list[str]:
    lines: list[str] = []
    while len(lines) < MAX_PASTE_LINES:
        try:
            line = await asyncio.to_thread(input)
        except (EOFError, KeyboardInterrupt):
            break
        if not line.strip():
            break
        lines.append(line)
    return lines


async def session(source: ServiceSource, user: User | None) -> None:
    service = source if isinstance(source, Service) else await source()
    actions: tuple[str, ...] = ()
    try:
        while True:
            try:
                line = (await asyncio.to_thread(input, PROMPT)).strip()
            except (EOFError, KeyboardInterrupt):
                print()
                return
            if line in ("/quit", "/exit", "quit", "exit"):
                return
            if not line or LLAMA_BENCH_BUILD.match(line):  # the tail llama-bench prints after its table's blank line
                continue
            if line.isdigit() and 0 < int(line) <= len(actions):
                line = actions[int(line) - 1]
            elif line.startswith(PASTE_STARTS):  # a pasted table, JSON or log: its lines up to an empty one
                line = "\n".join([line, *await _rest_of_paste()])
            reply = await service.answer(line, user=user)
            actions = tuple(a.query for a in reply.actions)
            print(to_console(reply))
            if actions:
                print("  " + "  ".join(f"[{i}] {a.label}" for i, a in enumerate(reply.actions, 1)))
    finally:
        if service is not source:
            await service.close()
