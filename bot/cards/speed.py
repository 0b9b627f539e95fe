"""The /speed card (decode and prefill across contexts and users, the model on common GPUs) and the
comparison of setups side by side, as rows that read on a phone."""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.fit import VERDICT_TONE, assumptions_line, follow_up, unverified_warning
from bot.cards.parts import footer, hardware_label, notes_line, verdict_label
from bot.commands import FEEL
from bot.reply import Action, ChartSpec, Reply, Row, Section, Table, Tone
from core.advice import QuickFit
from core.analysis import Analysis
from core.estimate import FitEstimate
from core.fit import Verdict
from core.models import Catalog, Lang
from core.notes import note
from locales import context_label, gib, num, t, tokens_per_s


def speed_card(
    main: Analysis,
    contexts: Sequence[FitEstimate],
    users: Sequence[FitEstimate],
    others: Sequence[tuple[str, QuickFit]],
    catalog: Catalog,
    lang: Lang,
    chart: ChartSpec | None = None,
    echo: str = "",
) -> Reply:
    """Decode, prefill and time to first token across context lengths (each with a prompt that fills
    it), per-user and total speed across users, and the same model on common GPUs."""
    est = main.estimate
    asked_backend = [n for n in est.notes if n.code in ("backend", "backend_unavailable")]  # "on vulkan": said
    ctx_table = Table(
        title=t(lang, "speed.by_context_prompt"),
        headers=tuple(t(lang, "speed.ctx_headers").split("|")),
        rows=tuple(
            (
                context_label(e.context),
                num(e.speed.decode_tokens_per_s_at_context, lang, 1),
                num(e.speed.prompt_tokens / e.speed.ttft_s, lang, 0),  # the prompt's own average rate
                num(e.speed.ttft_s, lang, 1),
            )
            for e in contexts
        ),
    )
    user_rows = []
    for e in users:
        serving = e.serving
        each, total = (
            tokens_per_s(serving.per_user_tokens_per_s, lang),
            tokens_per_s(serving.aggregate_tokens_per_s, lang),
        )
        value = t(lang, "value.users_short", each=each, total=total)
        if serving.users_served < serving.users:
            value += " · " + t(lang, "value.served", served=serving.users_served)
        label = t(lang, "row.one_user") if serving.users == 1 else t(lang, "row.users", users=serving.users)
        user_rows.append(Row(label=label, value=value))
    other_rows = [
        Row(
            label=name,
            value=(
                tokens_per_s(o.decode_tokens_per_s, lang) + f" · {verdict_label(o.verdict, lang)}"
                if o.decode_tokens_per_s is not None
                else verdict_label(o.verdict, lang)
            ),
        )
        for name, o in others
    ]
    sections = (
        Section(title=t(lang, "speed.by_users"), rows=tuple(user_rows)),
        Section(title=t(lang, "speed.other_gpus"), rows=tuple(other_rows)),
    )
    summary = f"{verdict_label(est.verdict, lang)} · " + t(
        lang,
        "speed.summary",
        decode=tokens_per_s(est.speed.decode_tokens_per_s, lang),
        prefill=tokens_per_s(est.speed.prefill_tokens_per_s, lang),
    )
    if est.verdict is Verdict.NO_FIT:
        summary = verdict_label(est.verdict, lang) + " · " + t(lang, "speed.no_fit")
    if doubt := unverified_warning(est, lang):
        summary += "\n" + doubt
    return Reply(
        kind="speed",
        locale=lang,
        title=t(lang, "speed.title", model=est.model.name, gpu=hardware_label(est)),
        tone=VERDICT_TONE[est.verdict],
        summary=summary,
        sections=sections if est.verdict is not Verdict.NO_FIT else sections[1:],
        table=ctx_table if est.verdict is not Verdict.NO_FIT else None,
        chart=chart,
        actions=(
            Action(label=t(lang, "action.fit"), query=follow_up(est, "fit")),
            Action(label=t(lang, "action.feel"), query=follow_up(est, FEEL)),
        )
        if est.verdict is not Verdict.NO_FIT
        else (Action(label=t(lang, "action.fit"), query=follow_up(est, "fit")),),
        assumptions=notes_line([note("speed_basis", quant=est.quant, kv=est.kv_cache.value), *asked_backend], lang),
        footer=footer(catalog, lang),
        echo=echo,
    )


def compare_card(estimates: Sequence[FitEstimate], catalog: Catalog, lang: Lang) -> Reply:
    """Setups side by side as rows (one section each): reads on a phone without a wide table."""
    title = t(lang, "compare.title")
    sections = tuple(
        Section(
            title=f"{e.model.name} · {hardware_label(e)}",
            rows=(
                Row(label=t(lang, "row.verdict"), value=verdict_label(e.verdict, lang)),
                Row(
                    label=t(lang, "row.on_gpu"),
                    value=t(lang, "value.of", part=gib(e.gpu_bytes, lang), whole=gib(e.memory.usable_bytes, lang)),
                ),
                Row(
                    label=t(lang, "row.decode"),
                    value=tokens_per_s(e.speed.decode_tokens_per_s, lang) if e.verdict is not Verdict.NO_FIT else "–",
                ),
                Row(
                    label=t(lang, "row.prefill"),
                    value=tokens_per_s(e.speed.prefill_tokens_per_s, lang) if e.verdict is not Verdict.NO_FIT else "–",
                ),
            ),
        )
        for e in estimates
    )
    runs = [e for e in estimates if e.verdict is not Verdict.NO_FIT]
    best = max(runs, key=lambda e: e.speed.decode_tokens_per_s, default=None)
    summary = (
        t(
            lang,
            "compare.summary",
            setup=f"{best.model.name} · {hardware_label(best)}",
            rate=tokens_per_s(best.speed.decode_tokens_per_s, lang),
        )
        if best and len(estimates) > 1
        else ""
    )
    doubts = dict.fromkeys(line for e in estimates if (line := unverified_warning(e, lang)))  # once per model
    summary = "\n".join([summary, *doubts] if summary else doubts)
    return Reply(
        kind="compare",
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=summary,
        sections=sections,
        assumptions=assumptions_line(estimates[0], lang) if estimates else "",
        footer=footer(catalog, lang),
    )


__all__ = ["compare_card", "speed_card"]
