"""Fine-tuning memory: QLoRA, LoRA and full fine-tuning as a per-part breakdown with every assumption.

Bytes per parameter (Rajbhandari et al. 2020, "ZeRO", §3.1: mixed-precision Adam holds 2 + 2 + 12):

=============  ====================  ====================  ==========================================
method         frozen base weights   trainable weights     gradients + optimizer per trainable param
=============  ====================  ====================  ==========================================
qlora          NF4 + double quant    LoRA adapters, fp32   4 (fp32 grad) + 8 (Adam m, v fp32)
lora           bf16 (2 B)            LoRA adapters, fp32   4 + 8
full           -                     bf16 (2 B)            2 (bf16 grad) + 12 (fp32 master, m, v)
=============  ====================  ====================  ==========================================

8-bit AdamW (bitsandbytes; Dettmers et al. 2022, "8-bit Optimizers via Block-wise Quantization")
stores m and v in 1 byte each (block-wise fp32 scales per 2048 values are negligible), so the
optimizer costs 2 B per adapter parameter and 4 + 2 = 6 B per parameter in full fine-tuning.
PEFT keeps LoRA weights in fp32 even on a bf16 base (``autocast_adapter_dtype=True``).
"""

from __future__ import annotations

import math
from typing import Literal

from core.fit import Verdict, comfortable_reserve
from core.memory import unified_fraction
from core.models import GIB, AttentionKind, Backend, Catalog, Frozen, GpuSpec, ModelSpec
from core.notes import Note, note
from core.regions import restricted
from core.weights import param_groups

Method = Literal["qlora", "lora", "full"]
Optimizer = Literal["adamw", "adamw8bit"]

# QLoRA (Dettmers et al. 2023, §3 "Double Quantization"): NF4 4 bits + an 8-bit absmax per 64 weights
# + an fp32 second-level constant per 256 blocks = 4 + 8/64 + 32/(64*256) = 4.127 bits per weight
# (4.5 without double quantization). bitsandbytes skips lm_head and nn.Embedding: those stay bf16.
NF4_DOUBLE_QUANT_BITS = 4 + 8 / 64 + 32 / (64 * 256)
BF16_BYTES = 2
ADAPTER_BYTES = 4  # fp32 LoRA weights
ADAPTER_GRAD_BYTES = 4
FULL_GRAD_BYTES = 2  # bf16 gradients
MASTER_BYTES = 4  # fp32 master weights (full fine-tuning only)
ADAM_STATE_BYTES: dict[str, int] = {"adamw": 8, "adamw8bit": 2}  # m + v

# Activations of one transformer layer (Korthikanti et al. 2022, "Reducing Activation Recomputation
# in Large Transformer Models", §4.1 eq. 1): s*b*h*(34 + 5*a*s/h) bytes at 16-bit precision.
# FlashAttention/SDPA do not keep the a*s*s score matrix, which drops the 5*a*s/h term.
# Full checkpointing keeps only each layer's 2*s*b*h input and recomputes one layer at a time (§4.2).
ACT_BYTES_PER_SBH = 34
ATTN_SCORE_BYTES_PER_ASSB = 5
CHECKPOINT_BYTES_PER_SBH = 2
# transformers' ForCausalLMLoss upcasts logits with .float() before cross-entropy: bf16 logits (2) +
# fp32 copy (4) + fp32 log-softmax kept for backward (4) per logit element. Fused/chunked CE kernels
# (Liger, Unsloth) avoid most of this.
LOGITS_BYTES_PER_ELEMENT = 10
# CUDA context, cuBLAS workspace, bitsandbytes dequantization buffer; plus caching-allocator slack.
RUNTIME_BYTES = GIB
ALLOCATOR_SLACK = 0.05
TRAINING_BACKENDS = (Backend.CUDA, Backend.ROCM)  # PyTorch + PEFT + bitsandbytes
MULTI_GPU_COUNTS = (2, 4, 8)

DEFAULT_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


