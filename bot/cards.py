"""Builds localized ``Reply`` cards from estimates. Every number here comes from ``core``.

One function per card; each takes computed results and a language and returns a ``Reply``.
Formatting goes through ``locales`` only, so German cards read ``204,19 GiB``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.reply import Action, ChartSpec, CodeBlock, Reply, Row, Section, Series, Table, Tone
from core.analysis import Advice, Cost
from core.estimate import FitEstimate
from core.finetune import FinetuneEstimate, TrainingFit
from core.fit import Verdict
from core.models import Catalog
from locales import Lang, context_label, gib, integer, num, t, tokens_per_s, usd

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
        lang,
        f"verdict.line.{est.verdict.value}",
        reserve=gib(max(mem.reserve_bytes, 0), lang),
        share=share,
        in_ram=gib(est.offload.bytes_in_ram, lang),
        short=gib(max(-mem.reserve_bytes, 0), lang),
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
        rows.append(
            Row(
                label=t(lang, "row.offload_experts"),
                value=t(
                    lang,
                    "value.offload_experts",
                    n=off.cpu_moe_layers,
                    total=off.layers_total,
                    bytes=gib(off.bytes_in_ram, lang),
                ),
            )
        )
    elif off.mode == "layers":
        rows.append(
            Row(
                label=t(lang, "row.offload_layers"),
                value=t(
                    lang,
                    "value.offload_layers",
                    n=off.layers_on_gpu,
                    total=off.layers_total,
                    bytes=gib(off.bytes_in_ram, lang),
                ),
            )
        )
    max_ctx = t(lang, "value.tokens", n=integer(est.max_context, lang)) if est.max_context else "–"
    rows.append(Row(label=t(lang, "row.max_context"), value=max_ctx))
    return Section(title=t(lang, "section.memory"), rows=tuple(rows))


def assumptions_line(est: FitEstimate, lang: Lang) -> str:
    """The defaults and modelling choices behind the card, in one localized line."""
    values = {
        "engine": est.engine.value,
        "quant": est.quant,
        "context": context_label(est.context),
        "kv_cache": est.kv_cache.value,
        "ram": f"{num(est.hardware.system_ram_bytes / 1e9, lang, 0)} GB",
    }
    parts = [t(lang, f"assumptions.{name}", value=values[name]) for name in est.defaults_used if name in values]
    if est.hardware.unified_memory:
        share = est.memory.usable_bytes / max(est.hardware.memory_bytes, 1)
        parts.append(t(lang, "assumptions.unified", share=f"{num(100 * share, lang, 0)} %"))
    elif est.memory.host_weights_bytes:
        parts.append(t(lang, "assumptions.embedding"))
    if est.hardware.count > 1:
        parts.append(t(lang, "assumptions.split" if est.engine.value == "llama.cpp" else "assumptions.tensor_parallel"))
    return f"{t(lang, 'assumptions.prefix')}: " + "; ".join(parts)


def footer(catalog: Catalog, lang: Lang) -> str:
    return t(lang, "footer.catalog", version=catalog.version[:8] or "dev", date=catalog.built_at[:10] or "–")


def follow_up(est: FitEstimate, command: str, *, with_gpu: bool = True, **changes: str | None) -> str:
    """A question that repeats this card's settings, with some of them changed.

    Only what the asker set (or a button changed) is written, so defaults stay defaults; the
    context is always written as ``ctx N`` because a bare number may read as something else.
    """
    hw = est.hardware
    parts: dict[str, str | None] = {
        "gpu": (f"{hw.count}x {hw.gpu}" if hw.count > 1 else hw.gpu) if with_gpu else None,
        "quant": None if "quant" in est.defaults_used else est.quant.lower(),
        "ctx": f"ctx {context_label(est.context).lower()}",
        "kv": None if "kv_cache" in est.defaults_used else f"kv {est.kv_cache.value}",
        "engine": None if "engine" in est.defaults_used else est.engine.value,
        "ram": None if "ram" in est.defaults_used else f"ram {round(hw.system_ram_bytes / 1e9)}gb",
        "users": f"{est.concurrent} users" if est.concurrent > 1 else None,
    }
    parts.update(changes)
    return " ".join([f"/{command}", est.model.id, *(v for v in parts.values() if v)])


def fit_actions(est: FitEstimate, lang: Lang) -> tuple[Action, ...]:
    """Follow-up buttons; each is a complete question the service can answer again."""
    actions: list[Action] = []
    for ctx in (32768, 131072):
        if ctx != est.context and ctx <= est.model.max_context:
            label = context_label(ctx)
            actions.append(
                Action(
                    label=t(lang, "action.ctx", label=label), query=follow_up(est, "fit", ctx=f"ctx {label.lower()}")
                )
            )
    if est.quant != "Q8_0" and est.engine.value == "llama.cpp":
        actions.append(Action(label=t(lang, "action.quant", quant="Q8_0"), query=follow_up(est, "fit", quant="q8_0")))
    if est.kv_cache.value in ("f16", "bf16"):
        kv = "q8_0" if est.engine.value == "llama.cpp" else "fp8"
        actions.append(Action(label=t(lang, "action.kv", kv=kv), query=follow_up(est, "fit", kv=f"kv {kv}")))
    if est.verdict is not Verdict.NO_FIT:
        actions.append(Action(label=t(lang, "action.feel"), query=follow_up(est, "feel")))
    actions.append(Action(label=t(lang, "action.quants"), query=follow_up(est, "quant", quant=None)))
    actions.append(Action(label=t(lang, "action.cloud"), query=follow_up(est, "cloud", with_gpu=False, users=None)))
    actions.append(Action(label=t(lang, "action.finetune"), query=f"/finetune {est.model.id} {est.hardware.gpu}"))
    actions.append(Action(label=t(lang, "action.gpus"), query=follow_up(est, "gpus", with_gpu=False, users=None)))
    return tuple(actions[:9])


def fit_card(
    est: FitEstimate,
    catalog: Catalog,
    lang: Lang,
    extra: Sequence[Section] = (),
    code: Sequence[CodeBlock] = (),
    chart: ChartSpec | None = None,
    echo: str = "",
) -> Reply:
    """The main card: verdict, memory breakdown, and whatever speed/cost/advice sections exist."""
    config = t(
        lang,
        "fit.config",
        quant=est.quant,
        context=context_label(est.context),
        kv=est.kv_cache.value,
        engine=est.engine.value,
    )
    return Reply(
        kind="fit",
        locale=lang,
        title=t(lang, "fit.title", model=est.model.name, gpu=hardware_label(est)),
        tone=VERDICT_TONE[est.verdict],
        summary=f"{verdict_label(est.verdict, lang)} · {config}\n{verdict_line(est, lang)}",
        sections=(memory_section(est, lang), *extra),
        code=tuple(code),
        chart=chart,
        actions=fit_actions(est, lang),
        assumptions=assumptions_line(est, lang),
        footer=footer(catalog, lang),
        echo=echo,
    )


def memory_chart(
    model_name: str, usable_bytes: int, curves: Sequence[tuple[str, Sequence[tuple[int, int]]]], lang: Lang
) -> ChartSpec:
    """Memory vs context per quant against the device's usable memory line."""
    return ChartSpec(
        kind="memory_vs_context",
        title=model_name,
        x_label=t(lang, "chart.context"),
        y_label="GiB",
        series=tuple(
            Series(name=name, points=tuple((float(c), b / (1 << 30)) for c, b in pts)) for name, pts in curves
        ),
        limit=usable_bytes / (1 << 30),
        limit_label=t(lang, "row.usable"),
    )


