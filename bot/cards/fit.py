"""The fit card (one phone screen) and its details page, the /speed card and the comparison.

The fit card leads with the verdict and, for a tight, offloaded or no-fit setup, the smallest change
that makes it fit (with its numbers); then memory (GPU and RAM rows that add up), speed, one piece of
advice and the command. A no-fit card shows the speed and the command of that nearest setup, labelled
as such. Everything else is on the details page (a "Details" button that re-asks the same question
with ``details``; Telegram and Discord edit the card in place).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.parts import (
    VERDICT_EMOJI,
    footer,
    hardware_label,
    note_text,
    notes_line,
    percent,
    verdict_label,
)
from bot.commands import FEEL
from bot.reply import Action, ChartSpec, CodeBlock, Reply, Row, Section, Series, Tone, setup_label
from core.advice import Fix, Setup
from core.analysis import Advice, Analysis, Cost
from core.estimate import SPEED_COVERAGE_NOTES, FitEstimate
from core.figures import offer_price
from core.fit import Verdict
from core.models import Catalog, Engine, Lang
from core.notes import UNVERIFIED_CODES, NoteValue, note
from locales import context_label, gib, integer, num, t, tokens_per_s, usd

VERDICT_TONE = {Verdict.FITS: Tone.GOOD, Verdict.TIGHT: Tone.WARN, Verdict.OFFLOAD: Tone.WARN, Verdict.NO_FIT: Tone.BAD}
SLOWER_MARGIN = 0.95  # a recommended setup below 95 % of the user's own speed is marked "slower than yours"
PHONE_BUTTONS = 6  # the first page's buttons: three rows on a phone; the details page has the rest


def follow_up(est: FitEstimate, command: str, *, with_gpu: bool = True, **changes: str | None) -> str:
    """A question that repeats this card's settings, with some of them changed.

    Only what the asker set (or a button changed) is written, so defaults stay defaults; the
    context is always written as ``ctx N`` because a bare number may read as something else.
    """
    hw = est.hardware
    # the backend the asker named ("on vulkan") stays on every button about this device
    asked = hw.backend if with_gpu and any(n.code == "backend" for n in est.notes) else None
    parts: dict[str, str | None] = {
        "gpu": setup_label(hw.gpu, hw.count) if with_gpu else None,
        "quant": None if "quant" in est.defaults_used else est.quant.lower(),
        "ctx": f"ctx {context_label(est.context).lower()}",
        "kv": None if "kv_cache" in est.defaults_used else f"kv {est.kv_cache.value}",
        "engine": None if "engine" in est.defaults_used else est.engine.value,
        "ram": None if "ram" in est.defaults_used else f"ram {round(hw.system_ram_bytes / 1e9)}gb",
        "users": f"{est.concurrent} users" if est.concurrent > 1 else None,
        "backend": f"on {asked.value}" if asked else None,
    }
    parts.update(changes)
    return " ".join([f"/{command}", est.model.id, *(v for v in parts.values() if v)])


def fix_query(est: FitEstimate, fix: Fix) -> str:
    """The question for the setup a fix describes."""
    if fix.kind == "kv":
        return follow_up(est, "fit", kv=f"kv {fix.value}")
    if fix.kind == "context":
        return follow_up(est, "fit", ctx=f"ctx {context_label(int(fix.value)).lower()}")
    if fix.kind == "quant":
        return follow_up(est, "fit", quant=fix.value.lower())
    if fix.kind == "ram":
        return follow_up(est, "fit", ram=f"ram {fix.value}gb")
    return follow_up(est, "fit", gpu=setup_label(est.hardware.gpu, int(fix.value)))


def fix_line(est: FitEstimate, fix: Fix | None, lang: Lang) -> str:
    """ "➜ KV q8_0 → fits, 1.2 GiB spare": the smallest change that makes it fit, with its numbers."""
    if fix is None:
        return ""
    value = context_label(int(fix.value)) if fix.kind == "context" else fix.value
    change = t(lang, f"fix.{fix.kind}", value=value)
    outcome = (
        t(
            lang,
            "fix.outcome_fits",
            verdict=t(lang, f"verdict.{fix.verdict.value}"),
            reserve=gib(fix.reserve_bytes, lang),
        )
        if fix.verdict is not Verdict.OFFLOAD
        else t(lang, "fix.outcome_offload", in_ram=gib(fix.estimate.ram_bytes, lang))
    )
    speed = fix.estimate.speed.decode_tokens_per_s_at_context  # as the speed rows: at its context
    return f"➜ {change} → {outcome} · {tokens_per_s(speed, lang)}"


def verdict_line(est: FitEstimate, lang: Lang) -> str:
    mem = est.memory
    if est.verdict is Verdict.NO_FIT:
        parts = []
        if est.short_gpu_bytes:
            parts.append(t(lang, "short.gpu", bytes=gib(est.short_gpu_bytes, lang)))
        if est.short_ram_bytes:
            parts.append(t(lang, "short.ram", bytes=gib(est.short_ram_bytes, lang)))
        return t(lang, "verdict.line.no_fit", short=" + ".join(parts) or "–")
    share = percent(est.gpu_bytes / mem.usable_bytes, lang) if mem.usable_bytes else "–"
    return t(
        lang,
        f"verdict.line.{est.verdict.value}",
        reserve=gib(max(est.gpu_reserve_bytes, 0), lang),
        share=share,
        in_ram=gib(est.ram_bytes, lang),
    )


def context_warning(est: FitEstimate, lang: Lang) -> str:
    """A visible warning for a context beyond the model's trained maximum (RoPE scaling named if known)."""
    if not est.beyond_trained_context:
        return ""
    rope = est.rope_scaled_max_context
    if rope and est.context <= rope:
        return "⚠ " + note_text(note("context_rope", value=est.context, max=est.model.max_context, rope=rope), lang)
    return "⚠ " + note_text(note("context_over_max", value=est.context, max=est.model.max_context), lang)


