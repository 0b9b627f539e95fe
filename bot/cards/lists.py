"""List answers (/gpus, /quant, /models), the fine-tune card and /help.

Every list starts with a one-line answer, shows a ranked top ``LIST_TOP`` and offers a "More" button
for the rest; tables stay within about 45 characters so they fit a phone's Telegram message.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.parts import VERDICT_EMOJI, footer, note_text, notes_line, verdict_label
from bot.commands import MENU
from bot.reply import Action, Reply, Row, Section, Table, Tone, setup_label
from core.finetune import FinetuneEstimate, TrainingFit
from core.fit import MemoryBreakdown, Verdict
from core.models import Catalog, GpuSpec, Lang
from core.notes import Note
from core.quants.choice import QuantChoice
from core.recommend import ModelPick
from locales import context_label, gib, num, t, tokens_per_s

HELP_COMMANDS = MENU  # the one command list (bot.commands)
TIPS = ("hf_repo", "runs")  # help.<key>: a repo id instead of a name; a pasted benchmark calibrates (issue 38)


def list_card(
    kind: str,
    title: str,
    summary: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    catalog: Catalog,
    lang: Lang,
    more_query: str = "",
    assumptions: str = "",
    actions: Sequence[Action] = (),
    echo: str = "",
) -> Reply:
    """A one-line answer, then a table; ``more_query`` becomes the "More" button."""
    buttons = list(actions)
    if more_query:
        buttons.insert(0, Action(label=t(lang, "action.more"), query=more_query))
    return Reply(
        kind=kind,
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=summary,
        table=Table(headers=tuple(headers), rows=tuple(tuple(r) for r in rows)) if rows else None,
        assumptions=assumptions,
        footer=footer(catalog, lang),
        actions=tuple(buttons),
        echo=echo,
    )


def quant_card(
    title: str,
    rows: Sequence[tuple[str, int, float | None, Verdict]],
    recommended: str,
    catalog: Catalog,
    lang: Lang,
    more_query: str = "",
    echo: str = "",
) -> Reply:
    """Rows: (quant, total bytes, decode tok/s or None, verdict)."""
    table = [
        (
            q,
            num(total / (1 << 30), lang, 1),
            num(speed, lang, 0 if speed >= 100 else 1) if speed else "–",
            VERDICT_EMOJI[v],
        )
        for q, total, speed, v in rows
    ]
    return list_card(
        "quant",
        title,
        recommended,
        t(lang, "quant.headers").split("|"),
        table,
        catalog,
        lang,
        more_query=more_query,
        assumptions=t(lang, "quant.note"),
        echo=echo,
    )


def gpus_card(
    title: str,
    summary: str,
    rows: Sequence[tuple[str, int, int, float | None, Verdict]],
    catalog: Catalog,
    lang: Lang,
    more_query: str = "",
    echo: str = "",
    needs: MemoryBreakdown | None = None,
) -> Reply:
    """Rows: (device, memory bytes, needed bytes, decode tok/s or None, verdict); ``needs``: what the
    model takes on the smallest device that holds it (weights, KV cache at the context, runtime)."""
    if needs is not None:
        parts = (needs.weights_bytes, needs.kv_cache_bytes, needs.overhead_bytes)
        weights, kv, overhead = (gib(b, lang, 2 if b < 1 << 30 else 1) for b in parts)
        summary = f"{summary} " + t(lang, "gpus.needs", weights=weights, kv=kv, overhead=overhead)
    table = [
        (
            name,
            num(memory / (1 << 30), lang, 0),
            num(need / (1 << 30), lang, 1),
            num(speed, lang, 0 if speed >= 100 else 1) if speed else "–",
            VERDICT_EMOJI[v],
        )
        for name, memory, need, speed, v in rows
    ]
    return list_card(
        "gpus",
        title,
        summary,
        t(lang, "gpus.headers").split("|"),
        table,
        catalog,
        lang,
        more_query=more_query,
        assumptions=t(lang, "gpus.note"),
        echo=echo,
    )


def quant_title(model: str, setup: str, context: int, lang: Lang) -> str:
    return t(lang, "quant.title", model=model, gpu=setup, context=context_label(context))


def quant_recommendation(choice: QuantChoice | None, lang: Lang) -> str:
    """The /quant card's one line: the quant (and KV cache) ``core.advice.choose_quant`` recommends, and why."""
    if choice is None:
        return t(lang, "quant.none")
    kv = t(lang, "tip.with_kv", kv=choice.kv_cache.value) if choice.kv_cache else ""
    return t(lang, f"tip.quant_{choice.reason}", quant=choice.quant, kv=kv, verdict=VERDICT_EMOJI[choice.verdict])


def gpus_title(model: str, quant: str, context: int, lang: Lang) -> str:
    return t(lang, "gpus.title", model=model, quant=quant, context=context_label(context))


def gpus_summary(
    fits: int, offloads: int, smallest: GpuSpec | None, fastest: tuple[str, float] | None, lang: Lang
) -> str:
    """ "Any 16 GB GPU works; fastest: …" where ``fits`` devices hold the model (the ``smallest`` and the
    ``fastest``, name and tok/s), else how many run it with offload, else that none does."""
    if fits and smallest is not None and fastest is not None:
        return t(
            lang,
            "gpus.summary",
            memory=gib(smallest.memory_bytes, lang, 0),
            smallest=smallest.short_name,
            fastest=fastest[0],
            rate=tokens_per_s(fastest[1], lang),
            count=fits,
        )
    if offloads:
        return t(lang, "gpus.summary_offload", count=offloads)
    return t(lang, "gpus.summary_none")


