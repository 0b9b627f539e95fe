"""Builds localized ``Reply`` cards from estimates. Every number here comes from ``core``.

One function per card; each takes computed results and a language and returns a ``Reply``.
Formatting goes through ``locales`` only, so German cards read ``204,19 GiB``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.reply import Action, ChartSpec, CodeBlock, Reply, Row, Section, Series, Table, Tone
from core.estimate import FitEstimate
from core.fit import Verdict
from core.models import Catalog
from locales import Lang, context_label, gib, integer, num, t, tokens_per_s

VERDICT_TONE = {Verdict.FITS: Tone.GOOD, Verdict.TIGHT: Tone.WARN, Verdict.OFFLOAD: Tone.WARN, Verdict.NO_FIT: Tone.BAD}
VERDICT_EMOJI = {Verdict.FITS: "🟢", Verdict.TIGHT: "🟡", Verdict.OFFLOAD: "🟠", Verdict.NO_FIT: "🔴"}


def hardware_label(est: FitEstimate) -> str:
    hw = est.hardware
    return f"{hw.count}x {hw.gpu_name}" if hw.count > 1 else hw.gpu_name


def verdict_label(verdict: Verdict, lang: Lang) -> str:
    return f"{VERDICT_EMOJI[verdict]} {t(lang, f'verdict.{verdict.value}')}"


def verdict_line(est: FitEstimate, lang: Lang) -> str:
    mem = est.memory
    share = f"{num(100 * mem.total_bytes / mem.usable_bytes, lang, 0)} %" if mem.usable_bytes else "–"
    return t(
        lang, f"verdict.line.{est.verdict.value}",
        reserve=gib(max(mem.reserve_bytes, 0), lang), share=share,
        in_ram=gib(est.offload.bytes_in_ram, lang), short=gib(max(-mem.reserve_bytes, 0), lang),
    )


def memory_section(est: FitEstimate, lang: Lang) -> Section:
    mem = est.memory
    weights_key = "value.weights_measured" if mem.weights_measured else "value.weights_estimated"
    rows = [
        Row(label=t(lang, "row.weights"), value=t(lang, weights_key, bytes=gib(mem.weights_bytes, lang))),
    ]
    if mem.host_weights_bytes:
        rows.append(Row(label=t(lang, "row.weights_in_ram"), value=gib(mem.host_weights_bytes, lang)))
    rows += [
        Row(label=t(lang, "row.kv"), value=gib(mem.kv_cache_bytes, lang)),
        Row(label=t(lang, "row.overhead"), value=gib(mem.overhead_bytes, lang)),
        Row(label=t(lang, "row.total"), value=gib(mem.total_bytes, lang)),
        Row(label=t(lang, "row.usable"), value=gib(mem.usable_bytes, lang)),
        Row(label=t(lang, "row.reserve"), value=("+" if mem.reserve_bytes >= 0 else "") + gib(mem.reserve_bytes, lang)),
    ]
    off = est.offload
    if off.mode == "experts":
        rows.append(Row(label=t(lang, "row.offload_experts"), value=t(
            lang, "value.offload_experts", n=off.cpu_moe_layers, total=off.layers_total, bytes=gib(off.bytes_in_ram, lang))))
    elif off.mode == "layers":
        rows.append(Row(label=t(lang, "row.offload_layers"), value=t(
            lang, "value.offload_layers", n=off.layers_on_gpu, total=off.layers_total, bytes=gib(off.bytes_in_ram, lang))))
    rows.append(Row(label=t(lang, "row.max_context"), value=t(lang, "value.tokens", n=integer(est.max_context, lang))))
    return Section(title=t(lang, "section.memory"), rows=tuple(rows))


def assumptions_line(est: FitEstimate, lang: Lang) -> str:
    return f"{t(lang, 'assumptions.prefix')}: " + "; ".join(est.assumptions)


def footer(catalog: Catalog, lang: Lang) -> str:
    return t(lang, "footer.catalog", version=catalog.version[:8] or "dev", date=catalog.built_at[:10] or "–")


def fit_actions(est: FitEstimate, base: str, lang: Lang) -> tuple[Action, ...]:
    """Follow-up buttons; each is a complete question the service can answer again."""
    actions: list[Action] = []
    for ctx in (32768, 131072):
        if ctx != est.context and ctx <= est.model.max_context:
            label = context_label(ctx)
            actions.append(Action(label=t(lang, "action.ctx", label=label), query=f"/fit {base} {label.lower()}"))
    if est.quant != "Q8_0":
        actions.append(Action(label=t(lang, "action.quant", quant="Q8_0"), query=f"/fit {base} q8_0 {est.context}"))
    if est.kv_cache.value in ("f16", "bf16"):
        kv = "q8_0" if est.engine.value == "llama.cpp" else "fp8"
        actions.append(Action(label=t(lang, "action.kv", kv=kv), query=f"/fit {base} kv {kv} {est.context}"))
    actions.append(Action(label=t(lang, "action.quants"), query=f"/quant {base}"))
    actions.append(Action(label=t(lang, "action.cloud"), query=f"/cloud {est.model.id}"))
    actions.append(Action(label=t(lang, "action.finetune"), query=f"/finetune {base}"))
    actions.append(Action(label=t(lang, "action.gpus"), query=f"/gpus {est.model.id}"))
    return tuple(actions[:8])


def fit_card(est: FitEstimate, catalog: Catalog, lang: Lang, extra: Sequence[Section] = (),
             code: Sequence[CodeBlock] = (), chart: ChartSpec | None = None, echo: str = "") -> Reply:
    """The main card: verdict, memory breakdown, and whatever speed/cost/advice sections exist."""
    base = f"{est.model.id} {est.hardware.count}x {est.hardware.gpu}" if est.hardware.count > 1 else \
        f"{est.model.id} {est.hardware.gpu}"
    config = t(lang, "fit.config", quant=est.quant, context=context_label(est.context), kv=est.kv_cache.value,
               engine=est.engine.value)
    return Reply(
        kind="fit", locale=lang,
        title=t(lang, "fit.title", model=est.model.name, gpu=hardware_label(est)),
        tone=VERDICT_TONE[est.verdict],
        summary=f"{verdict_label(est.verdict, lang)} · {config}\n{verdict_line(est, lang)}",
        sections=(memory_section(est, lang), *extra),
        code=tuple(code), chart=chart,
        actions=fit_actions(est, base, lang),
        assumptions=assumptions_line(est, lang), footer=footer(catalog, lang), echo=echo,
    )


def memory_chart(model_name: str, usable_bytes: int, curves: Sequence[tuple[str, Sequence[tuple[int, int]]]],
                 lang: Lang) -> ChartSpec:
    """Memory vs context per quant against the device's usable memory line."""
    return ChartSpec(
        kind="memory_vs_context", title=model_name, x_label=t(lang, "chart.context"), y_label="GiB",
        series=tuple(Series(name=name, points=tuple((float(c), b / (1 << 30)) for c, b in pts)) for name, pts in curves),
        limit=usable_bytes / (1 << 30), limit_label=t(lang, "row.usable"),
    )