def unverified_warning(est: FitEstimate, lang: Lang, short: bool = False) -> str:
    """A visible line when the model row rests on facts nobody checked against a primary source, naming them
    (``short``: the first page's one line, the sentence on the details page)."""
    notes = [n for n in est.notes if n.code in UNVERIFIED_CODES]
    if short:  # at most two field names, and how many more the details page names
        notes = [n.model_copy(update={"code": f"{n.code}_short", "values": _fewer(n.values)}) for n in notes]
    return "\n".join("⚠ " + note_text(n, lang) for n in notes)


def _fewer(values: dict[str, NoteValue], keep: int = 2) -> dict[str, NoteValue]:
    fields = str(values.get("doubts", "")).split(",") if values.get("doubts") else []
    more = f" +{len(fields) - keep}" if len(fields) > keep else ""
    return {**values, "doubts": ",".join(fields[:keep]), "more": more}


def max_context_value(est: FitEstimate, lang: Lang) -> str:
    """Both limits: what fits in GPU memory and what the model was trained for."""
    memory = context_label(est.max_context) if est.max_context else "–"
    return t(lang, "value.max_context", memory=memory, model=context_label(est.model.max_context))


def memory_rows(est: FitEstimate, lang: Lang, full: bool) -> list[Row]:
    """GPU and RAM as separate rows that add up; the reserve only for the GPU part, never negative."""
    mem = est.memory
    rows: list[Row] = []
    weights_key = "value.weights_measured" if mem.weights_measured else "value.weights_estimated"
    weights = t(lang, weights_key, bytes=gib(mem.weights_bytes, lang))
    kv = gib(mem.kv_cache_bytes, lang)
    if est.engine is Engine.VLLM:  # vLLM needs one sequence's cache; what is spare becomes its KV pool
        kv = t(lang, "value.kv_one_sequence", kv=kv)
    rows += [Row(label=t(lang, "row.weights"), value=weights), Row(label=t(lang, "row.kv"), value=kv)]
    if full:
        rows.append(Row(label=t(lang, "row.overhead"), value=gib(mem.overhead_bytes, lang)))
    gpu_value = t(lang, "value.of", part=gib(est.gpu_bytes, lang), whole=gib(mem.usable_bytes, lang))
    if est.verdict is not Verdict.NO_FIT:
        gpu_value += " · " + t(lang, "value.reserve", reserve=gib(max(est.gpu_reserve_bytes, 0), lang))
    rows.append(Row(label=t(lang, "row.on_gpu"), value=gpu_value))
    off = est.offload
    if off.mode != "none" or (full and est.ram_bytes):
        if off.mode == "experts":
            what = t(lang, "value.offload_experts", n=off.cpu_moe_layers, total=off.layers_total)
        elif off.mode == "layers":
            what = t(lang, "value.offload_layers", n=off.layers_total - off.layers_on_gpu, total=off.layers_total)
        else:
            what = t(lang, "value.embedding")
        ram = est.ram_bytes
        value = (
            t(lang, "value.of", part=gib(ram, lang), whole=gib(off.ram_usable_bytes, lang))
            if off.mode != "none"
            else gib(ram, lang)
        )
        rows.append(Row(label=t(lang, "row.in_ram"), value=f"{value} · {what}"))
    rows.append(Row(label=t(lang, "row.max_context"), value=max_context_value(est, lang)))
    return rows


