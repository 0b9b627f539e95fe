"""Cloud prices and rent-or-buy: narrow tables, marked prices, a monthly figure when asked.

Every price carries its marks (* unverified, ~ spot/marketplace, ° older than six months); the
per-user figure is never above the one-user figure (batching never makes a token dearer); rent-or-buy
is only shown for hardware that runs the model.
"""

from __future__ import annotations

from bot.cards.fit import follow_up, price_marks
from bot.cards.parts import footer, hardware_label, notes_line, short_lines, verdict_label
from bot.reply import Action, Reply, Row, Section, Table, Tone, setup_label
from core.analysis import Analysis, Cost
from core.cost import DEFAULT_HOURS_PER_DAY
from core.figures import offer_price
from core.fit import Verdict
from core.models import Catalog, Lang
from core.notes import note
from locales import num, t, usd

CLOUD_TOP = 8  # offers on the phone card; "More" shows the rest
OFFER_CELL = 24  # characters of the offer column: the table stays within a phone's width


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def seen_month(seen: str) -> str:
    """The month a price was seen, compact: "2026-03" -> "03/26"; a bare year (an undated page) -> "2026"."""
    year, _, month = seen.partition("-")
    return f"{month[:2]}/{year[2:4]}" if month else year[:4]


def offer_cell(label: str, seen: str) -> str:
    """The offer and the month its price was seen, in the one phone-narrow column: "RunPod RTX 3090 (03/26)"."""
    month = f" ({seen_month(seen)})"
    return clip(label, OFFER_CELL - len(month)) + month


def _billing(value: str, lang: Lang) -> str:
    key = f"billing.{value.lower()}"
    text = t(lang, key)
    return value if text == key else text


def cloud_card(
    model_name: str,
    model_id: str,
    quant: str,
    cost: Cost,
    catalog: Catalog,
    lang: Lang,
    monthly: bool = False,
    more: bool = False,
    echo: str = "",
    provider: str | None = None,
) -> Reply:
    """One line with the cheapest offer, then the top offers in a table narrow enough for a phone; with a
    ``provider`` asked for, only its offers when one of them holds the model (else all, and it says so)."""
    mine = tuple(q for q in cost.offers if q.offer.provider == provider) if provider else ()
    if mine:
        cost = cost.model_copy(update={"offers": mine})
    offers = cost.offers if more else cost.offers[:CLOUD_TOP]
    users = cost.users
    last = t(lang, "cloud.col_month") if monthly else t(lang, "cloud.col_mtok", users=users)
    rows = []
    for q in offers:
        many = offer_price(q)
        rows.append(
            (
                offer_cell(f"{q.offer.provider} {setup_label(q.gpu.short_name, q.offer.gpu_count)}", q.seen),
                usd(q.offer.price_per_hour_usd, lang) + price_marks(q.flags),
                usd(q.monthly_usd, lang, 0) if monthly else usd(many, lang),
            )
        )
    if not offers:
        summary = t(lang, "cloud.none")
    else:
        q = offers[0]
        summary = t(
            lang,
            "cloud.summary_at_once",
            offer=f"{q.offer.provider} {setup_label(q.gpu.short_name, q.offer.gpu_count)}",
            price=usd(q.offer.price_per_hour_usd, lang) + price_marks(q.flags),
            billing=_billing(q.offer.billing, lang),
            mtok=usd(offer_price(q), lang),
            users=q.users,
            at_once=q.users_served,
        )
        if monthly:
            summary += "\n" + t(
                lang, "cloud.monthly", month=usd(q.monthly_usd, lang), hours=num(q.hours_per_month, lang, 0)
            )
    if provider:
        summary = t(lang, "cloud.provider_only" if mine else "cloud.provider_none", provider=provider) + "\n" + summary
    notes = [note("cost_own_hardware")] + ([] if monthly else [note("cost_batched", users=users)])
    if monthly:
        notes.append(
            note(
                "cost_monthly", hours=offers[0].hours_per_month if offers else 0.0, hours_per_day=DEFAULT_HOURS_PER_DAY
            )
        )
    legend = t(lang, "price.legend") if any(q.flags for q in offers) else ""
    legend = " · ".join(x for x in (legend, t(lang, "cloud.seen_legend") if offers else "") if x)
    actions = []
    if not more and len(cost.offers) > CLOUD_TOP:
        asked = f" {provider.lower()}" if mine and provider else ""
        actions.append(Action(label=t(lang, "action.more"), query=f"/cloud {model_id} {quant.lower()}{asked} more"))
    return Reply(
        kind="cloud",
        locale=lang,
        title=t(lang, "cloud.title", model=model_name, quant=quant),
        tone=Tone.INFO,
        summary=summary,
        table=Table(headers=(t(lang, "cloud.col_offer"), "$/h", last), rows=tuple(rows)) if rows else None,
        assumptions=short_lines([legend, notes_line(notes, lang, prefix=False)]),
        footer=footer(catalog, lang),
        actions=tuple(actions),
        echo=echo,
    )


