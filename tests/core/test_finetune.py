"""Fine-tuning memory: hand-checked breakdowns for an 8B and a 70B model, LoRA counts, smallest hardware."""

from __future__ import annotations

import pytest

from bot.cards.notes import note_text
from core.finetune import (
    dense_mlp_width,
    estimate_finetune,
    lora_params,
    moe_layers,
    per_gpu_bytes,
    smallest_hardware,
    training_fit,
)
from core.fit import Verdict
from core.models import GIB, MIB, Catalog
from tests.core.specs import GLM_AIR, H100, LLAMA3_8B, M3_ULTRA_512, RTX_3090, RTX_4090

LLAMA3_70B = LLAMA3_8B.model_copy(
    update={
        "id": "llama-3-70b",
        "name": "Llama 3 70B",
        "total_params": 70_553_706_496,
        "active_params": 70_553_706_496,
        "n_layers": 80,
        "hidden_size": 8192,
        "n_heads": 64,
    }
)
RTX_4060_TI = RTX_4090.model_copy(
    update={
        "id": "rtx-4060-ti-16gb",
        "short_name": "RTX 4060 Ti 16GB",
        "memory_bytes": 16380 * MIB,
        "price_usd": 449.0,
    }
)
H200 = H100.model_copy(update={"id": "h200-sxm", "short_name": "H200", "memory_bytes": 143771 * MIB})
CATALOG = Catalog(gpus=(RTX_4060_TI, RTX_4090, RTX_3090, H100, H200, M3_ULTRA_512), models=(), quants=())

# Llama-3-8B: embed = output = 128256 * 4096 = 525,336,576; dense = 8,030,261,248 - 2 * 525,336,576
# = 6,979,588,096. NF4 + double quant = 4 + 8/64 + 32/16384 = 4.126953125 bits.
# LoRA r=16, per layer: q 16*(4096+4096) = 131,072; k, v 16*(4096+1024) = 81,920 each;
# o 131,072; gate, up, down 16*(4096+14336) = 294,912 each -> 1,310,720; x 32 layers = 41,943,040.
LORA_8B = 41_943_040
# activations, s=2048 b=1 h=4096: sbh = 8,388,608. Checkpointed: 2*sbh*32 + 34*sbh = 536,870,912 +
# 285,212,672 = 822,083,584. Not checkpointed: 34*sbh*32 = 9,126,805,504.
ACT_CKPT_8B = 822_083_584
ACT_FULL_8B = 9_126_805_504
# logits: 2048 * 128,256 vocab * 10 B = 2,626,682,880
LOGITS_8B = 2_626_682_880


def test_lora_params_llama_8b_and_70b():
    assert dense_mlp_width(LLAMA3_8B) == 14336
    assert lora_params(LLAMA3_8B, 16) == LORA_8B
    # attention only: 32 * (131,072 + 81,920 + 81,920 + 131,072) = 13,631,488
    assert lora_params(LLAMA3_8B, 16, ("q", "k", "v", "o")) == 13_631_488
    # 70B, width 28672: q 16*16384 = 262,144; k, v 16*9216 = 147,456; o 262,144;
    # gate/up/down 16*36864 = 589,824 -> 2,588,672 per layer x 80 = 207,093,760
    assert dense_mlp_width(LLAMA3_70B) == 28672
    assert lora_params(LLAMA3_70B, 16) == 207_093_760
    assert lora_params(LLAMA3_8B, 64) == 4 * LORA_8B  # linear in the rank


def test_qlora_8b_breakdown():
    est = estimate_finetune(LLAMA3_8B, "qlora")
    # 6,979,588,096 / 8 * 4.126953125 = 3,489,794,048 + 110,760,065 = 3,600,554,113; + 2 * 525,336,576 * 2 B
    assert est.base_weights_bytes == 3_600_554_113 + 2_101_346_304
    assert est.trainable_params == LORA_8B
    assert est.adapter_bytes == LORA_8B * 4 == 167_772_160
    assert est.gradients_bytes == 167_772_160
    assert est.optimizer_bytes == LORA_8B * 8 == 335_544_320
    assert est.activations_bytes == ACT_CKPT_8B
    assert est.activations_no_checkpointing_bytes == ACT_FULL_8B
    assert est.logits_bytes == LOGITS_8B
    # 1 GiB + 5 % of (167,772,160 + 822,083,584 + 2,626,682,880) = 1,073,741,824 + 180,826,931
    assert est.overhead_bytes == 1_254_568_755
    assert est.total_bytes == 11_076_324_276  # ~10.3 GiB
    assert any("double quantization" in note_text(n, "en") for n in est.basis)


