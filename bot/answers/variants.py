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
from bot.cards.parts import verdict_label
from bot.question import Answering, Ask
from bot.reply import Action, Reply, Table, Tone
from core.estimate import FitEstimate
from core.fit import Verdict
from core.models import GIB, GpuSpec, Lang, ModelSpec
from core.query.parse import Intent, Query
from locales import t, tokens_per_s

RUNS = (Verdict.FITS, Verdict.TIGHT)


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


def _label(gpu: GpuSpec, rows: list[tuple[GpuSpec, FitEstimate]]) -> str:
    """ "64 GB"; the device's name where two rows have that size."""
    size = round(gpu.memory_bytes / GIB)
    return gpu.short_name if sum(round(g.memory_bytes / GIB) == size for g, _ in rows) > 1 else f"{size} GB"


def span_card(answers: Answering, model: ModelSpec, ask: Ask) -> Reply:
    """The verdict for every memory size of the named chip, summarised in one line."""
    q, lang, echo = ask.query, ask.lang, ask.echo
    assert q.gpu is not None
    rows: list[tuple[GpuSpec, FitEstimate]] = []
    for gpu in variants(answers, q):
        rows.append((gpu, answers.analyse(answers.scenario(ask, model, gpu, q.gpu_count), ask).estimate))
    summary = " ".join([t(lang, "variants.assumed", text=q.gpu.text, sizes=_sizes(rows, lang)), _headline(rows, lang)])
    verdicts = {e.verdict for _, e in rows}
    tone = Tone.GOOD if verdicts & set(RUNS) else Tone.WARN if Verdict.OFFLOAD in verdicts else Tone.BAD
    table = Table(
        headers=(t(lang, "variants.memory"), t(lang, "variants.verdict"), t(lang, "variants.decode")),
        rows=tuple(
            (
                _label(g, rows),
                verdict_label(e.verdict, lang),
                tokens_per_s(e.speed.decode_tokens_per_s, lang) if e.verdict is not Verdict.NO_FIT else "–",
            )
            for g, e in rows
        ),
    )
    return Reply(
        kind="variants",
        locale=lang,
        title=t(lang, "variants.title", model=model.name, chip=q.gpu.text),
        tone=tone,
        summary=summary,
        table=table,
        actions=tuple(Action(label=_label(g, rows), query=replace_name(echo, q.gpu.text, g.id)) for g, _ in rows),
        echo=echo,
        subjects=tuple(
            subject_of(model, g, q.gpu_count, answers.request(ask, q.gpu_count), tuple(ask.notes)) for g, _ in rows
        ),
    )


def _headline(rows: list[tuple[GpuSpec, FitEstimate]], lang: Lang) -> str:
    """ "Fits with 64 GB or more. 36/48 GB: needs offload" — the sizes that run, then the others by verdict."""
    sizes = _sizes(rows, lang)
    good = [i for i, (_, e) in enumerate(rows) if e.verdict in RUNS]
    if len(good) == len(rows):
        return t(lang, "variants.fits_all", sizes=sizes)
    if not good:
        head = t(lang, "variants.fits_none", sizes=sizes)
    elif good == list(range(good[0], len(rows))):  # every size from some size up
        head = t(lang, "variants.fits_from", memory=f"{round(rows[good[0]][0].memory_bytes / GIB)} GB")
    else:
        head = ""
    groups: dict[Verdict, list[int]] = {}
    for g, e in rows:
        if e.verdict not in RUNS or not head:
            groups.setdefault(e.verdict, []).append(round(g.memory_bytes / GIB))
    parts = [
        t(lang, "variants.group", sizes="/".join(str(m) for m in ms) + " GB", verdict=verdict_label(v, lang))
        for v, ms in groups.items()
    ]
    return " ".join([head, "; ".join(parts)]).strip()


def _sizes(rows: list[tuple[GpuSpec, FitEstimate]], lang: Lang) -> str:
    return "/".join(str(round(g.memory_bytes / GIB)) for g, _ in rows) + " GB"
