"""Weight bytes of a model in a quant: measured file size when known, else a per-tensor-group recipe.

llama.cpp does not quantize every tensor alike (src/llama-quant.cpp, ``llama_tensor_get_type``):
the output projection mostly gets Q6_K, the token embedding keeps the base type (Q2_K/IQ3_S for
the smallest IQ types), and ``attn_v``/``ffn_down`` get more bits in about half the layers for the
_M/_L variants. ``QuantSpec`` carries the resulting average bits per weight of each group; the
dense figure was fitted on llama.cpp's own size table for Llama-3.1-8B
(tools/quantize/README.md @311c2c9), see ``catalog/facts/quants.toml``.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from pydantic import Field

from core.models import Engine, Frozen, ModelSpec, QuantSize, QuantSpec


class ParamGroups(Frozen):
    """Parameter counts by how llama.cpp quantizes and places them."""

    embed: int = Field(ge=0)  # token embedding: stays in system RAM with llama.cpp
    output: int = Field(ge=0)  # lm_head (0 when tied to the embedding)
    dense: int = Field(ge=0)  # attention, norms, dense FFN, shared experts, router
    experts: int = Field(ge=0)  # routed experts of all layers

    @property
    def total(self) -> int:
        return self.embed + self.output + self.dense + self.experts


class WeightEstimate(Frozen):
    total_bytes: int
    embed_bytes: int
    output_bytes: int
    dense_bytes: int
    experts_bytes: int
    measured: bool  # True when total_bytes is a measured file size


def param_groups(model: ModelSpec) -> ParamGroups:
    """``split_params``, memoised per spec object (every quant and every device of a model splits it
    the same way)."""
    hit = _GROUPS.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_GROUPS) >= _MEMO_ENTRIES:
        _GROUPS.clear()
    groups = split_params(model)
    _GROUPS[id(model)] = (model, groups)
    return groups


def split_params(model: ModelSpec) -> ParamGroups:
    """Split the parameter count into embedding, output, dense and routed-expert parameters.

    Routed experts come from the architecture where the catalog counted them from a stored config.json
    (``ModelSpec.expert_params``: experts x MoE layers x 3 x hidden x expert width, plus biases where the
    architecture has them; ``catalog.model_files.params.routed_expert_params``). Only without a config do they
    follow from the publisher's total and active counts: with E experts of which k are used,
    active = shared + routed * k / E and total = shared + routed, so routed = (total - active) / (1 - k / E).
    That fallback is exact only when "active" counts everything but the unused experts; gpt-oss's counts
    leave the embedding out, which took its whole dense part (attention) into the experts.
    Dense is what is left: attention, norms, dense FFN layers, shared experts, routers, MTP layers and a
    vision tower the total counts.
    """
    embed = model.vocab_size * model.hidden_size
    output = 0 if model.tied_embeddings else embed
    experts = 0
    if model.is_moe and model.expert_params:
        experts = model.expert_params
    elif model.is_moe:
        assert model.n_experts and model.experts_per_token
        share = model.experts_per_token / model.n_experts
        if share < 1:  # every expert active (k == E) reads like a dense model
            experts = round((model.total_params - model.active_params) / (1 - share))
    rest = model.total_params - embed - output - experts
    if rest < 0:  # tiny models with a huge vocab and an imprecise total: trust the total
        experts = max(0, experts + rest)
        rest = model.total_params - embed - output - experts
    return ParamGroups(embed=embed, output=output, dense=max(rest, 0), experts=experts)


_GROUPS: dict[int, tuple[ModelSpec, ParamGroups]] = {}  # id() keyed like ``_MEMO`` below


def as_loaded(quant: QuantSpec, measured: QuantSize | None, engine: Engine) -> tuple[QuantSpec, QuantSize | None]:
    """The quant and its measured size as ``engine`` loads them.

    A row's bits describe the GGUF file; where the publisher's safetensors checkpoint holds other tensors
    (``QuantSpec.safetensors``: gpt-oss's MXFP4 checkpoint keeps attention, router, embedding and lm_head in
    BF16, its GGUFs have them in Q8_0), an engine that loads the checkpoint (``Engine.loads_safetensors``:
    vLLM) gets the checkpoint's bits, and the measured GGUF size, a file it never loads, is dropped. Either
    form of the quant may come in (a scenario's quant is passed on): the checkpoint form keeps its
    ``safetensors``, so it stays the checkpoint for vLLM, and llama.cpp gets the catalog row back.
    """
    bits = quant.safetensors
    if bits is None:
        return quant, measured
    known = _LOADED.get(id(quant))
    if known is not None and (known[0] is quant or known[1] is quant):
        row, checkpoint = known
    else:
        if len(_LOADED) >= _LOADED_ENTRIES:
            _LOADED.clear()
        row, checkpoint = (
            quant,
            quant.model_copy(
                update={
                    "bpw_dense": bits.bpw_dense,
                    "bpw_experts": bits.bpw_experts,
                    "bpw_experts_unaligned": None,  # no K/IQ blocks in a checkpoint
                    "bpw_embed": bits.bpw_embed,
                    "bpw_output": bits.bpw_output,
                }
            ),
        )
        _LOADED[id(row)] = _LOADED[id(checkpoint)] = (row, checkpoint)
    if engine.loads_safetensors:
        return checkpoint, None
    return row, measured


# the row and its checkpoint form under the id() of either, both kept in the entry (an id a collected object
# leaves behind never matches, as in ``_MEMO``): one checkpoint object per row, so the weights memo hits
_LOADED: dict[int, tuple[QuantSpec, QuantSpec]] = {}
_LOADED_ENTRIES = 256  # only the rows with a ``safetensors`` table, one set per catalog object


def recipe_weights(model: ModelSpec, quant: QuantSpec) -> WeightEstimate:
    """Estimate weight bytes from the quant's per-group bits per weight."""
    groups = param_groups(model)
    embed = round(groups.embed * quant.bpw_embed / 8)
    # tied embeddings: llama.cpp quantizes the shared tensor with the output type
    if model.tied_embeddings:
        embed = round(groups.embed * quant.bpw_output / 8)
    output = round(groups.output * quant.bpw_output / 8)
    dense = round(groups.dense * quant.bpw_dense / 8)
    experts = round(groups.experts * expert_bpw(model, quant) / 8)
    if is_dynamic(quant) and not groups.experts:
        # Unsloth dynamic quants keep attention high and take the FFN down to the low type; their
        # ``bpw_dense`` was fitted on MoE files, where "dense" is mostly attention. On a dense model the
        # FFN is most of the weights, so it gets the FFN (``bpw_experts``) rate: sizes keep their order
        # (UD-Q2_K_XL below Q3_K_M, the 1-2 bit UD quants distinct).
        attn = min(attention_params(model), groups.dense)
        dense = round((attn * quant.bpw_dense + (groups.dense - attn) * quant.bpw_experts) / 8)
    return WeightEstimate(
        total_bytes=embed + output + dense + experts,
        embed_bytes=embed,
        output_bytes=output,
        dense_bytes=dense,
        experts_bytes=experts,
        measured=False,
    )


def is_dynamic(quant: QuantSpec) -> bool:
    """Unsloth dynamic ("UD-") quants: a per-tensor mix rather than one llama.cpp type."""
    return quant.id.upper().startswith("UD-")


def attention_params(model: ModelSpec) -> int:
    """Q, K, V and O projections of all layers: hidden x head_dim x (2 query/output + 2 key/value heads)."""
    v_dim = model.v_head_dim or model.head_dim
    per_layer = model.hidden_size * (2 * model.n_heads * model.head_dim + model.n_kv_heads * (model.head_dim + v_dim))
    return per_layer * model.n_layers


def expert_bpw(model: ModelSpec, quant: QuantSpec) -> float:
    """Bits per routed-expert weight; K/IQ blocks need rows that are multiples of 256."""
    width = model.moe_intermediate_size
    if width and width % 256 and quant.bpw_experts_unaligned is not None:
        return quant.bpw_experts_unaligned
    return quant.bpw_experts


# id() keyed, with the specs kept in the entry: no field hashing on the hot path, and an id that a
# collected spec leaves behind can never match (the entry holds that spec alive and is checked by identity)
_MEMO: dict[tuple[int, int, int], tuple[ModelSpec, QuantSpec, QuantSize | None, WeightEstimate]] = {}
_MEMO_ENTRIES = 16384  # every catalog model in every quant, with room for Hugging Face models


def weights(model: ModelSpec, quant: QuantSpec, measured: QuantSize | None = None) -> WeightEstimate:
    """Weight bytes, preferring a measured file size and keeping the recipe's split of it.

    Memoised per spec object: the advice scans place one model on every device, and its weights
    never change with the device.
    """
    key = (id(model), id(quant), id(measured))
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is model and hit[1] is quant and hit[2] is measured:
        return hit[3]
    if len(_MEMO) >= _MEMO_ENTRIES:
        _MEMO.clear()
    result = _weights(model, quant, measured)
    _MEMO[key] = (model, quant, measured, result)
    return result


def _weights(model: ModelSpec, quant: QuantSpec, measured: QuantSize | None) -> WeightEstimate:
    recipe = recipe_weights(model, quant)
    if measured is None:
        return recipe
    scale = measured.size_bytes / recipe.total_bytes
    parts = [round(b * scale) for b in (recipe.embed_bytes, recipe.output_bytes, recipe.experts_bytes)]
    return WeightEstimate(
        total_bytes=measured.size_bytes,
        embed_bytes=parts[0],
        output_bytes=parts[1],
        experts_bytes=parts[2],
        dense_bytes=measured.size_bytes - sum(parts),
        measured=True,
    )


def active_weight_bytes(model: ModelSpec, w: WeightEstimate) -> int:
    """Bytes read per generated token: all dense weights plus the routed experts actually used.

    The token embedding is a row lookup, not a full read, so it is left out.
    """
    used = w.experts_bytes
    if model.is_moe:
        assert model.n_experts and model.experts_per_token
        used = round(w.experts_bytes * model.experts_per_token / model.n_experts)
    return w.dense_bytes + w.output_bytes + used
