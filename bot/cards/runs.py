"""The card of a pasted benchmark run (issue 38): what was read, measured against FitBot's estimate, what
was not used and why, and what is kept: the factors the user's answers on that device are scaled by."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bot.reply import Reply, Section, Table, Tone
from bot.reply import Row as Line
from core.models import Lang
from core.speed.device import BACKEND_LABELS
from locales import num, t, tokens_per_s

if TYPE_CHECKING:
    from bot.answers.runs import RunsRead
    from core.runs.calibrate import Calibration

Outcome = Literal["kept", "not_saved", "flood", "storage_error"]


def runs_card(
    read: RunsRead,
    lang: Lang,
    outcome: Outcome,
    calibration: Calibration | None = None,
    flood_count: int = 0,
    limit: int = 0,
    shared: bool = False,
) -> Reply:
    """``outcome`` says what became of the kept runs; ``calibration`` is the user's on that device after them."""
    title = t(lang, "runs.title")
    if read.problem is not None:
        message = t(lang, f"runs.{read.problem}", limit=limit)
        return Reply(kind="runs", locale=lang, title=title, tone=Tone.WARN, summary=f"{message} {_none_kept(lang)}")
    setup = read.setup
    assert setup is not None
    lines = [_read_line(read, lang)]
    lines += [t(lang, f"runs.{key}", **values) for key, values in read.assumed]
    table = None
    if read.kept:
        rows = tuple(
            (r.test, tokens_per_s(r.measured, lang), tokens_per_s(r.estimated, lang), f"×{num(r.factor, lang)}")
            for r in read.kept
        )
        headers = tuple(t(lang, f"runs.col_{c}") for c in ("test", "measured", "estimated", "factor"))
        table = Table(title=t(lang, "runs.table_title"), headers=headers, rows=rows)
    sections: tuple[Section, ...] = ()
    if read.rejected:
        reasons = tuple(Line(label="", value=t(lang, f"runs.{key}", **_rates(v, lang))) for key, v in read.rejected)
        sections = (Section(title=t(lang, "runs.rejected_title"), rows=reasons),)
    lines.append(_outcome(read, lang, outcome, calibration, flood_count))
    if shared:
        lines.append(t(lang, "runs.shared"))
    kept = outcome == "kept" and bool(read.kept)
    return Reply(
        kind="runs",
        locale=lang,
        title=title,
        tone=Tone.GOOD if kept else Tone.WARN,
        summary="\n".join(lines),
        table=table,
        sections=sections,
    )


def _read_line(read: RunsRead, lang: Lang) -> str:
    setup = read.setup
    assert setup is not None
    backend = BACKEND_LABELS[setup.backend or setup.gpu.backend]
    device = setup.gpu.short_name if setup.gpu_count == 1 else f"{setup.gpu_count}× {setup.gpu.short_name}"
    build = t(lang, "runs.build", build=read.build) if read.build else ""
    return t(
        lang,
        "runs.read",
        source=read.source,
        model=setup.model.name,
        quant=setup.quant,
        device=device,
        backend=backend,
        build=build,
    )


def _outcome(read: RunsRead, lang: Lang, outcome: Outcome, calibration: Calibration | None, flood_count: int) -> str:
    if not read.kept:
        return _none_kept(lang)
    if outcome == "flood":
        return t(lang, "runs.flood", count=flood_count)
    if outcome != "kept" or calibration is None or read.setup is None:
        return t(lang, f"runs.{outcome if outcome != 'kept' else 'not_saved'}")
    setup = read.setup
    text = t(
        lang,
        "runs.kept",
        device=setup.gpu.short_name,
        backend=_backend(calibration.backend),
        decode=_factor(calibration.decode, lang),
        prefill=_factor(calibration.prefill_for(0.0), lang),  # a short prompt's: its GEMMs
        quant=setup.quant,
    )
    if calibration.runs > len(read.kept):
        text += " " + t(lang, "runs.kept_more", runs=calibration.runs)
    return text


def _rates(values: dict[str, str | float], lang: Lang) -> dict[str, str]:
    """A reason's values for its sentence: tokens/s the locale's way."""
    return {k: v if isinstance(v, str) else tokens_per_s(v, lang) for k, v in values.items()}


def _backend(value: str) -> str:
    """A stored backend ("cuda") as cards name it ("CUDA")."""
    known = {b.value: label for b, label in BACKEND_LABELS.items()}
    return known.get(value, value)


def _factor(value: float | None, lang: Lang) -> str:
    return num(value if value is not None else 1.0, lang)


def _none_kept(lang: Lang) -> str:
    return t(lang, "runs.none_kept")


def mine_section(rows: list[tuple[str, str, str, str, str, str, float, float]], lang: Lang) -> Section | None:
    """/mygpu's list of the user's runs: (date, device, backend, model, quant, test, measured, factor)."""
    if not rows:
        return None
    lines = tuple(
        Line(
            label="",
            value=t(
                lang,
                "runs.mine_row",
                date=date,
                device=device,
                backend=_backend(backend),
                model=model,
                quant=quant,
                test=test,
                measured=tokens_per_s(measured, lang),
                factor=num(factor, lang),
            ),
        )
        for date, device, backend, model, quant, test, measured, factor in rows
    )
    return Section(title=t(lang, "runs.mine_title"), rows=lines)