def speed_rows(est: FitEstimate, lang: Lang, full: bool) -> list[Row]:
    """Decode at the asked context (the KV cache of that context read for every token, the figure /speed's
    table shows for it), prefill and time to first token, per-user speed for several users on the same
    placement; the details page adds the short-context (llama-bench tg128) figure."""
    sp = est.speed
    low, high = sp.decode_range_at_context
    decode = t(
        lang,
        "value.range",
        value=tokens_per_s(sp.decode_tokens_per_s_at_context, lang),
        low=num(low, lang, 0),
        high=num(high, lang, 0),
    )
    rows = [
        Row(label=t(lang, "row.decode_at_ctx", context=context_label(est.context)), value=decode),
        Row(
            label=t(lang, "row.prefill"),
            value=t(
                lang,
                "value.prefill",
                rate=tokens_per_s(sp.prefill_tokens_per_s, lang),
                seconds=num(sp.ttft_s, lang, 1),
                prompt=context_label(sp.prompt_tokens),
            ),
        ),
    ]
    if full:
        rows.insert(1, Row(label=t(lang, "row.decode_short"), value=tokens_per_s(sp.decode_tokens_per_s, lang)))
    if est.serving.users > 1:
        rows.append(Row(label=t(lang, "row.users", users=est.serving.users), value=users_value(est, lang)))
    if full and (pool := pool_row(est, lang)) is not None:
        rows.append(pool)
    if sp.confidence == "rough":  # why, where the backend has rows (issue 37): one source, missed band, kept out
        why = sp.calibration if sp.calibration in ("thin", "missed", "excluded") else ""
        key = "value.rough_short" if not full else f"value.rough_{why}" if why else "value.rough"
        rows.append(Row(label="⚠", value=t(lang, key)))  # the first page: one line, the reason on the details
    return rows


def users_value(est: FitEstimate, lang: Lang) -> str:
    """ "68.1 tok/s together, 17.0 tok/s each (2 at once)": the one way every card says it (``core.speed.serving``);
    users beyond those at once wait their turn, which the card says."""
    serving = est.serving
    key = "value.users_queued" if serving.users_served < serving.users else "value.users_at_once"
    return t(
        lang,
        key,
        total=tokens_per_s(serving.aggregate_tokens_per_s, lang),
        per_user=tokens_per_s(serving.per_user_tokens_per_s, lang),
        at_once=integer(serving.users_served, lang),
    )


def pool_row(est: FitEstimate, lang: Lang) -> Row | None:
    """vLLM's paged KV pool: what ``gpu_memory_utilization`` leaves after weights and activations, and how
    many sequences of the asked context it holds (``speed.batch_speed``)."""
    conc = est.speed.concurrency
    if est.engine is not Engine.VLLM or conc is None or est.verdict is Verdict.NO_FIT:
        return None
    value = t(
        lang,
        "value.kv_pool",
        pool=gib(conc.kv_budget_bytes, lang),
        seqs=integer(conc.sequences_fit, lang),
        context=context_label(est.context),
    )
    return Row(label=t(lang, "row.kv_pool"), value=value)


def quant_tip(est: FitEstimate, advice: Advice, lang: Lang, why: bool = True) -> str:
    """The recommended quant with its reason (``why``: and why the ladder ranks it so, on the details page)."""
    choice = advice.quant_choice
    if choice is None:
        return t(lang, "tip.no_quant")
    kv = t(lang, "tip.with_kv", kv=choice.kv_cache.value) if choice.kv_cache else ""
    tip = t(lang, f"tip.quant_{choice.reason}", quant=choice.quant, kv=kv, verdict=VERDICT_EMOJI[choice.verdict])
    return tip + t(lang, "tip.why_ladder") if why and choice.reason == "ladder" else tip


