"""The chat side of a question: which /command it is, and the session commands core knows nothing of.

One list of commands serves the Telegram menu, the help card and the parser: questions
(``/fit``, ``/speed``, …) become a ``core.query.parse.Intent``; session commands (``/mygpu``, ``/lang``,
``/settings``, ``/forget``, ``/help``, ``/start``) are handled by the service and never reach core.
Telegram's ``/command@BotName`` suffix is read here too. ``/feel`` is a button's command: the
question it carries is a fit question, and the adapters stream its speed (``bot.adapters.feel``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.query.parse import Intent

QUESTIONS = ("fit", "speed", "cloud", "quant", "gpus", "models", "finetune", "tco", "compare")
SESSION = ("mygpu", "lang", "settings", "forget", "help", "start")
FEEL = "feel"  # a card's "feel the speed" button sends "/feel <the fit question>"; the adapter answers it
BUTTONS = (FEEL,)  # commands only buttons send: not in the menu, read like the question they carry
MENU = (*QUESTIONS, *SESSION[:-1])  # what the platforms list (no /start: Telegram sends it on its own)
ALIASES = {"gpu": "gpus", "model": "models", "ft": "finetune", "cost": "cloud", "language": "lang", "sprache": "lang"}
# German command names (typed; the menus list the English ones)
ALIASES |= {
    "hilfe": "help", "passt": "fit", "tempo": "speed", "geschwindigkeit": "speed", "kosten": "cloud",
    "preis": "cloud", "preise": "cloud", "mieten": "cloud", "quanten": "quant", "quantisierung": "quant",
    "grafikkarten": "gpus", "karten": "gpus", "modelle": "models", "feintuning": "finetune",
    "finetuning": "finetune", "training": "finetune", "kaufen": "tco", "lohnt": "tco", "vergleich": "compare",
    "vergleiche": "compare", "meinegpu": "mygpu", "meinekarte": "mygpu", "einstellungen": "settings",
    "vergessen": "forget", "vergiss": "forget",
}  # fmt: skip
_COMMAND = re.compile(r"^\s*/([A-Za-z_]{1,20})(?:@\w{1,64})?(?=\s|$)")
_LANG_ARG = re.compile(r"\s*([A-Za-z_-]{1,12})\b")
# sentences that are session commands ("forget me", "my gpu is a 4090", "help")
SENTENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("forget", re.compile(r"\b(?:forget me|vergiss mich|delete my data|lösche? meine daten)\b", re.I)),
    ("settings", re.compile(r"^\s*(?:my\s+|meine\s+)?(?:settings|einstellungen)\s*[?!.]*\s*$", re.I)),
    ("help", re.compile(r"^\s*(?:help|hilfe|\?+|what can you do|was kannst du)\s*[?!.]*\s*$", re.I)),
    (
        "mygpu",
        re.compile(
            r"\b(?:my (?:gpus?|graphics card|card|hardware) (?:is|are)|i (?:have|own|got)"
            r"|meine (?:gpus?|grafikkarte|karte|hardware) (?:ist|sind)|ich (?:habe|hab|besitze))\b",
            re.I,
        ),
    ),
)


@dataclass(frozen=True)
class Command:
    """A message split into its command (None for a plain question) and the rest."""

    name: str | None
    rest: str
    arg: str | None = None  # /lang's argument

    @property
    def intent(self) -> Intent | None:
        """The question kind for core, or None for a session command or a plain sentence."""
        return Intent(self.name) if self.name in QUESTIONS else None

    @property
    def session(self) -> bool:
        return self.name in SESSION


def read(text: str) -> Command:
    """Reads a leading /command (any case, with an optional @BotName); unknown commands stay text."""
    m = _COMMAND.match(text)
    if m is None:
        return Command(None, text)
    name = ALIASES.get(m.group(1).lower(), m.group(1).lower())
    if name not in QUESTIONS and name not in SESSION and name not in BUTTONS:
        return Command(None, text[m.end() :])
    rest = text[m.end() :]
    if name == "lang" and (arg := _LANG_ARG.match(rest)):
        return Command(name, rest[arg.end() :], arg.group(1).lower())
    return Command(name, rest)


def session_sentence(text: str) -> str | None:
    """A session command written as a sentence ("vergiss mich", "ich habe 2x 3090"), if any."""
    return next((name for name, pattern in SENTENCES if pattern.search(text)), None)


def question(command: str, *parts: object) -> str:
    """ "/fit qwen3-32b rtx-4090 ctx 32768 kv q8_0": a command and its given options as the one question
    grammar the cards' buttons write (``bot.cards.fit.follow_up``), blanks dropped. Typed options (Discord's
    slash commands, the MCP tools) become this text, so they are answered like any typed question."""
    return " ".join([f"/{command}", *(str(p) for p in parts if p not in (None, ""))])


def context_part(context: int | None) -> str | None:
    """A context option as "ctx N": a bare number could read as a GPU or a size."""
    return f"ctx {context}" if context else None


def kv_part(kv: str | None) -> str | None:
    return f"kv {kv}" if kv else None


def ram_part(ram_gb: float | None) -> str | None:
    return f"ram {ram_gb:g}gb" if ram_gb else None


def users_part(users: int | None) -> str | None:
    return f"{users} users" if users and users > 1 else None


def backend_part(backend: str | None) -> str | None:
    return f"on {backend}" if backend else None