class FinetuneEstimate(Frozen):
    """Memory for one fine-tuning run on one device (``per_gpu_bytes`` shards it over several)."""

    method: Method
    optimizer: Optimizer
    seq_len: int
    micro_batch: int
    lora_rank: int | None  # None for full fine-tuning
    target_modules: tuple[str, ...]
    target_experts: bool
    gradient_checkpointing: bool
    flash_attention: bool
    base_weights_bytes: int  # frozen base (qlora/lora) or the bf16 weights being trained (full)
    trainable_params: int
    adapter_bytes: int  # fp32 LoRA weights; 0 for full fine-tuning (they are the base weights)
    gradients_bytes: int
    optimizer_bytes: int  # incl. fp32 master weights for full fine-tuning
    activations_bytes: int  # with or without checkpointing, as chosen
    activations_checkpointed_bytes: int
    activations_no_checkpointing_bytes: int
    logits_bytes: int
    overhead_bytes: int
    total_bytes: int
    notes: tuple[Note, ...] = ()  # the setup as codes + values, for the card's footnote
    basis: tuple[Note, ...] = ()  # every modelling assumption, as codes + values (details, CLI)

    @property
    def states_bytes(self) -> int:
        """Weights, gradients and optimizer states: the part ZeRO-3/FSDP shards over GPUs."""
        return self.base_weights_bytes + self.adapter_bytes + self.gradients_bytes + self.optimizer_bytes


class TrainingFit(Frozen):
    """The smallest setup a fine-tuning run fits on."""

    gpu_id: str
    gpu_name: str
    count: int
    memory_bytes: int  # all GPUs
    per_gpu_bytes: int
    usable_per_gpu_bytes: int
    verdict: Verdict  # fits, tight or no_fit
    price_usd: float | None  # all GPUs, when the catalog has a price


def attention_dims(model: ModelSpec) -> dict[str, tuple[int, int]]:
    """(d_in, d_out) of each attention projection.

    MLA (DeepSeek): q_a/q_b are counted as one unfactored q_proj (q_lora_rank is not in ModelSpec);
    "k" is kv_a_proj_with_mqa, "v" is kv_b_proj.
    """
    h, hd = model.hidden_size, model.head_dim
    vd = model.v_head_dim or hd
    if model.attention is AttentionKind.MLA:
        assert model.kv_lora_rank is not None
        rope = model.qk_rope_head_dim or 0
        return {
            "q": (h, model.n_heads * hd),
            "k": (h, model.kv_lora_rank + rope),
            "v": (model.kv_lora_rank, model.n_heads * (hd - rope + vd)),
            "o": (model.n_heads * vd, h),
        }
    return {
        "q": (h, model.n_heads * hd),
        "k": (h, model.n_kv_heads * hd),
        "v": (h, model.n_kv_heads * vd),
        "o": (model.n_heads * vd, h),
    }


def dense_mlp_width(model: ModelSpec) -> int:
    """Dense FFN width per layer (MoE: the shared experts' width; 0 when there are none).

    Dense models: params per layer = attention + 2 norms (2h) + 3*h*width (gate, up, down), solved
    for width and rounded to a multiple of 64 (Llama-3-8B 14336, Llama-3-70B 28672). MoE models:
    n_shared_experts * moe_intermediate_size; the few leading dense-FFN layers (DeepSeek 3,
    GLM-4.5 1-3) are counted as MoE layers, which undercounts their LoRA parameters slightly.
    """
    if model.is_moe:
        return model.n_shared_experts * (model.moe_intermediate_size or 0)
    h = model.hidden_size
    per_layer = param_groups(model).dense / model.n_layers
    attention = sum(i * o for i, o in attention_dims(model).values())
    width = (per_layer - attention - 2 * h) / (3 * h)
    return max(0, round(width / 64) * 64)


def moe_layers(model: ModelSpec) -> int:
    """Layers with routed experts: routed params / (E * 3 * h * expert width), at most n_layers."""
    if not model.is_moe or not model.moe_intermediate_size or not model.n_experts:
        return 0
    per_layer = model.n_experts * 3 * model.hidden_size * model.moe_intermediate_size
    return min(model.n_layers, round(param_groups(model).experts / per_layer))


def lora_params(
    model: ModelSpec, rank: int, targets: tuple[str, ...] = DEFAULT_TARGETS, target_experts: bool = False
) -> int:
    """LoRA parameters: r * (d_in + d_out) per targeted matrix per layer (Hu et al. 2021, §4.1)."""
    h = model.hidden_size
    dims = dict(attention_dims(model))
    width = dense_mlp_width(model)
    if width:
        dims |= {"gate": (h, width), "up": (h, width), "down": (width, h)}
    per_layer = sum(rank * (dims[t][0] + dims[t][1]) for t in targets if t in dims)
    total = per_layer * model.n_layers
    if target_experts and model.moe_intermediate_size and model.n_experts:
        mlp = sum(1 for t in targets if t in ("gate", "up", "down"))
        total += moe_layers(model) * model.n_experts * mlp * rank * (h + model.moe_intermediate_size)
    return total