def one_tip(est: FitEstimate, advice: Advice, lang: Lang) -> str:
    """The one piece of advice a phone card has room for."""
    if est.verdict is Verdict.FITS:
        choice = advice.quant_choice
        if choice and choice.quant != est.quant:
            return quant_tip(est, advice, lang, why=False)
        return ""
    setup = advice.hardware.cheapest if advice.hardware else None
    if est.verdict is Verdict.OFFLOAD and advice.fix is None and setup is not None and setup.price_usd:
        return t(
            lang,
            "tip.hardware",
            setup=setup_label(setup.gpu_name, setup.count),
            price=usd(setup.price_usd, lang, 0),
            rate=tokens_per_s(setup.decode_tokens_per_s, lang),
        )
    return ""


def _slower(setup: Setup, own: float | None, lang: Lang) -> str:
    if own and setup.decode_tokens_per_s < own * SLOWER_MARGIN:
        return " · " + t(lang, "hw.slower_than_yours")
    return ""


def hardware_rows(est: FitEstimate, advice: Advice, lang: Lang) -> list[Row]:
    """Each row says what it ranks by; a setup slower than the user's own says so."""
    hw = advice.hardware
    if hw is None:
        return []
    own = est.speed.decode_tokens_per_s if est.verdict is not Verdict.NO_FIT else None
    rows = []
    for key, setup in (
        ("fastest", hw.best_single_gpu),
        ("cheapest", hw.cheapest),
        ("per_dollar", hw.best_price_performance),
        ("mac", hw.best_apple),
    ):
        if setup is None:
            continue
        price = f" · ~{usd(setup.price_usd, lang, 0)}" if setup.price_usd else ""
        value = f"{setup_label(setup.gpu_name, setup.count)} · {tokens_per_s(setup.decode_tokens_per_s, lang)}{price}"
        rows.append(Row(label=t(lang, f"hw.{key}"), value=value + _slower(setup, own, lang)))
    return rows


def advice_rows(est: FitEstimate, advice: Advice, lang: Lang) -> list[Row]:
    rows = [Row(label=t(lang, "row.best_quant"), value=quant_tip(est, advice, lang))]
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
    return rows + hardware_rows(est, advice, lang)


def price_marks(flags: Sequence[str]) -> str:
    """Marks after a price: * unverified, ~ spot/marketplace, ° older than six months (legend: price.legend)."""
    return "".join(
        {"unverified": "*", "spot": "~", "stale": "°"}[f] for f in flags if f in ("unverified", "spot", "stale")
    )


def cost_rows(cost: Cost, lang: Lang, monthly: bool = False) -> list[Row]:
    if not cost.offers:
        return []
    q = cost.offers[0]
    price = usd(q.offer.price_per_hour_usd, lang) + price_marks(q.flags)
    rows = [
        Row(
            label=t(lang, "row.cheapest_cloud"),
            value=t(
                lang,
                "value.offer",
                provider=q.offer.provider,
                count=q.offer.gpu_count,
                gpu=q.gpu.short_name,
                price=price,
                seen=q.seen,
            ),
        )
    ]
    if monthly:
        rows.append(
            Row(
                label=t(lang, "row.monthly"),
                value=t(lang, "value.monthly", month=usd(q.monthly_usd, lang), hours=num(q.hours_per_month, lang, 0)),
            )
        )
    one = usd(q.usd_per_million_tokens, lang)
    rows.append(
        Row(
            label=t(lang, "row.per_mtok"),
            value=t(
                lang,
                "value.per_mtok_at_once",
                one=one,
                users=q.users,
                at_once=q.users_served,
                many=usd(offer_price(q), lang),
            )
            if q.users > 1
            else t(lang, "value.per_mtok_one", one=one),
        )
    )
    rvb = cost.rent_vs_buy
    if rvb is not None:
        months = num(rvb.break_even_months, lang, 1) if rvb.break_even_months is not None else "–"
        power = usd(rvb.electricity_usd_per_month, lang) + ("*" if rvb.watts_estimated else "")
        rows.append(Row(label=t(lang, "row.break_even"), value=t(lang, "value.break_even", months=months, power=power)))
    if q.flags or (rvb is not None and rvb.watts_estimated):
        rows.append(Row(label="", value=t(lang, "price.legend")))
    return rows


