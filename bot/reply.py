"""The platform-neutral answer: what every adapter renders, in Discord, Telegram or the terminal.

All text in a ``Reply`` is already localized and formatted (numbers the locale's way); renderers
only lay it out and escape it for their platform. ``echo`` holds the user's own words and must
always be escaped.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.labels import setup_label as setup_label  # the cards' and adapters' import
from core.figures import Figures
from core.notes import Note


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# the reply contract's languages (the same literal as core.models.Lang: adapters see only bot.reply)
Lang = Literal["de", "en"]


class Tone(StrEnum):
    """The verdict's colour: green, amber, red, or neutral information."""

    GOOD = "good"
    WARN = "warn"
    BAD = "bad"
    INFO = "info"


TONE_EMOJI = {Tone.GOOD: "🟢", Tone.WARN: "🟡", Tone.BAD: "🔴", Tone.INFO: "ℹ️"}
TONE_COLOUR = {Tone.GOOD: 0x2ECC71, Tone.WARN: 0xF1C40F, Tone.BAD: 0xE74C3C, Tone.INFO: 0x3498DB}


class Row(_Frozen):
    label: str
    value: str


class Section(_Frozen):
    title: str
    rows: tuple[Row, ...] = ()


class Table(_Frozen):
    title: str = ""
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...] = ()


class CodeBlock(_Frozen):
    label: str
    text: str


class Action(_Frozen):
    """A follow-up button: ``query`` is the question to answer when it is pressed.

    The service ends each query with a tag naming the card's language (" |de"): the question of a
    button has no words of its own, so on its own it would follow the client's language and a German
    card's buttons could answer in English. ``question`` is the query without it."""

    label: str
    query: str

    @property
    def question(self) -> str:
        return untagged(self.query)[0]


_LANG_TAG = re.compile(r" \|(de|en)$")


def untagged(text: str) -> tuple[str, Literal["de", "en"] | None]:
    """(the question without its language tag, the language of the card its button sat on, if any)."""
    m = _LANG_TAG.search(text)
    if m is None:
        return text, None
    return text[: m.start()], "de" if m[1] == "de" else "en"


class Series(_Frozen):
    name: str
    points: tuple[tuple[float, float], ...]


class ChartSpec(_Frozen):
    """What to draw; ``bot/charts.py`` turns it into a PNG (and caches it)."""

    kind: Literal["memory_vs_context", "speed_per_gpu"]
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...] = ()
    bars: tuple[tuple[str, float], ...] = ()  # speed_per_gpu: (gpu name, tokens/s)
    limit: float | None = None  # memory_vs_context: the device's usable memory
    limit_label: str = ""


class Subject(_Frozen):
    """One model × hardware a card is about, so an adapter never has to parse the title."""

    model_id: str | None = None
    model_name: str | None = None
    hf_repo: str | None = None
    total_params_b: float | None = None
    gpu_id: str | None = None
    gpu_name: str | None = None
    gpu_count: int = 1
    gpu_memory_gb: float | None = None  # per device, as marketed (GB = GiB on spec sheets)
    ram_gb: float | None = None
    quant: str | None = None
    context: int | None = None
    engine: str | None = None
    notes: tuple[Note, ...] = ()  # what was assumed or looked up, as codes with values (``core.notes``)
    figures: Figures | None = None  # the numbers the card shows, from the one Analysis (``core.figures``)


class Reply(_Frozen):
    kind: str  # fit, speed, cloud, quant, gpus, models, finetune, tco, compare, help, suggest, error, ...
    locale: Lang
    title: str
    tone: Tone = Tone.INFO
    summary: str = ""
    sections: tuple[Section, ...] = ()
    table: Table | None = None
    code: tuple[CodeBlock, ...] = ()
    chart: ChartSpec | None = None
    actions: tuple[Action, ...] = ()
    suggestions: tuple[str, ...] = Field(default=(), max_length=6)  # "did you mean" choices
    assumptions: str = ""
    footer: str = ""
    echo: str = ""  # the user's words, shown back; untrusted
    subjects: tuple[Subject, ...] = ()

    def with_language_tags(self) -> Reply:
        """The reply with each button's question tagged with the reply's language (see ``Action``)."""
        if not self.actions:
            return self
        tagged = tuple(a.model_copy(update={"query": f"{a.question} |{self.locale}"}) for a in self.actions)
        return self.model_copy(update={"actions": tagged})

    @property
    def emoji(self) -> str:
        return TONE_EMOJI[self.tone]

    @property
    def colour(self) -> int:
        return TONE_COLOUR[self.tone]