def table_card(
    kind: str,
    title: str,
    headers: str,
    rows: Sequence[Sequence[str]],
    catalog: Catalog,
    lang: Lang,
    summary: str = "",
    assumptions: str = "",
    actions: Sequence[Action] = (),
    chart: ChartSpec | None = None,
) -> Reply:
    return Reply(
        kind=kind,
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=summary,
        table=Table(headers=tuple(headers.split("|")), rows=tuple(tuple(r) for r in rows)),
        assumptions=assumptions,
        footer=footer(catalog, lang),
        actions=tuple(actions),
        chart=chart,
    )


def help_card(lang: Lang) -> Reply:
    commands = Section(
        title=t(lang, "help.commands"),
        rows=tuple(
            Row(label=f"/{name}", value=t(lang, f"help.{name}"))
            for name in ("fit", "speed", "cloud", "quant", "gpus", "models", "finetune", "tco", "compare")
        ),
    )
    examples = tuple(t(lang, f"help.example{i}") for i in (1, 2, 3))
    return Reply(
        kind="help",
        locale=lang,
        title=t(lang, "help.title"),
        summary=t(lang, "help.summary"),
        sections=(commands,),
        actions=tuple(Action(label=e, query=e) for e in examples),
    )


def ask_card(
    lang: Lang, message: str, suggestions: Sequence[str] = (), queries: Sequence[str] = (), echo: str = ""
) -> Reply:
    """Asks back: something is missing or unknown; suggestions become buttons."""
    return Reply(
        kind="suggest",
        locale=lang,
        title=t(lang, "ask.title"),
        tone=Tone.INFO,
        summary=message,
        suggestions=tuple(suggestions[:4]),
        actions=tuple(Action(label=s, query=q) for s, q in zip(suggestions[:4], queries[:4], strict=False)),
        echo=echo,
    )