def command_blocks(advice: Advice, lang: Lang, engine: Engine, first_only: bool = False) -> tuple[CodeBlock, ...]:
    """The launch commands, the asked engine's first: a card about vLLM leads with a ``vllm serve`` line,
    never another engine's. Where the asked engine's setup does not run, the nearest setup that does
    (``advice.fix_command``, same engine) comes first, labelled as such; the phone card shows one."""
    own = [c for c in advice.commands if c.engine is engine]
    blocks = [CodeBlock(label=c.engine.value, text=c.shell) for c in own]
    if not own and advice.fix_command is not None:
        cmd = advice.fix_command
        blocks.append(CodeBlock(label=t(lang, "cmd.nearest", engine=cmd.engine.value), text=cmd.shell))
    elif not own and engine is Engine.VLLM and advice.commands:
        # another engine's line must not stand first on a vLLM card: say why there is no vllm serve line
        blocks.append(CodeBlock(label=engine.value, text=t(lang, "cmd.vllm_none")))
    others = [CodeBlock(label=c.engine.value, text=c.shell) for c in advice.commands if c.engine is not engine]
    if first_only:
        return tuple(blocks[:1])  # another engine's line is on the details page, after this one's
    return (*blocks, *others)


# notes the first page leaves to the details page: the verdict line's own values, the embedding's placement
# and why a speed band is wide (the rough row above says it)
PHONE_SKIP = frozenset(
    {
        "engine_default",
        "quant_default",
        "context_default",
        "kv_default",
        "embedding_in_ram",
        *SPEED_COVERAGE_NOTES.values(),
    }
)


def assumptions_line(est: FitEstimate, lang: Lang, full: bool = False) -> str:
    """The defaults and modelling choices behind the card (``est.notes``), in the user's language."""
    skip = {"context_over_max", "context_rope", *UNVERIFIED_CODES}  # shown as a warning at the top instead
    if not full:  # the first page's verdict line names the engine, quant, context and KV cache already
        skip |= PHONE_SKIP
    notes = [n for n in est.notes if n.code not in skip and (full or not n.code.startswith("weights_"))]
    return notes_line(notes, lang, limit=600 if full else 200, compact=not full)


def fit_actions(est: FitEstimate, advice: Advice | None, lang: Lang, details: bool) -> tuple[Action, ...]:
    """Follow-up buttons; each is a complete question the service can answer again."""
    actions: list[Action] = []
    if details:
        actions.append(Action(label=t(lang, "action.summary"), query=follow_up(est, "fit")))
    else:
        actions.append(Action(label=t(lang, "action.details"), query=follow_up(est, "fit") + " details"))
    if advice is not None and advice.fix is not None:
        actions.append(Action(label=t(lang, "action.fix"), query=fix_query(est, advice.fix)))
    for ctx in (32768, 131072):
        if ctx != est.context and ctx <= est.model.max_context and len(actions) < (4 if details else 3):
            label = context_label(ctx)
            actions.append(
                Action(
                    label=t(lang, "action.ctx", label=label), query=follow_up(est, "fit", ctx=f"ctx {label.lower()}")
                )
            )
    if est.verdict is not Verdict.NO_FIT:
        actions.append(Action(label=t(lang, "action.feel"), query=follow_up(est, FEEL)))
    actions.append(Action(label=t(lang, "action.speed"), query=follow_up(est, "speed")))
    actions.append(Action(label=t(lang, "action.quants"), query=follow_up(est, "quant", quant=None)))
    actions.append(Action(label=t(lang, "action.cloud"), query=follow_up(est, "cloud", with_gpu=False, users=None)))
    actions.append(Action(label=t(lang, "action.finetune"), query=f"/finetune {est.model.id} {est.hardware.gpu}"))
    actions.append(Action(label=t(lang, "action.gpus"), query=follow_up(est, "gpus", with_gpu=False, users=None)))
    return tuple(actions[:9] if details else actions[:PHONE_BUTTONS])


def _summary(est: FitEstimate, advice: Advice, lang: Lang, phone: bool = False) -> str:
    config = t(
        lang,
        "fit.config",
        quant=est.quant,
        context=context_label(est.context),
        kv=est.kv_cache.value,
        engine=est.engine.value,
    )
    lines = [f"{verdict_label(est.verdict, lang)} · {config}"]
    if not (phone and est.verdict is Verdict.FITS):  # a phone's fit: the GPU row says what is spare
        lines.append(verdict_line(est, lang))
    if fix := fix_line(est, advice.fix, lang):
        lines.append(fix)
    if warning := context_warning(est, lang):
        lines.append(warning)
    if doubt := unverified_warning(est, lang, short=phone):
        lines.append(doubt)
    return "\n".join(lines)