def tco_card(
    model_name: str,
    analysis: Analysis,
    catalog: Catalog,
    lang: Lang,
    cheapest_setup: tuple[str, str] | None = None,
) -> Reply:
    """Rent or buy, only for hardware that runs the model; ``cheapest_setup`` is (label, gpu query)."""
    est, cost = analysis.estimate, analysis.cost
    assert cost is not None, "a rent-or-buy card needs the cost"
    title = t(lang, "tco.title", model=model_name, gpu=hardware_label(est))
    if est.verdict is Verdict.NO_FIT:
        actions: tuple[Action, ...] = ()
        summary = t(lang, "tco.cannot_run", gpu=hardware_label(est))
        if cheapest_setup:
            label, gpu = cheapest_setup
            actions = (Action(label=label, query=follow_up(est, "tco", gpu=gpu)),)
            summary += "\n" + t(lang, "tco.try", setup=label)
        return Reply(
            kind="tco",
            locale=lang,
            title=title,
            tone=Tone.WARN,
            summary=summary,
            actions=actions,
            footer=footer(catalog, lang),
        )
    rvb = cost.rent_vs_buy
    if rvb is None:
        reason = t(lang, "tco.no_price") if cost.offers else t(lang, "cloud.none")
        return Reply(kind="tco", locale=lang, title=title, tone=Tone.INFO, summary=reason, footer=footer(catalog, lang))
    months = (
        t(lang, "tco.months", months=num(rvb.break_even_months, lang, 1))
        if rvb.break_even_months is not None
        else t(lang, "tco.never")
    )
    q = cost.offers[0]
    power = usd(rvb.electricity_usd_per_month, lang)
    if rvb.watts:
        power += " · " + t(lang, "tco.watts", watts=num(rvb.watts, lang, 0)) + ("*" if rvb.watts_estimated else "")
    rows: tuple[Row, ...] = (
        Row(label=t(lang, "tco.purchase"), value=usd(rvb.purchase_usd, lang, 0)),
        Row(label=t(lang, "tco.power"), value=power),
        Row(
            label=t(lang, "tco.cloud"),
            value=t(
                lang,
                "tco.cloud_value",
                provider=rvb.cloud_provider,
                instance=rvb.cloud_instance,
                price=usd(rvb.cloud_usd_per_hour, lang) + price_marks(q.flags),
                seen=rvb.cloud_seen,
            ),
        ),
        Row(
            label=t(lang, "tco.cloud_month"),
            value=t(
                lang,
                "tco.month_value",
                month=usd(rvb.cloud_usd_per_month, lang),
                hours=num(rvb.hours_per_month, lang, 0),
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
    legend = t(lang, "price.legend") if q.flags or rvb.watts_estimated else ""
    shown_as_rows = {"price_seen", "tco_purchase", "tco_same_tokens"}  # the card's rows already say these
    notes = [n for n in rvb.notes if n.code not in shown_as_rows]
    return Reply(
        kind="tco",
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=f"{verdict_label(est.verdict, lang)} · {months}",
        sections=(Section(title=t(lang, "section.cost"), rows=rows),),
        assumptions=short_lines([legend, notes_line(notes, lang, prefix=False)]),
        footer=footer(catalog, lang),
    )


__all__ = ["cloud_card", "tco_card"]