def error_card(lang: Lang, message: str, kind: str = "error") -> Reply:
    return Reply(kind=kind, locale=lang, title=t(lang, "error.title"), tone=Tone.BAD, summary=message)


def slow_down_card(lang: Lang, seconds: int) -> Reply:
    return Reply(
        kind="slow_down",
        locale=lang,
        title=t(lang, "limits.title"),
        tone=Tone.WARN,
        summary=t(lang, "limits.slow_down", seconds=seconds),
    )


def info_card(lang: Lang, title: str, message: str) -> Reply:
    return Reply(kind="settings", locale=lang, title=title, tone=Tone.GOOD, summary=message)


def settings_card(lang: Lang, values: dict[str, str]) -> Reply:
    rows = tuple(Row(label=k, value=v) for k, v in values.items())
    return Reply(
        kind="settings",
        locale=lang,
        title=t(lang, "prefs.title"),
        summary=t(lang, "prefs.howto"),
        sections=(Section(title=t(lang, "prefs.title"), rows=rows),),
    )


# --- speed, advice and cost sections of the fit card ------------------------------------------


def speed_section(est: FitEstimate, lang: Lang) -> Section:
    sp = est.speed
    low, high = sp.decode_range
    rows = [
        Row(
            label=t(lang, "row.decode"),
            value=t(
                lang,
                "value.range",
                value=tokens_per_s(sp.decode_tokens_per_s, lang),
                low=num(low, lang, 0),
                high=num(high, lang, 0),
            ),
        ),
        Row(
            label=t(lang, "row.decode_at_ctx", context=context_label(est.context)),
            value=tokens_per_s(sp.decode_tokens_per_s_at_context, lang),
        ),
        Row(label=t(lang, "row.prefill"), value=tokens_per_s(sp.prefill_tokens_per_s, lang)),
        Row(
            label=t(lang, "row.ttft"),
            value=t(lang, "value.ttft", seconds=num(sp.ttft_s, lang, 2), prompt=integer(sp.prompt_tokens, lang)),
        ),
    ]
    if sp.concurrency is not None and est.concurrent > 1:
        c = sp.concurrency
        rows.append(
            Row(
                label=t(lang, "row.users", users=c.users),
                value=t(
                    lang,
                    "value.users",
                    aggregate=tokens_per_s(c.aggregate_tokens_per_s, lang),
                    per_user=tokens_per_s(c.per_user_tokens_per_s, lang),
                    fit=integer(c.sequences_fit, lang),
                ),
            )
        )
    if sp.confidence == "rough":
        rows.append(Row(label="⚠", value=t(lang, "value.rough")))
    return Section(title=t(lang, "section.speed"), rows=tuple(rows))


