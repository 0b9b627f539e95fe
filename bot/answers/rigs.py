"""Mixed rigs on a card: "Qwen3 32B on 4090 + 3090" is one machine with two different cards.

Each card is resolved on its own (an unclear one is asked about), the rig is estimated as
``core.rig`` describes, and the card gets a placement section: what each card holds, what stays in
system RAM, and the flags; its llama.cpp command carries the matching ``--tensor-split``.
"""

from __future__ import annotations

import re

from bot.cards import notices as card_kit
from bot.question import Answering, Ask, AskBack
from bot.reply import Action, CodeBlock, Reply, Row, Section
from catalog.lookup import rig_cards
from core import rig
from core.models import Engine, GpuSpec, ModelSpec
from core.notes import Note
from core.query.parse import Match
from locales import gib, integer, t

SPLIT_FLAG = re.compile(r"--tensor-split\s+\S+")


def device(answers: Answering, ask: Ask, model: ModelSpec) -> tuple[GpuSpec, int]:
    """The rig as one stand-in device taken once per card (``AskBack`` when one card is unclear)."""
    q = ask.query
    named: list[tuple[Match, int]] = [(m, n) for m, n in ((q.gpu, q.gpu_count), (q.gpu2, q.gpu2_count)) if m]
    named += list(zip(q.more_gpus, q.more_gpu_counts, strict=False))
    cards: list[GpuSpec] = []
    for match, count in named:
        one = q.model_copy(update={"gpu": match, "gpu_count": count, "gpu2": None, "more_gpus": (), "rig": False})
        gpu, n = answers.device(ask, model, one)
        cards += [gpu] * n
    if len({g.id for g in cards}) == 1:
        return cards[0], len(cards)  # "3090 + 3090" is 2x 3090
    try:
        rig.check(cards)
    except rig.RigError as exc:
        raise AskBack(card_kit.error_card(ask.lang, t(ask.lang, f"rig.{exc.code}", max=rig.MAX_CARDS))) from None
    request = answers.request(ask, len(cards))
    if (request.engine or Engine.LLAMA_CPP) is Engine.VLLM:
        smallest = rig.vllm_stand_in(cards)
        ask.note(Note(code="rig_vllm", values={"gpu": smallest.short_name, "n": str(len(cards))}))
        return smallest, len(cards)
    first = answers.analyse(answers.scenario(ask, model, rig.stand_in(cards), len(cards)), ask).estimate
    overhead = first.memory.overhead_bytes // len(cards)  # each card keeps one runtime overhead
    return rig.stand_in(cards, overhead), len(cards)


def placement(answers: Answering, reply: Reply, model: ModelSpec, stand_in: GpuSpec, ask: Ask) -> Reply:
    """The card with what each card holds, the RAM part and the flags; its command split to match."""
    if not stand_in.id.startswith("rig:") or reply.kind in ("suggest", "error"):
        return reply
    lang = ask.lang
    cards = rig_cards(answers.catalog, stand_in)
    est = answers.analyse(answers.scenario(ask, model, stand_in, len(cards)), ask).estimate
    overhead = est.memory.overhead_bytes // len(cards)
    plan = rig.plan(cards, est.offload, est.gpu_bytes, est.ram_bytes, overhead)
    split = ",".join(f"{s:g}" for s in plan.tensor_split)
    rows = []
    first = 0
    for card in plan.cards:
        last = first + card.layers - 1
        rows.append(
            Row(
                label=card.gpu.short_name,
                value=t(
                    lang,
                    "rig.card",
                    first=first,
                    last=max(first, last),
                    layers=card.layers,
                    held=gib(card.holds_bytes, lang),
                    share=f"{integer(round(100 * card.share), lang)} %",
                ),
            )  # fmt: skip
        )
        first = last + 1
    held = gib(plan.ram_bytes, lang)
    if plan.cpu_moe_layers:
        rows.append(Row(label=t(lang, "rig.ram"), value=t(lang, "rig.ram_experts", n=plan.cpu_moe_layers, held=held)))
    elif plan.layers_in_ram:
        rows.append(Row(label=t(lang, "rig.ram"), value=t(lang, "rig.ram_layers", n=plan.layers_in_ram, held=held)))
    flags = f"-ngl {est.offload.layers_on_gpu if est.offload.mode == 'layers' else 999} --tensor-split {split}"
    if plan.cpu_moe_layers:
        flags += f" --n-cpu-moe {plan.cpu_moe_layers}"
    rows.append(Row(label=t(lang, "rig.flags"), value=flags))
    section = Section(title=t(lang, "rig.title"), rows=tuple(rows))
    code = tuple(
        CodeBlock(label=c.label, text=_split(c.text, split)) if "llama-server" in c.text else c for c in reply.code
    )
    name, n = stand_in.short_name, len(cards)
    title = reply.title.replace(f"{n}x {name}", name)
    note = t(lang, "rig.note", split=split, slow=min(cards, key=lambda g: g.bandwidth_bytes_per_s).short_name)
    summary = f"{note}\n{reply.summary.replace(f'{n}x {name}', name)}"
    actions = tuple(_rig_action(a, stand_in, cards) for a in reply.actions)
    return reply.model_copy(
        update={
            "sections": (*reply.sections, section),
            "code": code,
            "title": title,
            "summary": summary,
            "actions": tuple(a for a in actions if a is not None),
        }
    )


def _rig_action(action: Action, stand_in: GpuSpec, cards: list[GpuSpec]) -> Action | None:
    """A follow-up button names the rig as its cards ("rtx-4090 + rtx-3090"); one that changes the
    number of cards ("4 GPUs") has no meaning for a mixed rig and is left out."""
    m = re.search(r"(?:(\d+)x )?" + re.escape(stand_in.id), action.query)
    if m is None:
        return action
    if m[1] and int(m[1]) != len(cards):
        return None
    return action.model_copy(update={"query": action.query.replace(m[0], " + ".join(g.id for g in cards))})


def _split(shell: str, split: str) -> str:
    """A llama-server command with the rig's --tensor-split."""
    if SPLIT_FLAG.search(shell):
        return SPLIT_FLAG.sub(f"--tensor-split {split}", shell)
    return f"{shell} --tensor-split {split}"
