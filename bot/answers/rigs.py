"""Mixed rigs on a card: "Qwen3 32B on 4090 + 3090" is one machine with two different cards.

Each card is resolved on its own (an unclear one is asked about), the rig is estimated as
``core.rig`` describes, and the card gets a placement section: what each card holds, what stays in
system RAM, and the flags; its llama.cpp command carries the matching ``--tensor-split``.
"""

from __future__ import annotations

import re

from bot.cards.rigs import rig_error_card, with_placement
from bot.question import Answering, Ask, AskBack
from bot.reply import Action, CodeBlock, Reply
from catalog.lookup import rig_cards
from core import rig
from core.models import Engine, GpuSpec, ModelSpec
from core.notes import Note
from core.query.parse import Match

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
        raise AskBack(rig_error_card(ask.lang, exc.code, rig.MAX_CARDS)) from None
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
    cards = rig_cards(answers.catalog, stand_in)
    est = answers.analyse(answers.scenario(ask, model, stand_in, len(cards)), ask).estimate
    overhead = est.memory.overhead_bytes // len(cards)
    plan = rig.plan(cards, est.offload, est.gpu_bytes, est.ram_bytes, overhead)
    split = ",".join(f"{s:g}" for s in plan.tensor_split)
    flags = f"-ngl {est.offload.layers_on_gpu if est.offload.mode == 'layers' else 999} --tensor-split {split}"
    if plan.cpu_moe_layers:
        flags += f" --n-cpu-moe {plan.cpu_moe_layers}"
    code = tuple(
        CodeBlock(label=c.label, text=_split(c.text, split)) if "llama-server" in c.text else c for c in reply.code
    )
    slow = min(cards, key=lambda g: g.bandwidth_bytes_per_s).short_name
    actions = tuple(_rig_action(a, stand_in, cards) for a in reply.actions)
    kept = [a for a in actions if a is not None]
    return with_placement(reply, plan, flags, split, slow, (stand_in.short_name, len(cards)), code, kept, ask.lang)


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
