"""The words of the memory-only card: a model known by its parameter count alone (``bot.answers.unknown_model``)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.parts import footer
from bot.reply import Reply, Subject, Table, Tone
from core.models import Catalog, Lang, SizedModel
from locales import gib, num, t

TONES = {"fits": Tone.GOOD, "tight": Tone.WARN, "no": Tone.BAD}


def memory_only_reply(
    name: str,
    repo: str,
    params: int,
    setup: str,
    rows: Sequence[tuple[str, int, str]],
    verdict: str,
    main: str,
    need: int,
    usable: int,
    stated: SizedModel | None,
    subject: Subject,
    catalog: Catalog,
    lang: Lang,
    echo: str,
) -> Reply:
    """Weights per quant (quant, bytes, mark) against ``usable`` bytes on ``setup``; ``verdict`` (fits, tight,
    no) for the quant ``main``, which needs ``need``; from the publisher's stated count where ``stated``."""
    count = num(params / 1e9, lang, 1)
    what = (
        t(
            lang,
            "memory_only.what_stated",
            model=stated.name,
            params=count,
            why=t(lang, f"memory_only.why_{stated.why}"),
        )
        if stated
        else t(lang, "memory_only.what", repo=repo, params=count)
    )
    summary = " ".join(
        (
            what,
            t(lang, f"memory_only.{verdict}", quant=main, need=gib(need, lang), usable=gib(usable, lang), gpu=setup),
            t(lang, "memory_only.unknown"),
        )
    )
    return Reply(
        kind="memory_only",
        locale=lang,
        title=t(lang, "memory_only.title", model=name, gpu=setup),
        tone=TONES[verdict],
        summary=summary,
        table=Table(
            headers=(t(lang, "memory_only.quant"), t(lang, "memory_only.weights"), ""),
            rows=tuple((qid, gib(weights, lang), mark) for qid, weights, mark in rows),
        ),
        echo=echo,
        footer=footer(catalog, lang),
        subjects=(subject,),
    )
