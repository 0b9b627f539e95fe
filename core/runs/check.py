"""Whether a pasted run can be true: above the roofline of its setup it cannot, far below it is not a
setup FitBot can learn from (a model partly in system RAM, another device, a busy GPU).

Decode reads every active weight once per token, so no setup generates faster than
``bandwidth / bytes_read_per_token``; prefill multiplies every active weight twice per prompt token,
so no setup processes prompts faster than ``peak_flops / (2 * gemm_params)``. The peak is the int8
rate (``INT8_OVER_MATRIX`` x the fp16 matrix rate FitBot uses: llama.cpp's quantized prompt kernels run
on int8 dot products). Both bounds are multiplied by ``SLACK``: spec sheets round, boost clocks vary,
and a bound is for refusing what is impossible, not what is merely fast.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from core.models import GpuSpec, ModelSpec
from core.speed.arch import matrix_tflops
from core.speed.model import gemm_params_per_token, token_read_bytes
from core.weights import WeightEstimate

SLACK = 1.5  # the generous factor on both physical bounds
INT8_OVER_MATRIX = 2.0  # int8 tensor/dot-product rate over the fp16 matrix rate (Turing on, RDNA3, Arc)
LOWEST_SHARE = 0.25  # a run below a quarter of FitBot's estimate is not a fully-on-GPU run of that setup

Verdict = Literal["ok", "above_bandwidth", "above_compute", "far_below"]


class Bounds(NamedTuple):
    decode_tokens_per_s: float  # the bandwidth roofline x SLACK
    prefill_tokens_per_s: float  # the compute roofline x SLACK


def bounds(model: ModelSpec, w: WeightEstimate, gpu: GpuSpec, count: int = 1) -> Bounds:
    """The fastest a setup could run, times ``SLACK``: ``count`` devices together (tensor-parallel at best)."""
    per_token = max(token_read_bytes(model, w), 1.0)
    decode = count * gpu.bandwidth_bytes_per_s / per_token
    flops = count * matrix_tflops(gpu)[0] * 1e12 * INT8_OVER_MATRIX
    prefill = flops / (2.0 * max(gemm_params_per_token(model), 1.0))
    return Bounds(decode * SLACK, prefill * SLACK)


def check(kind: Literal["decode", "prefill"], measured: float, estimate: float, limits: Bounds) -> Verdict:
    """Whether ``measured`` tokens/s can be a run of the setup whose estimate and bounds are given."""
    if kind == "decode" and measured > limits.decode_tokens_per_s:
        return "above_bandwidth"
    if kind == "prefill" and measured > limits.prefill_tokens_per_s:
        return "above_compute"
    if measured < LOWEST_SHARE * estimate:
        return "far_below"
    return "ok"
