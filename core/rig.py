"""Mixed rigs: one machine with different cards ("4090 + 3090", "3090 und eine 3060 12GB").

llama.cpp splits a model by layers across the cards (``--split-mode layer``) in proportion to
``--tensor-split``; each card runs its layers in turn for every token. So:

* **memory** is the sum of the cards, less one runtime overhead (compute buffer, CUDA context) per
  card. The split is proportional to each card's *free* memory (its memory less that overhead), and
  ``--tensor-split`` is those free GiB, so the command reproduces the plan.
* **decode** reads each card's share of the weights at that card's bandwidth, one card after the
  other: time per token = W * sum(share_i / bandwidth_i). The rig's effective bandwidth is the
  share-weighted harmonic mean, which the slower card bounds (a 3060 holding a third of the layers
  costs a third of the model at 3060 speed). Compute (prefill) combines the same way.

The estimate itself is the one for identical cards (``core.estimate`` with ``gpu_count`` = the
number of cards) on a stand-in card that has the mean memory and that effective bandwidth and
compute: per-card overheads, hand-over hops and offload come out exactly as for N cards.

vLLM shards every tensor evenly (tensor parallel), so it needs identical cards: on a mixed rig each
card is used only up to the smallest one's memory and runs at the slowest one's pace.
"""

from __future__ import annotations

from core.fit import Offload
from core.models import GIB, Frozen, GpuSpec, Provenance

MAX_CARDS = 8


class RigError(ValueError):
    """A set of devices that is not one machine (a Mac plus a GPU, too many cards)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class CardShare(Frozen):
    """What one card of a rig holds under the split."""

    gpu: GpuSpec
    share: float  # of the rig's GPU-resident weights and KV cache
    free_gib: float  # the card's memory less its runtime overhead: its --tensor-split value
    layers: int  # transformer layers this card runs
    holds_bytes: int  # weights + KV cache on this card


class RigPlan(Frozen):
    """The per-card placement, the experts left in RAM and the flags that reproduce it."""

    cards: tuple[CardShare, ...]
    tensor_split: tuple[float, ...]
    cpu_moe_layers: int  # --n-cpu-moe: layers whose routed experts stay in system RAM
    layers_in_ram: int  # layer offload: layers no card holds (-ngl below the layer count)
    ram_bytes: int


def check(cards: list[GpuSpec]) -> None:
    """A rig is 2-8 discrete cards in one machine; unified-memory machines are never part of one."""
    if len(cards) > MAX_CARDS:
        raise RigError("rig_too_many", f"at most {MAX_CARDS} cards in one machine")
    if any(g.unified_memory for g in cards):
        raise RigError("rig_unified", "a Mac or APU shares its memory with no discrete card")


def stand_in(cards: list[GpuSpec], overhead_per_card: int = 0) -> GpuSpec:
    """One card that, taken ``len(cards)`` times, has the rig's memory, bandwidth and compute."""
    check(cards)
    shares = split_shares(cards, overhead_per_card)
    bandwidth = 1.0 / sum(s / g.bandwidth_bytes_per_s for s, g in zip(shares, cards, strict=True))
    flops = [g.fp16_tflops for g in cards]
    tflops = (
        1.0 / sum(s / f for s, f in zip(shares, flops, strict=True) if f)
        if all(flops)
        else None
    )  # fmt: skip
    slowest = min(cards, key=lambda g: g.bandwidth_bytes_per_s)
    name = " + ".join(g.short_name for g in cards)
    return slowest.model_copy(
        update={
            "id": "rig:" + "+".join(g.id for g in cards),
            "name": name,
            "short_name": name,
            "memory_bytes": round(sum(g.memory_bytes for g in cards) / len(cards)),
            "bandwidth_bytes_per_s": bandwidth,
            "fp16_tflops": tflops,
            "price_usd": None,
            "price_note": "",
            "aliases": (),
            "street_price_new_usd": None,
            "street_price_used_usd": None,
            "interconnect": "pcie",
            "provenance": Provenance(
                source="mixed rig: memory summed, bandwidth and compute share-weighted harmonic means (core/rig.py)",
                as_of="computed",
            ),
        }
    )


def split_shares(cards: list[GpuSpec], overhead_per_card: int = 0) -> list[float]:
    """Each card's share of the split: proportional to its free memory."""
    free = [max(g.memory_bytes - overhead_per_card, 1) for g in cards]
    return [f / sum(free) for f in free]


def plan(cards: list[GpuSpec], offload: Offload, gpu_bytes: int, ram_bytes: int, overhead_per_card: int) -> RigPlan:
    """Which card runs which layers, what stays in RAM, and the --tensor-split that gives it."""
    shares = split_shares(cards, overhead_per_card)
    layers = offload.layers_on_gpu if offload.mode == "layers" else offload.layers_total
    counts = [int(s * layers) for s in shares]
    for i in sorted(range(len(cards)), key=lambda i: -(shares[i] * layers - counts[i]))[: layers - sum(counts)]:
        counts[i] += 1  # largest remainders: the counts add up to the layers on the cards
    split = tuple(round(max(g.memory_bytes - overhead_per_card, 0) / GIB, 1) for g in cards)
    return RigPlan(
        cards=tuple(
            CardShare(gpu=g, share=s, free_gib=f, layers=n, holds_bytes=round(s * gpu_bytes))
            for g, s, f, n in zip(cards, shares, split, counts, strict=True)
        ),
        tensor_split=split,
        cpu_moe_layers=offload.cpu_moe_layers if offload.mode == "experts" else 0,
        layers_in_ram=offload.layers_total - offload.layers_on_gpu if offload.mode == "layers" else 0,
        ram_bytes=ram_bytes,
    )


def with_split(argv: tuple[str, ...], split: tuple[float, ...]) -> tuple[str, ...]:
    """A llama-server command line with the rig's --tensor-split (added, or replacing an even one)."""
    value = ",".join(f"{s:g}" for s in split)
    out = list(argv)
    if "--tensor-split" in out:
        out[out.index("--tensor-split") + 1] = value
    else:
        out += ["--tensor-split", value]
    return tuple(out)


def vllm_stand_in(cards: list[GpuSpec]) -> GpuSpec:
    """What vLLM makes of a mixed rig: every card as the smallest and slowest of them."""
    check(cards)
    smallest = min(cards, key=lambda g: (round(g.memory_bytes / GIB), g.bandwidth_bytes_per_s))
    slowest = min(cards, key=lambda g: g.bandwidth_bytes_per_s)
    flops = [g.fp16_tflops for g in cards if g.fp16_tflops]
    return smallest.model_copy(
        update={
            "bandwidth_bytes_per_s": slowest.bandwidth_bytes_per_s,
            "fp16_tflops": min(flops) if flops else None,
        }
    )