def fit_card(
    analysis: Analysis,
    catalog: Catalog,
    lang: Lang,
    chart: ChartSpec | None = None,
    echo: str = "",
    details: bool = False,
    monthly: bool = False,
) -> Reply:
    """The fit card; ``details`` gives the second page with every row."""
    est, advice, cost = analysis.estimate, analysis.advice, analysis.cost
    assert advice is not None and cost is not None, "a fit card needs the full analysis"
    sections = [Section(title=t(lang, "section.memory"), rows=tuple(memory_rows(est, lang, details)))]
    if est.verdict is not Verdict.NO_FIT:
        sections.append(Section(title=t(lang, "section.speed"), rows=tuple(speed_rows(est, lang, details))))
    elif advice.fix is not None:
        near = advice.fix.estimate
        sections.append(
            Section(
                title=t(
                    lang, "section.nearest", change=t(lang, f"fix.{advice.fix.kind}", value=_fix_value(advice.fix))
                ),
                rows=tuple(speed_rows(near, lang, False)),
            )
        )
    if details:
        sections.append(Section(title=t(lang, "section.todo"), rows=tuple(advice_rows(est, advice, lang))))
        if rows := cost_rows(cost, lang, monthly):
            sections.append(Section(title=t(lang, "section.cost"), rows=tuple(rows)))
    else:
        sections = phone_sections(est, advice, lang, sections)
        if monthly and (rows := cost_rows(cost, lang, True)):
            sections.append(Section(title=t(lang, "section.cost"), rows=tuple(rows[:2])))
    return Reply(
        kind="fit_details" if details else "fit",
        locale=lang,
        title=t(lang, "fit.title", model=est.model.name, gpu=hardware_label(est)),
        tone=VERDICT_TONE[est.verdict],
        summary=_summary(est, advice, lang, phone=not details),
        sections=tuple(sections),
        code=command_blocks(advice, lang, est.engine, first_only=not details),
        # The details page goes without the picture: Telegram cannot fit it into a photo caption, and a
        # page without a chart is sent as text in full instead of a shortened caption.
        chart=None if details else chart,
        actions=fit_actions(est, advice, lang, details),
        assumptions=assumptions_line(est, lang, full=details),
        footer=footer(catalog, lang) if details else "",  # the catalog version and "estimates": one tap away
        echo=echo,
    )


def phone_sections(est: FitEstimate, advice: Advice, lang: Lang, full: list[Section]) -> list[Section]:
    """The first page, one phone screen (issue 35): memory and speed as one untitled list (each row names
    itself), weights and KV cache on one row, the context
    limits in short, what is spare on the GPU row of a fit (the verdict line says it for the rest), and the
    one tip; a no-fit card keeps its nearest setup's titled section."""
    rows = [r for r in memory_rows(est, lang, False) if r.label != t(lang, "row.kv")]
    kv = t(lang, "value.kv_short", kv=gib(est.memory.kv_cache_bytes, lang))
    weights = rows[0].value if est.memory.weights_measured else gib(est.memory.weights_bytes, lang)
    rows[0] = rows[0].model_copy(update={"value": f"{weights} · {kv}"})  # a measured file says so
    limit = t(lang, "row.max_context")
    memory = context_label(est.max_context) if est.max_context else "–"
    short = t(lang, "value.max_context_short", memory=memory, model=context_label(est.model.max_context))
    rows = [r.model_copy(update={"value": short}) if r.label == limit else r for r in rows]
    if est.verdict is not Verdict.FITS:  # the verdict line states what is spare or missing
        on_gpu = t(lang, "row.on_gpu")
        gpu = t(lang, "value.of", part=gib(est.gpu_bytes, lang), whole=gib(est.memory.usable_bytes, lang))
        rows = [r.model_copy(update={"value": gpu}) if r.label == on_gpu else r for r in rows]
    if est.verdict is not Verdict.NO_FIT:
        rows += speed_rows(est, lang, False)
    if tip := one_tip(est, advice, lang):
        rows.append(Row(label="", value=f"💡 {tip}"))
    nearest = [s for s in full[1:] if est.verdict is Verdict.NO_FIT]
    return [Section(title="", rows=tuple(rows)), *nearest]


def _fix_value(fix: Fix) -> str:
    return context_label(int(fix.value)) if fix.kind == "context" else fix.value


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


__all__ = [
    "assumptions_line",
    "unverified_warning",
    "fit_card",
    "follow_up",
    "memory_chart",
    "price_marks",
]