def activation_bytes(
    model: ModelSpec, seq_len: int, micro_batch: int, checkpointing: bool, flash_attention: bool = True
) -> int:
    """Activations kept for backward, all layers (Korthikanti et al. 2022, eq. 1 and §4.2)."""
    s, b, h = seq_len, micro_batch, model.hidden_size
    layer = ACT_BYTES_PER_SBH * s * b * h
    if not flash_attention:
        layer += ATTN_SCORE_BYTES_PER_ASSB * model.n_heads * s * s * b
    if checkpointing:
        return CHECKPOINT_BYTES_PER_SBH * s * b * h * model.n_layers + layer
    return layer * model.n_layers


def overhead(transient: int) -> int:
    """Runtime context plus allocator slack on what is allocated and freed every step."""
    return RUNTIME_BYTES + round(ALLOCATOR_SLACK * transient)


def estimate_finetune(
    model: ModelSpec,
    method: Method,
    seq_len: int = 2048,
    micro_batch: int = 1,
    lora_rank: int = 16,
    target_modules: tuple[str, ...] = DEFAULT_TARGETS,
    gradient_checkpointing: bool = True,
    optimizer: Optimizer = "adamw",
    target_experts: bool = False,
    flash_attention: bool = True,
) -> FinetuneEstimate:
    """Memory breakdown of one fine-tuning run on a single device."""
    groups = param_groups(model)
    total_params = groups.total
    adam = ADAM_STATE_BYTES[optimizer]
    basis = [note("ft_run", seq=seq_len, batch=micro_batch, optimizer=optimizer)]
    if method == "full":
        trainable = total_params
        base = total_params * BF16_BYTES
        adapter = 0
        grads = trainable * FULL_GRAD_BYTES
        optim = trainable * (MASTER_BYTES + adam)
        basis.append(note("ft_full_precision", states=MASTER_BYTES + adam, per_param=4 + MASTER_BYTES + adam))
        rank: int | None = None
        targets: tuple[str, ...] = ()
    else:
        rank, targets = lora_rank, target_modules
        trainable = lora_params(model, lora_rank, target_modules, target_experts)
        if method == "qlora":
            linear = groups.dense + groups.experts
            base = round(linear * NF4_DOUBLE_QUANT_BITS / 8) + (groups.embed + groups.output) * BF16_BYTES
            basis.append(note("ft_qlora_base", bits=f"{NF4_DOUBLE_QUANT_BITS:.3f}"))
            if model.is_moe:
                basis.append(note("ft_qlora_experts"))
        else:
            base = total_params * BF16_BYTES
            basis.append(note("ft_lora_base"))
        adapter = trainable * ADAPTER_BYTES
        grads = trainable * ADAPTER_GRAD_BYTES
        optim = trainable * adam
        basis.append(note("ft_lora_targets", rank=lora_rank, targets=", ".join(target_modules), adam=adam))
        basis.append(
            note(
                "ft_targets_experts"
                if target_experts
                else "ft_targets_no_experts"
                if model.is_moe
                else "ft_targets_dense"
            )
        )
    checkpointed = activation_bytes(model, seq_len, micro_batch, True, flash_attention)
    plain = activation_bytes(model, seq_len, micro_batch, False, flash_attention)
    acts = checkpointed if gradient_checkpointing else plain
    basis.append(note("ft_activations_flash" if flash_attention else "ft_activations_scores"))
    basis.append(note("ft_activations_checkpointed" if gradient_checkpointing else "ft_no_checkpointing"))
    logits = seq_len * micro_batch * model.vocab_size * LOGITS_BYTES_PER_ELEMENT
    basis.append(note("ft_logits"))
    rest = base + adapter + grads + optim + acts + logits
    extra = overhead(grads + acts + logits)
    basis.append(note("ft_overhead", runtime_bytes=RUNTIME_BYTES, share=ALLOCATOR_SLACK))
    return FinetuneEstimate(
        method=method,
        optimizer=optimizer,
        seq_len=seq_len,
        micro_batch=micro_batch,
        lora_rank=rank,
        target_modules=targets,
        target_experts=target_experts and method != "full",
        gradient_checkpointing=gradient_checkpointing,
        flash_attention=flash_attention,
        base_weights_bytes=base,
        trainable_params=trainable,
        adapter_bytes=adapter,
        gradients_bytes=grads,
        optimizer_bytes=optim,
        activations_bytes=acts,
        activations_checkpointed_bytes=checkpointed,
        activations_no_checkpointing_bytes=plain,
        logits_bytes=logits,
        overhead_bytes=extra,
        total_bytes=rest + extra,
        basis=tuple(basis),
        notes=(
            note(
                "ft_setup",
                seq=seq_len,
                batch=micro_batch,
                optimizer=optimizer,
                rank=rank or 0,
            ),
            note("ft_checkpointing" if gradient_checkpointing else "ft_no_checkpointing"),
            note(
                "ft_experts_not_targeted" if model.is_moe and not target_experts and method != "full" else "ft_formula"
            ),
        ),
    )


