"""The words of the multi-GPU setups section on the "which GPU do I need?" card."""

from __future__ import annotations

from collections.abc import Sequence

from bot.reply import Reply, Row, Section, setup_label
from core.models import GpuSpec, Lang
from locales import gib, t, tokens_per_s, usd


def with_rig_picks(reply: Reply, rigs: Sequence[tuple[GpuSpec, int, int, float]], lang: Lang) -> Reply:
    """The /gpus card with a section of the rigs (card, count, GPU memory it needs, single-stream tok/s); the
    card unchanged where there are none."""
    rows = []
    for gpu, count, total_bytes, decode in rigs:
        price = f" · ~{usd(gpu.price_usd * count, lang, 0)}" if gpu.price_usd else ""
        value = f"{gib(total_bytes, lang, 0)} · {tokens_per_s(decode, lang)}{price}"
        rows.append(Row(label=setup_label(gpu.short_name, count), value=value))
    if not rows:
        return reply
    section = Section(title=t(lang, "rig_picks.title"), rows=tuple(rows))
    return reply.model_copy(update={"sections": (*reply.sections, section)})
