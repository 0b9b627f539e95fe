"""How a setup is written, in a module of its own: ``fitbot estimate`` writes it without importing the
reply model (``bot.reply``, which re-exports it for the cards and adapters)."""

from __future__ import annotations


def setup_label(name: str, count: int) -> str:
    """The one way a setup is written, on cards, in buttons, in autocomplete and in the CLI: "2x RTX 3090"."""
    return f"{count}x {name}" if count > 1 else name
