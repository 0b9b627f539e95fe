"""Questions the parser does not model, answered before it runs (issue 26): a pasted command or log,
and several models on one GPU. One entry point, so ``service.py`` carries one hook for both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bot.question_kinds import asks_together, is_paste
from core.models import Lang
from core.query.parse import parse

if TYPE_CHECKING:
    from bot.answers.route import Answers
    from bot.reply import Reply
    from bot.users.user import User

Kind = Literal["paste", "together"]


def special_kind(text: str) -> Kind | None:
    if is_paste(text):
        return "paste"
    if asks_together(text) and len(text) <= 2000:
        return "together"
    return None


def special_language(answers: Answers, text: str) -> Lang | None:
    """The language of the user's own words (for a paste: the words around it)."""
    if is_paste(text):
        from bot.answers.diagnose import paste_language  # the answering modules, only when one is asked

        return paste_language(answers, text)
    return parse(text, answers.vocab).language


def special_answer(answers: Answers, text: str, lang: Lang, user: User) -> Reply:
    if is_paste(text):
        from bot.answers.diagnose import diagnose_answer

        return diagnose_answer(answers, text, lang, user)
    from bot.answers.together import together_answer

    return together_answer(answers, text, lang, user)


__all__ = ["special_answer", "special_kind", "special_language"]
