"""The console adapter: ``fitbot ask`` answers one question, ``fitbot chat`` keeps a session open.

Both take a ``Service`` or an async factory of one (the CLI passes ``run.open_service``, so the
console asks Hugging Face like the chat bots do); a service the adapter opened it also closes, all
inside one event loop (the user database and the hub client belong to the loop that opened them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.render.text import to_console
from bot.service import Service, User

PROMPT = "fitbot> "
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
    asyncio.run(_session(source, User(lang=lang) if lang else None))  # type: ignore[arg-type]


async def _session(source: ServiceSource, user: User | None) -> None:
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
            if not line:
                continue
            if line.isdigit() and 0 < int(line) <= len(actions):
                line = actions[int(line) - 1]
            reply = await service.answer(line, user=user)
            actions = tuple(a.query for a in reply.actions)
            print(to_console(reply))
            if actions:
                print("  " + "  ".join(f"[{i}] {a.label}" for i, a in enumerate(reply.actions, 1)))
    finally:
        if service is not source:
            await service.close()