def test_lora_and_full_8b_breakdown():
    lora = estimate_finetune(LLAMA3_8B, "lora")
    assert lora.base_weights_bytes == 8_030_261_248 * 2 == 16_060_522_496
    full = estimate_finetune(LLAMA3_8B, "full")
    assert full.trainable_params == 8_030_261_248
    assert full.adapter_bytes == 0
    assert full.gradients_bytes == 16_060_522_496  # bf16 grads
    assert full.optimizer_bytes == 8_030_261_248 * 12 == 96_363_134_976  # fp32 master + m + v
    # 2 + 2 + 12 = 16 B per parameter before activations
    assert full.states_bytes == 16 * 8_030_261_248
    eight_bit = estimate_finetune(LLAMA3_8B, "full", optimizer="adamw8bit")
    assert eight_bit.optimizer_bytes == 8_030_261_248 * 6  # fp32 master 4 + m 1 + v 1
    assert estimate_finetune(LLAMA3_8B, "lora", optimizer="adamw8bit").optimizer_bytes == LORA_8B * 2


def test_70b_breakdowns():
    # embed = output = 128256 * 8192 = 1,050,673,152; dense = 70,553,706,496 - 2,101,346,304 = 68,452,360,192
    qlora = estimate_finetune(LLAMA3_70B, "qlora")
    # 68,452,360,192 / 8 * 4.126953125 = 35,312,460,226 + 4,202,692,608 (bf16 embed + lm_head)
    assert qlora.base_weights_bytes == 35_312_460_226 + 4_202_692_608
    assert qlora.trainable_params == 207_093_760
    # activations: sbh = 2048 * 8192 = 16,777,216; 2*sbh*80 + 34*sbh = 2,684,354,560 + 570,425,344
    assert qlora.activations_bytes == 3_254_779_904
    assert 46 * GIB < qlora.total_bytes < 47 * GIB  # 46.7 GiB: a 48 GB card, not a 24 GB one
    full = estimate_finetune(LLAMA3_70B, "full")
    assert full.states_bytes == 16 * 70_553_706_496 == 1_128_859_303_936  # ~1.03 TiB before activations


def test_checkpointing_and_flash_attention_change_activations_only():
    on = estimate_finetune(LLAMA3_8B, "lora", gradient_checkpointing=True)
    off = estimate_finetune(LLAMA3_8B, "lora", gradient_checkpointing=False)
    assert off.activations_bytes == ACT_FULL_8B and on.activations_bytes == ACT_CKPT_8B
    assert off.base_weights_bytes == on.base_weights_bytes
    no_fa = estimate_finetune(LLAMA3_8B, "lora", gradient_checkpointing=False, flash_attention=False)
    # + 5 * a * s^2 * b per layer = 5 * 32 * 2048^2 * 32 layers = 21,474,836,480
    assert no_fa.activations_bytes - ACT_FULL_8B == 21_474_836_480
    doubled = estimate_finetune(LLAMA3_8B, "lora", seq_len=4096, micro_batch=2)
    assert doubled.activations_bytes == 4 * ACT_CKPT_8B
    assert doubled.logits_bytes == 4 * LOGITS_8B


def test_moe_lora_targets_attention_and_shared_mlp_unless_experts_asked():
    # GLM-4.5-Air: q 16*(4096+12288) = 262,144; k, v 16*(4096+1024) = 81,920; o 262,144 -> 688,128;
    # shared expert (1 x 1408): 3 * 16 * (4096+1408) = 264,192; (688,128 + 264,192) * 46 = 43,806,720
    assert dense_mlp_width(GLM_AIR) == 1408
    assert lora_params(GLM_AIR, 16) == 43_806_720
    with_experts = lora_params(GLM_AIR, 16, target_experts=True)
    assert with_experts - 43_806_720 == moe_layers(GLM_AIR) * 128 * 3 * 16 * (4096 + 1408)
    est = estimate_finetune(GLM_AIR, "qlora")
    assert any("experts are not targeted" in note_text(n, "en") for n in est.basis)


def test_sharding_divides_states_not_activations():
    full = estimate_finetune(LLAMA3_8B, "full")
    assert per_gpu_bytes(full, 1) == full.total_bytes
    two, four = per_gpu_bytes(full, 2), per_gpu_bytes(full, 4)
    assert two > four > full.activations_bytes + full.logits_bytes + full.states_bytes // 4


