"""One card across the memory variants of a bare device name, where none of them dominates.

"Can I run Qwen3 32B on an M3 Max?" has no single answer: the M3 Max comes with 36 to 128 GB, and
no size is what nearly everyone owns (see ``catalog/facts/name_defaults.toml`` for the names where
one is). Asking back would make the user pick before seeing why it matters, so the card answers for
every size at once ("Fits with 64 GB or more. 36/48 GB: needs offload") with one row per size and
a button per size that opens its full card.
"""

from __future__ import annotations

from bot.answers.compare import subject_of
from bot.answers.resolve import replace_name
from bot.cards.variants import span_reply
from bot.question import Answering, Ask
from bot.reply import Reply
from core.estimate import FitEstimate
from core.models import GIB, GpuSpec, ModelSpec
from core.query.parse import Intent, Query


def spans(q: Query) -> bool:
    """Whether a question is answered across the memory variants of its device instead of asking."""
    g = q.gpu
    return (
        g is not None
        and g.id is None
        and len(g.choices) > 1
        and q.gpu2 is None
        and q.intent in (Intent.FIT, Intent.SPEED)
    )


def variants(answers: Answering, q: Query) -> list[GpuSpec]:
    """One device per memory size and speed (a MacBook and a Studio with the same chip and memory are one row;
    a Mac mini's M4 and M4 Pro with 24 GB are two)."""
    assert q.gpu is not None
    seen: dict[tuple[int, float], GpuSpec] = {}
    for gid in q.gpu.choices:
        gpu = answers.catalog.gpu(gid)
        if gpu is not None:
            seen.setdefault((round(gpu.memory_bytes / GIB), gpu.bandwidth_bytes_per_s), gpu)
    return [seen[k] for k in sorted(seen)]


def span_card(answers: Answering, model: ModelSpec, ask: Ask) -> Reply:
    """The verdict for every memory size of the named chip, summarised in one line."""
    q, echo = ask.query, ask.echo
    assert q.gpu is not None
    rows: list[tuple[GpuSpec, FitEstimate]] = []
    for gpu in variants(answers, q):
        rows.append((gpu, answers.analyse(answers.scenario(ask, model, gpu, q.gpu_count), ask).estimate))
    queries = [replace_name(echo, q.gpu.text, g.id) for g, _ in rows]
    subjects = tuple(
        subject_of(model, g, q.gpu_count, answers.request(ask, q.gpu_count), tuple(ask.notes)) for g, _ in rows
    )
    return span_reply(model, q.gpu.text, rows, queries, subjects, ask.lang, echo)