def advice_section(est: FitEstimate, advice: Advice, lang: Lang) -> Section:
    rows = [
        Row(
            label=t(lang, "row.best_quant"),
            value=f"{advice.best_quant} ({t(lang, f'verdict.{advice.best_quant_verdict.value}')})"
            if advice.best_quant and advice.best_quant_verdict
            else t(lang, "value.none"),
        )
    ]
    for option in advice.kv_options[1:]:
        if option.saved_bytes > 0:
            mark = f" → {t(lang, f'verdict.{option.verdict.value}')}" if option.verdict_changed else ""
            rows.append(
                Row(
                    label=t(lang, "row.kv_tip"),
                    value=t(
                        lang,
                        "value.kv_tip",
                        kv=option.kv_cache.value,
                        saved=gib(option.saved_bytes, lang),
                        total=gib(option.total_bytes, lang),
                    )
                    + mark,
                )
            )
    hw = advice.hardware
    for key, setup in (
        ("best_gpu", hw.best_single_gpu),
        ("best_value", hw.best_price_performance),
        ("best_apple", hw.best_apple),
    ):
        if setup is not None:
            name = f"{setup.count}x {setup.gpu_name}" if setup.count > 1 else setup.gpu_name
            price = f" · ~{usd(setup.price_usd, lang, 0)}" if setup.price_usd else ""
            rows.append(
                Row(
                    label=t(lang, f"row.{key}"),
                    value=f"{name} · {tokens_per_s(setup.decode_tokens_per_s, lang)}{price}",
                )
            )
    return Section(title=t(lang, "section.todo"), rows=tuple(rows))


def cost_section(cost: Cost, lang: Lang) -> Section | None:
    if not cost.offers:
        return None
    q = cost.offers[0]
    rows = [
        Row(
            label=t(lang, "row.cheapest_cloud"),
            value=t(
                lang,
                "value.offer",
                provider=q.offer.provider,
                count=q.offer.gpu_count,
                gpu=q.gpu.short_name,
                price=usd(q.offer.price_per_hour_usd, lang),
                seen=q.seen,
            ),
        )
    ]
    one = usd(q.usd_per_million_tokens, lang)
    rows.append(
        Row(
            label=t(lang, "row.per_mtok"),
            value=t(
                lang, "value.per_mtok", one=one, users=q.users_served, many=usd(q.usd_per_million_tokens_at_users, lang)
            )
            if q.users_served > 1
            else t(lang, "value.per_mtok_one", one=one),
        )
    )
    rvb = cost.rent_vs_buy
    if rvb is not None:
        months = num(rvb.break_even_months, lang, 1) if rvb.break_even_months is not None else "–"
        rows.append(
            Row(
                label=t(lang, "row.break_even"),
                value=t(lang, "value.break_even", months=months, power=usd(rvb.electricity_usd_per_month, lang)),
            )
        )
    return Section(title=t(lang, "section.cost"), rows=tuple(rows))


def command_blocks(advice: Advice) -> tuple[CodeBlock, ...]:
    return tuple(CodeBlock(label=c.engine.value, text=c.shell) for c in advice.commands)


# --- table cards --------------------------------------------------------------------------------


def cloud_card(model_name: str, quant: str, cost: Cost, catalog: Catalog, lang: Lang) -> Reply:
    rows = [
        (
            q.offer.provider,
            f"{q.offer.gpu_count}x {q.gpu.short_name}",
            usd(q.offer.price_per_hour_usd, lang),
            tokens_per_s(q.decode_tokens_per_s, lang),
            usd(q.usd_per_million_tokens, lang),
            usd(q.usd_per_million_tokens_at_users, lang),
            q.offer.billing,
            q.seen,
        )
        for q in cost.offers
    ]
    summary = "" if rows else t(lang, "cloud.none")
    return table_card(
        "cloud",
        t(lang, "cloud.title", model=model_name, quant=quant),
        t(lang, "cloud.headers"),
        rows,
        catalog,
        lang,
        summary=summary,
        assumptions="; ".join(cost.assumptions),
    )


