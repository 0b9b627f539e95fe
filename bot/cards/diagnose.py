"""The diagnosis card: what a pasted command places on each GPU and in RAM, the speed, what to change.

Every number comes from ``core.diagnose.command``; every word from ``locales`` (``diagnose.*``). Each memory
row shows its parts (weights + KV cache + buffers), which add up to the row's total.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.cards.log import log_findings, log_rows
from bot.cards.parts import footer, with_notes
from bot.reply import CodeBlock, Reply, Row, Section, Tone, setup_label
from core.diagnose.command import Diagnosis, FlagChange, Outcome
from core.diagnose.log import LogFacts
from core.diagnose.place import DeviceLoad
from core.fit import Verdict
from core.models import Catalog, Lang
from core.notes import Note, NoteValue
from locales import context_label, gib, integer, num, t, tokens_per_s

TONES = {Verdict.FITS: Tone.GOOD, Verdict.TIGHT: Tone.WARN, Verdict.OFFLOAD: Tone.WARN, Verdict.NO_FIT: Tone.BAD}
_CONTEXT_VALUES = frozenset({"value", "max", "asked"})


def dx_text(code: str, values: dict[str, NoteValue], lang: Lang) -> str:
    """One diagnosis note (problem or assumption) in ``lang``: contexts as "32K", shares as percent."""
    shown: dict[str, str] = {}
    for key, value in values.items():
        if key in _CONTEXT_VALUES and isinstance(value, int) and value >= 1024:
            shown[key] = context_label(value)
        elif key == "share" and isinstance(value, float):
            shown[key] = f"{num(100 * value, lang, 0)} %"
        elif isinstance(value, int):
            shown[key] = integer(value, lang)
        else:
            shown[key] = str(value)
    return t(lang, f"diagnose.note.{code}", **shown)


def failure_card(lang: Lang, reason: str, **values: object) -> Reply:
    """A paste that cannot be read: what was wrong and what to paste instead."""
    return Reply(
        kind="diagnose",
        locale=lang,
        title=t(lang, "diagnose.fail_title"),
        tone=Tone.INFO,
        summary=t(lang, f"diagnose.fail.{reason}", **values) + "\n" + t(lang, "diagnose.fail.hint"),
    )


def _device_row(d: DeviceLoad, lang: Lang) -> Row:
    label = t(lang, "diagnose.ram") if d.name == "RAM" else t(lang, "diagnose.gpu", n=d.name.split()[-1])
    if d.name != "RAM" and d.layers:
        label = t(lang, "diagnose.gpu_layers", gpu=label, layers=d.layers)
    value = t(
        lang,
        "diagnose.row",
        total=gib(d.total_bytes, lang),
        usable=gib(d.usable_bytes, lang),
        weights=gib(d.weights_bytes, lang),
        kv=gib(d.kv_bytes, lang),
        buffers=gib(d.overhead_bytes, lang),
    )
    if d.spare_bytes < 0 and d.usable_bytes:
        value += " · " + t(lang, "diagnose.over", short=gib(-d.spare_bytes, lang))
    return Row(label=label, value=value)


def _rows(outcome: Outcome, lang: Lang) -> tuple[Row, ...]:
    # system RAM only where something is placed there: a card never shows RAM the paste did not use or state
    rows = [_device_row(d, lang) for d in outcome.devices if d.name != "RAM" or d.total_bytes]
    if outcome.kv_tokens is not None:
        rows.append(
            Row(
                label=t(lang, "diagnose.kv_room"),
                value=t(lang, "diagnose.kv_tokens", tokens=integer(outcome.kv_tokens, lang)),
            )
        )
    return tuple(rows)


def _speed_rows(outcome: Outcome, lang: Lang) -> tuple[Row, ...]:
    if outcome.speed is None:
        return (Row(label=t(lang, "row.decode"), value=t(lang, "diagnose.no_speed")),)
    s = outcome.speed
    return (
        Row(label=t(lang, "row.decode"), value=tokens_per_s(s.decode_tokens_per_s, lang)),
        Row(
            label=t(lang, "row.prefill"),
            value=t(
                lang,
                "value.prefill",
                rate=tokens_per_s(s.prefill_tokens_per_s, lang),
                seconds=num(s.ttft_s, lang, 1),
                prompt=context_label(s.prompt_tokens),
            ),
        ),
    )


def _change_rows(changes: Iterable[FlagChange], lang: Lang) -> tuple[Row, ...]:
    rows = []
    for c in changes:
        flag = c.flag if c.value is None else f"{c.flag} {c.value}"
        what = t(lang, "diagnose.remove", flag=c.flag) if c.value is None and c.reason != "renamed" else flag
        rows.append(Row(label=what, value=t(lang, f"diagnose.reason.{c.reason}")))
    return tuple(rows)


def _summary(d: Diagnosis, lang: Lang) -> str:
    o = d.outcome
    gpus = [x for x in o.devices if x.name != "RAM"]
    ram = o.devices[-1]
    if o.verdict is Verdict.NO_FIT and o.kv_tokens is not None and any(p.code == "vllm_kv_short" for p in d.problems):
        line = t(lang, "diagnose.verdict.kv_short", tokens=integer(o.kv_tokens, lang), context=context_label(o.context))
    elif o.verdict is Verdict.NO_FIT:
        worst = min(o.devices, key=lambda x: x.spare_bytes if x.usable_bytes else 0)
        line = t(
            lang, "diagnose.verdict.no_fit", devices=", ".join(o.over), short=gib(max(-worst.spare_bytes, 0), lang)
        )
    elif o.verdict is Verdict.OFFLOAD:
        line = t(lang, "diagnose.verdict.offload", ram=gib(ram.weights_bytes + ram.kv_bytes, lang))
    else:
        spare = min(x.spare_bytes for x in gpus) if gpus else 0
        line = t(lang, f"diagnose.verdict.{o.verdict.value}", spare=gib(spare, lang))
    if d.changes:
        line += " " + t(lang, "diagnose.change_line", n=len(d.changes))
    elif o.verdict is Verdict.OFFLOAD:
        line += " " + t(lang, "diagnose.offload_no_fix")
    elif o.verdict is not Verdict.NO_FIT and not d.problems:
        line += " " + t(lang, "diagnose.nothing_to_change")
    return line


def diagnosis_card(
    d: Diagnosis, facts: LogFacts | None, catalog: Catalog, lang: Lang, notes: list[Note], echo: str = ""
) -> Reply:
    """The card for one diagnosis, with the corrected command and the placement it gives."""
    hardware = setup_label(d.gpu_name, d.gpu_count)
    config = t(
        lang,
        "diagnose.config",
        engine=d.engine,
        quant=d.quant,
        context=context_label(d.context),
        k=d.cache_k,
        v=d.cache_v,
    )
    sections = [Section(title=t(lang, "diagnose.placement"), rows=_rows(d.outcome, lang))]
    sections.append(Section(title=t(lang, "section.speed"), rows=_speed_rows(d.outcome, lang)))
    problems = [dx_text(p.code, p.values, lang) for p in d.problems]
    if facts is not None and facts.out_of_memory and not d.outcome.over:
        problems.append(t(lang, "diagnose.note.log_oom_unexpected"))
    if problems:
        rows = tuple(Row(label="⚠", value=text) for text in problems)
        sections.append(Section(title=t(lang, "diagnose.problems"), rows=rows))
    if d.changes:
        sections.append(Section(title=t(lang, "diagnose.changes"), rows=_change_rows(d.changes, lang)))
    if d.fixed is not None:
        rows = (*_rows(d.fixed, lang), *_speed_rows(d.fixed, lang))
        sections.append(Section(title=t(lang, "diagnose.with_change"), rows=rows))
    if facts is not None and (rows := log_rows(facts, lang)):
        findings = tuple(Row(label="⚠", value=f) for f in log_findings(facts, lang))
        sections.append(Section(title=t(lang, "diagnose.log"), rows=(*rows, *findings)))
    if d.unknown_flags:
        unknown = ", ".join(d.unknown_flags[:20])
        sections.append(
            Section(
                title=t(lang, "diagnose.unknown"),
                rows=(Row(label="?", value=t(lang, "diagnose.unknown_line", flags=unknown)),),
            )
        )
    code = (CodeBlock(label=t(lang, "diagnose.corrected"), text="\n".join(d.corrected)),) if d.corrected else ()
    own = [n for n in notes if n.code.startswith("dx_")]
    resolved = [n for n in notes if not n.code.startswith("dx_")]
    assumed = [dx_text(a.code, dict(a.values), lang) for a in d.assumptions]
    assumed += [dx_text(n.code.removeprefix("dx_"), dict(n.values), lang) for n in own]
    reply = Reply(
        kind="diagnose",
        locale=lang,
        title=t(lang, "diagnose.title", model=d.model_name, gpu=hardware),
        tone=TONES[d.outcome.verdict],
        summary=f"{config}\n{_summary(d, lang)}",
        sections=tuple(sections),
        code=code,
        assumptions=f"{t(lang, 'assumptions.prefix')}: " + "; ".join(assumed) if assumed else "",
        footer=footer(catalog, lang),
        echo=echo,
    )
    return with_notes(reply, resolved, lang)


__all__ = ["diagnosis_card", "dx_text", "failure_card"]
