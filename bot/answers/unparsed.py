"""Questions the parser does not model, answered on their own paths (issue 26): a pasted command or log,
and several models on one GPU. One entry point, so ``service.py`` carries one hook for both; the answering
modules are imported when one is asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.answers.route import Answers
    from bot.reply import Reply
    from bot.understand import Question
    from bot.users.user import User
    from core.models import Lang


def special_answer(answers: Answers, question: Question, lang: Lang, user: User) -> Reply:
    """The card of a paste (``question.kind`` "paste") or of side models next to an LLM ("together")."""
    if question.kind == "paste":
        from bot.answers.diagnose import diagnose_answer

        return diagnose_answer(answers, question.paste, question.query, lang, user, question.text)
    from bot.answers.together import together_answer

    return together_answer(answers, question, lang, user)


__all__ = ["special_answer"]