def models_title(setup: str, context: int, size_b: float | None, lang: Lang) -> str:
    """The /models card's title; with ``size_b``, the models of that size only."""
    if size_b:
        return t(lang, "models.title_sized", size=f"{size_b:g}B", gpu=setup, context=context_label(context))
    return t(lang, "models.title", gpu=setup, context=context_label(context))


def reasons_text(reasons: Sequence[Note], lang: Lang) -> str:
    return ", ".join(note_text(r, lang) for r in reasons)


def models_card(
    title: str,
    picks: Sequence[ModelPick],
    catalog: Catalog,
    lang: Lang,
    more_query: str = "",
    model_filter: str | None = None,
    echo: str = "",
    base_query: str = "",
) -> Reply:
    """Ranked models as rows (name: quant · speed · why): reads on a phone without a wide table."""
    if not picks:
        summary = t(lang, "models.none")
    else:
        best = picks[0]
        summary = t(
            lang,
            "models.summary",
            model=best.name,
            quant=best.quant,
            rate=tokens_per_s(best.decode_tokens_per_s, lang),
            why=reasons_text(best.reasons, lang),
        )
    rows = tuple(
        Row(
            label=f"{i}. {p.name}",
            value=f"{p.quant}"
            + (f" · KV {p.kv_cache}" if p.kv_cache not in ("f16", "bf16") else "")
            + f" · {tokens_per_s(p.decode_tokens_per_s, lang)} · {VERDICT_EMOJI[p.verdict]} · {reasons_text(p.reasons, lang)}",
        )
        for i, p in enumerate(picks, 1)
    )
    section = Section(title=t(lang, f"models.ranked_{model_filter}" if model_filter else "models.ranked"), rows=rows)
    filters = (
        []
        if model_filter or not base_query
        else [
            Action(label=t(lang, f"models.filter_{name}"), query=f"{base_query} {name}")
            for name in ("coding", "reasoning", "vision", "small")
        ]
    )
    buttons = ([Action(label=t(lang, "action.more"), query=more_query)] if more_query else []) + filters
    return Reply(
        kind="models",
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=summary,
        sections=(section,) if rows else (),
        assumptions=t(lang, "models.note"),
        footer=footer(catalog, lang),
        actions=tuple(buttons),
        echo=echo,
    )


METHOD_LABEL = {"qlora": "QLoRA (4-bit)", "lora": "LoRA (16-bit)"}


def finetune_card(
    model_name: str,
    gpu_label: str | None,
    results: Sequence[tuple[FinetuneEstimate, TrainingFit | None, Sequence[TrainingFit]]],
    catalog: Catalog,
    lang: Lang,
    details: bool = False,
    echo: str = "",
) -> Reply:
    """One row per method: memory, verdict on the user's GPU (if named) and the smallest setups."""
    rows = []
    worst = Tone.GOOD
    for est, mine, smallest in results:
        label = METHOD_LABEL.get(est.method) or t(lang, "ft.full")
        names = ", ".join(setup_label(s.gpu_name, s.count) for s in smallest) or "–"
        value = gib(est.total_bytes, lang)
        if mine is not None:
            value += f" · {verdict_label(mine.verdict, lang)}"
            if mine.verdict is Verdict.NO_FIT:
                worst = Tone.WARN
        value += " · " + t(lang, "ft.smallest_value", names=names)
        rows.append(Row(label=label, value=value))
    sections = [Section(title=t(lang, "ft.methods"), rows=tuple(rows))]
    if details:
        for est, _, _ in results:
            label = METHOD_LABEL.get(est.method) or t(lang, "ft.full")
            sections.append(
                Section(
                    title=label,
                    rows=(
                        Row(label=t(lang, "ft.weights"), value=gib(est.base_weights_bytes, lang)),
                        Row(label=t(lang, "ft.trainable"), value=_count(est.trainable_params, lang)),
                        Row(
                            label=t(lang, "ft.grads_opt"),
                            value=gib(est.adapter_bytes + est.gradients_bytes + est.optimizer_bytes, lang),
                        ),
                        Row(label=t(lang, "ft.activations"), value=gib(est.activations_bytes + est.logits_bytes, lang)),
                        Row(label=t(lang, "ft.overhead"), value=gib(est.overhead_bytes, lang)),
                    ),
                )
            )
    summary = t(lang, "ft.summary_gpu", gpu=gpu_label) if gpu_label else t(lang, "ft.summary_nogpu")
    notes: list[Note] = list(results[0][0].notes) if results else []
    return Reply(
        kind="finetune_details" if details else "finetune",
        locale=lang,
        title=t(lang, "ft.title", model=model_name),
        tone=worst,
        summary=summary,
        sections=tuple(sections),
        assumptions=notes_line(notes, lang),
        footer=footer(catalog, lang),
        echo=echo,
    )


def _count(n: int, lang: Lang) -> str:
    """Parameter counts as people say them: 41.9 M, 8.03 B."""
    return f"{num(n / 1e9, lang, 2)} B" if n >= 1e9 else f"{num(n / 1e6, lang, 1)} M"


def help_card(lang: Lang) -> Reply:
    commands = Section(
        title=t(lang, "help.commands"),
        rows=tuple(Row(label=f"/{name}", value=t(lang, f"help.{name}")) for name in HELP_COMMANDS),
    )
    tips = Section(title=t(lang, "help.tips"), rows=tuple(Row(label="", value=t(lang, f"help.{k}")) for k in TIPS))
    examples = tuple(t(lang, f"help.example{i}") for i in (1, 2, 3))
    return Reply(
        kind="help",
        locale=lang,
        title=t(lang, "help.title"),
        summary=t(lang, "help.summary"),
        sections=(commands, tips),
        actions=tuple(Action(label=e, query=e) for e in examples),
    )


__all__ = ["finetune_card", "gpus_card", "help_card", "list_card", "models_card", "quant_card"]
