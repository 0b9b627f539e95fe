"""The words of a mixed rig (``bot.answers.rigs``): the placement section, the note above the card's summary, and
why a rig cannot be answered."""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.notices import error_card
from bot.reply import Action, CodeBlock, Reply, Row, Section
from core.models import Lang
from core.rig import RigPlan
from locales import gib, integer, t


def rig_error_card(lang: Lang, code: str, max_cards: int) -> Reply:
    """A rig that cannot be one machine (``core.rig.RigError.code``)."""
    return error_card(lang, t(lang, f"rig.{code}", max=max_cards))


def with_placement(
    reply: Reply,
    plan: RigPlan,
    flags: str,
    split: str,
    slow: str,
    setup: tuple[str, int],
    code: tuple[CodeBlock, ...],
    actions: Sequence[Action],
    lang: Lang,
) -> Reply:
    """The card with what each card holds, the RAM part and the ``flags``; the note on the ``split`` and the
    ``slow``est card above its summary; "n x name" of the stand-in ``setup`` said as the rig's name."""
    rows = []
    first = 0
    for card in plan.cards:
        last = first + card.layers - 1
        rows.append(
            Row(
                label=card.gpu.short_name,
                value=t(
                    lang,
                    "rig.card",
                    first=first,
                    last=max(first, last),
                    layers=card.layers,
                    held=gib(card.holds_bytes, lang),
                    share=f"{integer(round(100 * card.share), lang)} %",
                ),
            )  # fmt: skip
        )
        first = last + 1
    held = gib(plan.ram_bytes, lang)
    if plan.cpu_moe_layers:
        rows.append(Row(label=t(lang, "rig.ram"), value=t(lang, "rig.ram_experts", n=plan.cpu_moe_layers, held=held)))
    elif plan.layers_in_ram:
        rows.append(Row(label=t(lang, "rig.ram"), value=t(lang, "rig.ram_layers", n=plan.layers_in_ram, held=held)))
    rows.append(Row(label=t(lang, "rig.flags"), value=flags))
    section = Section(title=t(lang, "rig.title"), rows=tuple(rows))
    name, n = setup
    title = reply.title.replace(f"{n}x {name}", name)
    note = t(lang, "rig.note", split=split, slow=slow)
    summary = f"{note}\n{reply.summary.replace(f'{n}x {name}', name)}"
    return reply.model_copy(
        update={
            "sections": (*reply.sections, section),
            "code": code,
            "title": title,
            "summary": summary,
            "actions": tuple(actions),
        }
    )
