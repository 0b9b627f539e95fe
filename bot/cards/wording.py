"""Words for a machine without a GPU: a CPU-only box or a Raspberry Pi has no "GPU memory".

The fit card speaks of GPU memory everywhere; on a device with no GPU at all the same numbers are
its system RAM, and the card says so (``locales`` ``[shared_memory]``: phrase pairs, tried in order).
"""

from __future__ import annotations

from bot.reply import Reply, Row, Section
from core.models import Backend, GpuSpec, Lang
from locales import messages

PAIRS = 9  # the most phrase pairs a locale may list


def has_no_gpu(gpu: GpuSpec) -> bool:
    """CPU-only machines and single-board computers: the model runs on the CPU from system RAM."""
    return gpu.backend is Backend.CPU


def _pairs(lang: Lang) -> list[tuple[str, str]]:
    table = messages(lang)
    keys = [(f"shared_memory.from{i}", f"shared_memory.to{i}") for i in range(1, PAIRS + 1)]
    return [(table[a], table[b]) for a, b in keys if a in table and b in table]


def _say(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def without_gpu_words(reply: Reply, lang: Lang) -> Reply:
    """The card with its GPU-memory phrases said for shared RAM."""
    pairs = _pairs(lang)
    sections = tuple(
        Section(
            title=_say(s.title, pairs),
            rows=tuple(Row(label=_say(r.label, pairs), value=_say(r.value, pairs)) for r in s.rows),
        )
        for s in reply.sections
    )
    words = {"summary": _say(reply.summary, pairs), "title": _say(reply.title, pairs)}
    words |= {"assumptions": _say(reply.assumptions, pairs), "footer": _say(reply.footer, pairs)}
    return reply.model_copy(update={**words, "sections": sections})
