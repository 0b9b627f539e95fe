"""Mixed rigs (core/rig.py): the split follows free memory, the slower card bounds its share."""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from core import rig
from core.fit import Offload
from core.models import GIB

CATALOG = load_facts()
R4090, R3090, R3060 = (CATALOG.gpu(g) for g in ("rtx-4090", "rtx-3090", "rtx-3060-12gb"))


def test_stand_in_holds_the_sum_of_the_cards():
    stand_in = rig.stand_in([R4090, R3060])
    assert stand_in.memory_bytes * 2 == pytest.approx(R4090.memory_bytes + R3060.memory_bytes, abs=1)
    assert stand_in.id == "rig:rtx-4090+rtx-3060-12gb"


def test_bandwidth_is_the_share_weighted_harmonic_mean():
    shares = rig.split_shares([R4090, R3060])
    expected = 1 / (shares[0] / R4090.bandwidth_bytes_per_s + shares[1] / R3060.bandwidth_bytes_per_s)
    stand_in = rig.stand_in([R4090, R3060])
    assert stand_in.bandwidth_bytes_per_s == pytest.approx(expected)
    assert R3060.bandwidth_bytes_per_s < stand_in.bandwidth_bytes_per_s < R4090.bandwidth_bytes_per_s


def test_identical_bandwidth_stays_as_it_is():
    stand_in = rig.stand_in([R4090, R4090])
    assert stand_in.bandwidth_bytes_per_s == pytest.approx(R4090.bandwidth_bytes_per_s)


def test_split_follows_free_memory_after_each_cards_overhead():
    overhead = GIB
    shares = rig.split_shares([R4090, R3060], overhead)
    free = [R4090.memory_bytes - overhead, R3060.memory_bytes - overhead]
    assert shares[0] / shares[1] == pytest.approx(free[0] / free[1])


def test_plan_gives_every_layer_once_and_the_split_flags():
    offload = Offload(mode="none", layers_on_gpu=64, layers_total=64, gpu_bytes=30 * GIB, bytes_in_ram=0,
                      ram_usable_bytes=0, fits_ram=True)  # fmt: skip
    plan = rig.plan([R4090, R3090, R3060], offload, 30 * GIB, 0, GIB)
    assert sum(c.layers for c in plan.cards) == 64
    assert plan.tensor_split == tuple(round((g.memory_bytes - GIB) / GIB, 1) for g in (R4090, R3090, R3060))
    assert plan.cpu_moe_layers == 0 and plan.layers_in_ram == 0


def test_experts_in_ram_are_in_the_plan():
    offload = Offload(mode="experts", layers_on_gpu=36, layers_total=36, cpu_moe_layers=17, gpu_bytes=30 * GIB,
                      bytes_in_ram=27 * GIB, ram_usable_bytes=50 * GIB, fits_ram=True)  # fmt: skip
    plan = rig.plan([R4090, R3060], offload, 30 * GIB, 27 * GIB, GIB)
    assert plan.cpu_moe_layers == 17 and plan.ram_bytes == 27 * GIB


def test_with_split_replaces_an_even_split():
    argv = ("llama-server", "-ngl", "999", "--tensor-split", "1,1")
    assert rig.with_split(argv, (23.4, 11.4))[-1] == "23.4,11.4"
    assert rig.with_split(("llama-server",), (23.4, 11.4))[-2:] == ("--tensor-split", "23.4,11.4")


def test_a_mac_is_never_part_of_a_rig():
    with pytest.raises(rig.RigError):
        rig.stand_in([R4090, CATALOG.gpu("m3-max-128")])


def test_vllm_uses_every_card_as_the_smallest_and_slowest():
    spec = rig.vllm_stand_in([R4090, R3060])
    assert spec.id == "rtx-3060-12gb" and spec.bandwidth_bytes_per_s == R3060.bandwidth_bytes_per_s
