"""The words of the card across the memory variants of a bare device name (``bot.answers.variants``)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.parts import verdict_label
from bot.reply import Action, Reply, Subject, Table, Tone
from core.estimate import FitEstimate
from core.fit import Verdict
from core.models import GIB, GpuSpec, Lang, ModelSpec
from locales import t, tokens_per_s

RUNS = (Verdict.FITS, Verdict.TIGHT)


def _label(gpu: GpuSpec, rows: Sequence[tuple[GpuSpec, FitEstimate]]) -> str:
    """ "64 GB"; the device's name where two rows have that size."""
    size = round(gpu.memory_bytes / GIB)
    return gpu.short_name if sum(round(g.memory_bytes / GIB) == size for g, _ in rows) > 1 else f"{size} GB"


def span_reply(
    model: ModelSpec,
    chip: str,
    rows: Sequence[tuple[GpuSpec, FitEstimate]],
    queries: Sequence[str],
    subjects: tuple[Subject, ...],
    lang: Lang,
    echo: str,
) -> Reply:
    """The verdict for every memory size of the chip the user named ``chip``, summarised in one line; a button per
    size asks ``queries`` (one per row)."""
    summary = " ".join([t(lang, "variants.assumed", text=chip, sizes=_sizes(rows, lang)), _headline(rows, lang)])
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
        title=t(lang, "variants.title", model=model.name, chip=chip),
        tone=tone,
        summary=summary,
        table=table,
        actions=tuple(Action(label=_label(g, rows), query=query) for (g, _), query in zip(rows, queries, strict=True)),
        echo=echo,
        subjects=subjects,
    )


def _headline(rows: Sequence[tuple[GpuSpec, FitEstimate]], lang: Lang) -> str:
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


def _sizes(rows: Sequence[tuple[GpuSpec, FitEstimate]], lang: Lang) -> str:
    return "/".join(str(round(g.memory_bytes / GIB)) for g, _ in rows) + " GB"