@pytest.mark.parametrize(
    ("model", "method", "options", "expected"),
    [
        (LLAMA3_8B, "qlora", {}, ("rtx-4060-ti-16gb", 1)),  # 10.3 GiB on 16 GB
        (LLAMA3_8B, "lora", {}, ("rtx-4090", 1)),  # 19.9 GiB: the 4090 (24,564 MiB) is smaller than the 3090
        (LLAMA3_8B, "full", {}, ("h200-sxm", 1)),  # 116 GiB of states: one H200, before 2x H100 (160 GB)
        (LLAMA3_70B, "qlora", {}, ("h100-sxm", 1)),
        (LLAMA3_70B, "full", {"optimizer": "adamw8bit"}, ("h200-sxm", 8)),
        # 1.03 TiB of states / 8 = 131 GiB per H200 + activations: tight on 140 GiB
        (LLAMA3_70B, "full", {}, ("h200-sxm", 8)),
    ],
)
def test_smallest_hardware(model, method, options, expected):
    found = smallest_hardware(model, method, CATALOG, **options)
    if expected is None:
        assert found is None
        return
    assert (found.gpu_id, found.count) == expected
    assert found.verdict in (Verdict.FITS, Verdict.TIGHT)
    assert found.per_gpu_bytes <= found.usable_per_gpu_bytes


def test_no_hardware_when_even_eight_gpus_are_too_small():
    h100_only = Catalog(gpus=(H100, RTX_4090), models=(), quants=())
    assert smallest_hardware(LLAMA3_70B, "full", h100_only) is None  # 141 GB per GPU needed, 80 GB each
    assert smallest_hardware(LLAMA3_70B, "qlora", h100_only).gpu_id == "h100-sxm"


def test_smallest_hardware_skips_apple_and_prefers_least_memory():
    only_mac = Catalog(gpus=(M3_ULTRA_512,), models=(), quants=())
    assert smallest_hardware(LLAMA3_8B, "qlora", only_mac) is None  # bitsandbytes/PEFT stack: CUDA/ROCm
    found = smallest_hardware(LLAMA3_8B, "lora", CATALOG)
    est = estimate_finetune(LLAMA3_8B, "lora")
    smaller = [g for g in CATALOG.gpus if g.memory_bytes < found.memory_bytes and g.backend.value == "cuda"]
    assert all(est.total_bytes > g.memory_bytes for g in smaller)


def test_training_fit_on_the_users_gpu():
    qlora_70b = estimate_finetune(LLAMA3_70B, "qlora")  # 46.7 GiB
    assert training_fit(qlora_70b, RTX_4090).verdict is Verdict.NO_FIT
    # FSDP over 2 x 4090: 42.3 GB of states / 2 = 21.2 GB + 3.25 activations + 2.63 logits + 1.4 overhead
    # = 28.7 GB per GPU > 25.8 GB: no fit at 2048 tokens (Answer.AI's 2x 24 GB runs use shorter sequences)
    two = training_fit(qlora_70b, RTX_4090, 2)
    assert two.verdict is Verdict.NO_FIT and 28e9 < two.per_gpu_bytes < 29e9
    assert training_fit(qlora_70b, H100).verdict is Verdict.FITS


def test_smallest_setups_name_several_and_leave_out_region_restricted_parts():
    from catalog.facts import load_facts
    from core.finetune import smallest_setups
    from core.regions import REGION_RESTRICTED

    catalog = load_facts()
    model = catalog.model("qwen3-32b")
    assert model is not None
    setups = smallest_setups(model, "full", catalog, 3)
    assert len(setups) == 3 and len({s.gpu_id for s in setups}) == 3
    assert all(s.gpu_id not in REGION_RESTRICTED for s in setups)
    memory = [s.memory_bytes for s in setups]
    assert memory == sorted(memory)
    allowed = smallest_setups(model, "full", catalog, 40, allow_restricted=True)
    assert any(s.gpu_id in REGION_RESTRICTED for s in allowed)


def test_finetune_notes_are_codes_with_values():
    from catalog.facts import load_facts

    model = load_facts().model("qwen3-30b-a3b")
    assert model is not None
    est = estimate_finetune(model, "qlora", seq_len=4096)
    codes = [n.code for n in est.notes]
    assert codes[0] == "ft_setup" and est.notes[0].values["seq"] == 4096
    assert "ft_experts_not_targeted" in codes and "ft_checkpointing" in codes
