"""The console adapter: ``fitbot ask`` answers one question, ``fitbot chat`` keeps a session open."""

from __future__ import annotations

import asyncio

from bot.render.text import to_console
from bot.service import Service, User

PROMPT = "fitbot> "


def ask(service: Service, question: str, lang: str | None = None, as_json: bool = False) -> str:
    """Answer one question and return the text to print."""
    reply = asyncio.run(service.answer(question, user=User(lang=lang) if lang else None))  # type: ignore[arg-type]
    return reply.model_dump_json(indent=1, exclude={"chart"}) if as_json else to_console(reply)


def chat(service: Service, lang: str | None = None) -> None:
    """Read questions until EOF or /quit; numbers pick a button of the last card."""
    user = User(lang=lang) if lang else None  # type: ignore[arg-type]
    actions: tuple[str, ...] = ()
    try:
        import readline  # noqa: F401  (history and line editing where available)
    except ImportError:  # pragma: no cover
        pass
    print("FitBot — ask a question, /help for examples, /quit to leave.")
    while True:
        try:
            line = input(PROMPT).strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if line in ("/quit", "/exit", "quit", "exit"):
            return
        if not line:
            continue
        if line.isdigit() and 0 < int(line) <= len(actions):
            line = actions[int(line) - 1]
        reply = asyncio.run(service.answer(line, user=user))
        actions = tuple(a.query for a in reply.actions)
        print(to_console(reply))
        if actions:
            print("  " + "  ".join(f"[{i}] {a.label}" for i, a in enumerate(reply.actions, 1)))