def tco_card(model_name: str, est: FitEstimate, cost: Cost, catalog: Catalog, lang: Lang) -> Reply:
    rvb = cost.rent_vs_buy
    title = t(lang, "tco.title", model=model_name, gpu=hardware_label(est))
    if rvb is None:
        reason = t(lang, "tco.no_price") if cost.offers else t(lang, "cloud.none")
        return Reply(kind="tco", locale=lang, title=title, tone=Tone.INFO, summary=reason, footer=footer(catalog, lang))
    months = (
        t(lang, "tco.months", months=num(rvb.break_even_months, lang, 1))
        if rvb.break_even_months is not None
        else t(lang, "tco.never")
    )
    rows = (
        Row(label=t(lang, "tco.purchase"), value=usd(rvb.purchase_usd, lang, 0)),
        Row(label=t(lang, "tco.power"), value=usd(rvb.electricity_usd_per_month, lang)),
        Row(
            label=t(lang, "tco.cloud"),
            value=t(
                lang,
                "tco.cloud_value",
                provider=rvb.cloud_provider,
                instance=rvb.cloud_instance,
                price=usd(rvb.cloud_usd_per_hour, lang),
                month=usd(rvb.cloud_usd_per_month, lang),
                seen=rvb.cloud_seen,
            ),
        ),
        Row(label=t(lang, "tco.break_even"), value=months),
    )
    if rvb.break_even_months_same_tokens is not None:
        rows += (
            Row(
                label=t(lang, "tco.break_even_tokens"),
                value=t(lang, "tco.months", months=num(rvb.break_even_months_same_tokens, lang, 1)),
            ),
        )
    return Reply(
        kind="tco",
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=verdict_label(est.verdict, lang),
        sections=(Section(title=t(lang, "section.cost"), rows=rows),),
        assumptions="; ".join(rvb.assumptions),
        footer=footer(catalog, lang),
    )


def finetune_card(
    model_name: str,
    gpu_label: str,
    results: Sequence[tuple[FinetuneEstimate, TrainingFit, TrainingFit | None]],
    catalog: Catalog,
    lang: Lang,
) -> Reply:
    """One section per method: breakdown, verdict on the user's GPU, smallest hardware that fits."""
    sections = []
    worst = Tone.GOOD
    for est, mine, smallest in results:
        rows = [
            Row(label=t(lang, "ft.weights"), value=gib(est.base_weights_bytes, lang)),
            Row(label=t(lang, "ft.trainable"), value=_count(est.trainable_params, lang)),
            Row(
                label=t(lang, "ft.grads_opt"),
                value=gib(est.adapter_bytes + est.gradients_bytes + est.optimizer_bytes, lang),
            ),
            Row(label=t(lang, "ft.activations"), value=gib(est.activations_bytes + est.logits_bytes, lang)),
            Row(label=t(lang, "row.total"), value=gib(est.total_bytes, lang)),
            Row(label=gpu_label, value=verdict_label(mine.verdict, lang)),
        ]
        if smallest is not None:
            name = f"{smallest.count}x {smallest.gpu_name}" if smallest.count > 1 else smallest.gpu_name
            rows.append(Row(label=t(lang, "ft.smallest"), value=name))
        if mine.verdict is Verdict.NO_FIT:
            worst = Tone.WARN
        label = {"qlora": "QLoRA (4-bit)", "lora": "LoRA (16-bit)", "full": t(lang, "ft.full")}[est.method]
        sections.append(Section(title=label, rows=tuple(rows)))
    assumptions = results[0][0].assumptions if results else ()
    return Reply(
        kind="finetune",
        locale=lang,
        title=t(lang, "ft.title", model=model_name),
        tone=worst,
        sections=tuple(sections),
        assumptions="; ".join(assumptions),
        footer=footer(catalog, lang),
    )


def _count(n: int, lang: Lang) -> str:
    """Parameter counts as people say them: 41.9 M, 8.03 B."""
    return f"{num(n / 1e9, lang, 2)} B" if n >= 1e9 else f"{num(n / 1e6, lang, 1)} M"


def compare_card(title: str, estimates: Sequence[FitEstimate], catalog: Catalog, lang: Lang) -> Reply:
    rows = [
        (
            e.model.name,
            hardware_label(e),
            e.quant,
            gib(e.memory.total_bytes, lang),
            gib(e.memory.usable_bytes, lang),
            tokens_per_s(e.speed.decode_tokens_per_s, lang),
            tokens_per_s(e.speed.prefill_tokens_per_s, lang),
            verdict_label(e.verdict, lang),
        )
        for e in estimates
    ]
    return table_card(
        "compare",
        title,
        t(lang, "compare.headers"),
        rows,
        catalog,
        lang,
        assumptions=assumptions_line(estimates[0], lang) if estimates else "",
    )