def per_gpu_bytes(est: FinetuneEstimate, count: int) -> int:
    """Memory on each of ``count`` GPUs with ZeRO-3/FSDP sharding of weights, gradients and optimizer.

    Activations and logits belong to each GPU's own micro-batch and are not sharded.
    """
    if count == 1:
        return est.total_bytes
    transient = math.ceil(est.gradients_bytes / count) + est.activations_bytes + est.logits_bytes
    return math.ceil(est.states_bytes / count) + est.activations_bytes + est.logits_bytes + overhead(transient)


def training_fit(est: FinetuneEstimate, gpu: GpuSpec, count: int = 1) -> TrainingFit:
    """Fit verdict of a fine-tuning run on ``count`` x ``gpu`` (fits, tight or no_fit; nothing offloads)."""
    verdict, need, usable = _verdict(est, gpu, count)
    return TrainingFit(
        gpu_id=gpu.id,
        gpu_name=gpu.short_name,
        count=count,
        memory_bytes=gpu.memory_bytes * count,
        per_gpu_bytes=need,
        usable_per_gpu_bytes=usable,
        verdict=verdict,
        price_usd=gpu.price_usd * count if gpu.price_usd is not None else None,
    )


def _verdict(est: FinetuneEstimate, gpu: GpuSpec, count: int) -> tuple[Verdict, int, int]:
    """(verdict, bytes on each GPU, usable bytes of each GPU): ``training_fit`` in plain numbers."""
    usable = usable_per_gpu(gpu)
    need = per_gpu_bytes(est, count)
    reserve = comfortable_reserve(usable * count, count) / count
    verdict = Verdict.NO_FIT if need > usable else Verdict.FITS if usable - need >= reserve else Verdict.TIGHT
    return verdict, need, usable


def usable_per_gpu(gpu: GpuSpec) -> int:
    """Memory one device gives a training run: all of a discrete card, the GPU's share of unified memory."""
    return round(gpu.memory_bytes * unified_fraction(gpu)) if gpu.unified_memory else gpu.memory_bytes


def smallest_hardware(
    model: ModelSpec, method: Method, catalog: Catalog, allow_restricted: bool = False, **options: object
) -> TrainingFit | None:
    """Smallest single GPU, or 2/4/8 of one datacenter GPU, that fits; by total memory, then price.

    ``options`` are passed on to ``estimate_finetune``. Only CUDA/ROCm devices: the training stack
    (PyTorch, PEFT, bitsandbytes) is not modelled for Apple or other accelerators.
    """
    found = smallest_setups(model, method, catalog, 1, allow_restricted, **options)
    return found[0] if found else None


def smallest_setups(
    model: ModelSpec, method: Method, catalog: Catalog, n: int = 3, allow_restricted: bool = False, **options: object
) -> tuple[TrainingFit, ...]:
    """The ``n`` smallest setups (distinct GPU models) a run fits on, smallest memory first.

    Region-restricted export parts (``core.regions``) only when ``allow_restricted``.
    """
    est = estimate_finetune(model, method, **options)  # type: ignore[arg-type]
    # ``_verdict`` in plain numbers, for the scan: a setup runs unless each GPU needs more than it has
    need = {count: per_gpu_bytes(est, count) for count in (1, *MULTI_GPU_COUNTS)}
    fits: list[tuple[GpuSpec, int]] = []
    for gpu in catalog.gpus:
        if gpu.backend not in TRAINING_BACKENDS:
            continue
        if restricted(gpu) and not allow_restricted:
            continue
        usable = usable_per_gpu(gpu)
        for count in (1, *MULTI_GPU_COUNTS) if gpu.category == "datacenter" else (1,):
            if need[count] <= usable:  # only the picks get a TrainingFit
                fits.append((gpu, count))
                break  # more of the same GPU only adds memory

    def order(fit: tuple[GpuSpec, int]) -> tuple[int, int, bool, float, str]:
        gpu, count = fit
        price = gpu.price_usd * count if gpu.price_usd is not None else None
        return gpu.memory_bytes * count, count, price is None, price or 0.0, gpu.id

    fits.sort(key=order)
    return tuple(training_fit(est, gpu, count) for gpu, count in fits[:n])
