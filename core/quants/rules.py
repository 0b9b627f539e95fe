"""Advice people would follow: which quants and which upgrades are worth suggesting for a setup.

* No quant below 2 bits per weight (IQ1_*, Q1_0, TQ1_0) for a dense model under 70B: at that size
  a 1-bit file is broken rather than small (llama.cpp's IQ1 types were made for 70B+ and MoE
  models; a smaller model at IQ2 or a smaller sibling is the better answer).
* No low-bit rung below 3 bits for a model that ships natively in MXFP4 (gpt-oss): its experts are
  already 4.25-bit, so the published "2-bit" and "1-bit" GGUFs of it are the same size as MXFP4 and
  nobody runs them; suggesting one would promise a saving that does not exist.
* No "add a second GPU" for a laptop or a Mac: neither takes one.
"""

from __future__ import annotations

from core.models import GpuSpec, ModelSpec

ONE_BIT_MIN_PARAMS = 70e9  # dense models below this never get a sub-2-bit suggestion
ONE_BIT = 2.0  # bits per weight below which a quant counts as 1-bit
# sub-3-bit rungs of the ladder (ids, so that this module needs no catalog); MXFP4 models never get them
LOW_RUNGS = frozenset({"UD-Q2_K_XL", "UD-IQ2_M", "UD-IQ2_XXS", "UD-IQ1_M", "UD-IQ1_S", "IQ2_M", "IQ2_XXS"})
ONE_BIT_RUNGS = frozenset({"IQ1_M", "IQ1_S", "UD-IQ1_M", "UD-IQ1_S", "Q1_0", "TQ1_0"})


def sensible(model: ModelSpec, quant_id: str) -> bool:
    """Whether a ladder rung is one people would run for this model."""
    qid = quant_id.upper()
    if model.native_dtype == "mxfp4" and (qid in LOW_RUNGS or qid in ONE_BIT_RUNGS):
        return False
    return not (qid in ONE_BIT_RUNGS and not model.is_moe and model.total_params < ONE_BIT_MIN_PARAMS)


def no_second_gpu(gpu: GpuSpec) -> bool:
    """A laptop GPU or a Mac: a second card is not an option to suggest."""
    return gpu.unified_memory or gpu.form_factor in ("laptop", "mac") or gpu.category == "apple"
