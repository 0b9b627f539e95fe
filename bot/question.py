"""One question being answered, and what the answer modules may ask of ``bot.answers.route.Answers``.

The message was read once (``bot.understand``); ``Ask`` holds its query and what answering it assumed
so far (per question, never on the shared ``Answers``); ``AskBack`` ends an answer with the card that asks back. ``Answering`` is the
part of ``Answers`` the list, table and comparison answers use, so they need not import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from bot.reply import Action, Reply
from bot.users.user import User
from core.analysis import Analysis
from core.devices import GenericDevice
from core.estimate import Request, Scenario
from core.models import Catalog, GpuSpec, Lang, ModelSpec
from core.notes import Note
from core.query.asks import Asks
from core.query.parse import Match, Query

T = TypeVar("T")


class AskBack(Exception):
    """The answer is a question back (which model? which memory size?): ``reply`` is that card."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.kind)
        self.reply = reply


@dataclass
class Ask:
    """One question being answered: what was asked, and what answering it assumed so far."""

    query: Query
    lang: Lang
    user: User
    echo: str  # the message, to be echoed and for the buttons' other readings; never read for meaning
    notes: list[Note] = field(default_factory=list)
    generic: GenericDevice | None = None  # the generic device the question is about, if any
    actions: list[Action] = field(default_factory=list)  # the other readings of a name (bot.answers.resolve)

    @property
    def flags(self) -> Asks:
        """What else the question asks for (a details page, the whole list...), as the parser read it."""
        return self.query.asks

    def note(self, note: Note) -> None:
        if note not in self.notes:
            self.notes.append(note)


class Answering(Protocol):
    """What an answer module asks of the answers it belongs to (``bot.answers.route.Answers``)."""

    catalog: Catalog

    def cached(self, key: tuple[str, ...], compute: Callable[[], T]) -> T: ...

    def request(self, ask: Ask, count: int) -> Request: ...

    def scenario(self, ask: Ask, model: ModelSpec, gpu: GpuSpec | None, count: int = 1) -> Scenario: ...

    def analyse(self, s: Scenario, ask: Ask | None = None, full: bool = False) -> Analysis: ...

    def about(self, reply: Reply, ask: Ask, analysis: Analysis) -> Reply: ...

    def model(self, ask: Ask, match: Match | None = None) -> ModelSpec: ...

    def device(self, ask: Ask, model: ModelSpec | None, query: Query | None = None) -> tuple[GpuSpec, int]: ...


__all__ = ["Answering", "AskBack", "Ask"]