def table_card(kind: str, title: str, headers: str, rows: Sequence[Sequence[str]], catalog: Catalog, lang: Lang,
               summary: str = "", assumptions: str = "", actions: Sequence[Action] = (),
               chart: ChartSpec | None = None) -> Reply:
    return Reply(
        kind=kind, locale=lang, title=title, tone=Tone.INFO, summary=summary,
        table=Table(headers=tuple(headers.split("|")), rows=tuple(tuple(r) for r in rows)),
        assumptions=assumptions, footer=footer(catalog, lang), actions=tuple(actions), chart=chart,
    )


def help_card(lang: Lang) -> Reply:
    commands = Section(title=t(lang, "help.commands"), rows=tuple(
        Row(label=f"/{name}", value=t(lang, f"help.{name}"))
        for name in ("fit", "speed", "cloud", "quant", "gpus", "models", "finetune", "tco", "compare")
    ))
    examples = tuple(t(lang, f"help.example{i}") for i in (1, 2, 3))
    return Reply(
        kind="help", locale=lang, title=t(lang, "help.title"), summary=t(lang, "help.summary"),
        sections=(commands,), actions=tuple(Action(label=e, query=e) for e in examples),
    )


def ask_card(lang: Lang, message: str, suggestions: Sequence[str] = (), queries: Sequence[str] = (),
             echo: str = "") -> Reply:
    """Asks back: something is missing or unknown; suggestions become buttons."""
    body = message + (f"\n{t(lang, 'ask.did_you_mean')}" if suggestions else "")
    return Reply(
        kind="suggest", locale=lang, title=t(lang, "ask.title"), tone=Tone.INFO, summary=body,
        suggestions=tuple(suggestions[:3]),
        actions=tuple(Action(label=s, query=q) for s, q in zip(suggestions[:3], queries[:3], strict=False)),
        echo=echo,
    )


def error_card(lang: Lang, message: str) -> Reply:
    return Reply(kind="error", locale=lang, title=t(lang, "error.title"), tone=Tone.BAD, summary=message)
