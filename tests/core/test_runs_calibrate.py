"""A user's calibration (issue 38, ``core.runs.calibrate``): how runs combine, where a factor applies and
what it scales, over every catalog device."""

from __future__ import annotations

import math

import pytest

from catalog.facts import load_facts
from core.estimate import Request, estimate_of, scenario
from core.models import Engine
from core.runs.calibrate import KEEP, PRIOR_MODELS, Calibration, RunFactor, applied, combine

CATALOG = load_facts()
MODEL = CATALOG.model("qwen3-8b")
DEVICES = [g for g in CATALOG.gpus if g.memory_bytes >= 12 << 30]  # every device that holds the model


def factor(
    kind: str, value: float, day: int, quant: str = "Q4_K_M", gpu: str = "rtx-4090", model: str = ""
) -> RunFactor:
    return RunFactor(
        gpu_id=gpu, backend="cuda", quant=quant, kind=kind, factor=value, as_of=f"2026-11-{day:02d}", model_id=model
    )  # type: ignore[arg-type]


def drawn(value: float, models: int) -> float:
    """A geometric mean of runs of ``models`` models as it is applied: drawn toward 1 (``PRIOR_MODELS``)."""
    return float(value ** (models / (models + PRIOR_MODELS)))


def test_runs_combine_per_device_as_the_geometric_mean_of_the_newest_drawn_toward_one_by_their_models():
    runs = [
        factor("decode", 0.5, 1, model="a"),
        *(factor("decode", 0.8, d, model="ab"[d % 2]) for d in range(2, 2 + KEEP)),
    ]
    runs += [
        factor("prefill", 0.9, 3),
        factor("prefill", 1.2, 4, quant="F16"),
        factor("decode", 1.1, 5, gpu="rtx-3090"),
    ]
    three, four = combine(runs)  # sorted by device
    assert (three.gpu_id, three.decode, three.prefill, three.runs) == ("rtx-3090", pytest.approx(drawn(1.1, 1)), (), 1)
    assert four.decode == pytest.approx(drawn(0.8, 2))  # the oldest (0.5) is past KEEP; two models among the kept
    assert four.prefill_for("Q5_K_M") == pytest.approx(drawn(0.9, 1))
    assert four.prefill_for("BF16") == pytest.approx(drawn(1.2, 1))
    assert four.prefill_for("Q8_0") is None and four.as_of == f"2026-11-{1 + KEEP:02d}"


def test_runs_of_one_model_count_once_and_more_models_draw_the_factor_less():
    one = [factor("decode", 0.7, d, model="qwen3-8b") for d in range(1, 5)]
    (cal,) = combine(one)
    assert cal.decode == pytest.approx(drawn(0.7, 1))  # repeated runs average timing noise, not the model's error
    three = [factor("decode", 0.7, d, model=m) for d, m in enumerate(("a", "b", "c"), start=1)]
    (more,) = combine(three)
    assert more.decode == pytest.approx(drawn(0.7, 3))
    assert 0.7 < more.decode < cal.decode < 1.0


@pytest.mark.parametrize("gpu", DEVICES, ids=lambda g: g.id)
def test_a_factor_scales_only_its_own_device_and_kind_on_llama_cpp(gpu):
    assert MODEL is not None
    s = scenario(MODEL, gpu, Request(quant="Q4_K_M", context=4096, engine=Engine.LLAMA_CPP), CATALOG)
    est = estimate_of(s)
    assert s.gpu is not None
    cal = Calibration(
        gpu_id=s.gpu.id.split("@")[0],
        backend=s.gpu.backend.value,
        decode=0.8,
        prefill=(("k", 1.25),),
        as_of="2026-12-01",
        runs=2,
    )
    scaled, note = applied((cal,), s, est)
    if est.offload.mode != "none" or s.rig:
        assert scaled is est and note is None  # an offload's speed is system RAM's, which no run measured
        return
    assert note is not None and note.code == "calibrated" and note.values["device"] == s.gpu.short_name
    assert scaled.speed.decode_tokens_per_s == pytest.approx(0.8 * est.speed.decode_tokens_per_s)
    assert scaled.speed.prefill_tokens_per_s == pytest.approx(1.25 * est.speed.prefill_tokens_per_s)
    assert scaled.speed.ttft_s == pytest.approx(est.speed.ttft_s / 1.25)
    assert scaled.memory == est.memory and scaled.verdict == est.verdict
    other = cal.model_copy(update={"gpu_id": "not-" + cal.gpu_id})
    assert applied((other,), s, est) == (est, None)
    two = cal.model_copy(update={"gpu_count": 2})
    assert applied((two,), s, est) == (est, None)  # a run on two cards says nothing of one
    f16 = scenario(MODEL, gpu, Request(quant="F16", context=4096, engine=Engine.LLAMA_CPP), CATALOG)
    f16_est = estimate_of(f16)
    if f16_est.offload.mode == "none":
        decode_only, n = applied((cal,), f16, f16_est)
        assert n is not None and n.code == "calibrated_decode"
        assert decode_only.speed.prefill_tokens_per_s == f16_est.speed.prefill_tokens_per_s
        assert math.isclose(decode_only.speed.decode_tokens_per_s, 0.8 * f16_est.speed.decode_tokens_per_s)


def test_vllm_answers_are_never_scaled_by_llama_cpp_runs():
    gpu = CATALOG.gpu("h100-sxm") or next(g for g in CATALOG.gpus if g.memory_bytes >= 80 << 30)
    assert MODEL is not None
    s = scenario(MODEL, gpu, Request(engine=Engine.VLLM), CATALOG)
    assert s.gpu is not None
    cal = Calibration(gpu_id=s.gpu.id, backend=s.gpu.backend.value, decode=0.5, as_of="2026-12-01", runs=1)
    est = estimate_of(s)
    assert applied((cal,), s, est) == (est, None)
