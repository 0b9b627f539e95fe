"""A user's calibration (issue 38, ``core.runs.calibrate``): how runs combine, where a factor applies and
what it scales, over every catalog device."""

from __future__ import annotations

import math

import pytest

from catalog.facts import load_facts
from core.estimate import Request, estimate_of, scenario
from core.models import Engine
from core.runs.calibrate import DEEP_SHARE, KEEP, PRIOR_MODELS, Calibration, RunFactor, applied, combine

CATALOG = load_facts()
MODEL = CATALOG.model("qwen3-8b")
DEVICES = [g for g in CATALOG.gpus if g.memory_bytes >= 12 << 30]  # every device that holds the model


def factor(
    kind: str,
    value: float,
    day: int,
    quant: str = "Q4_K_M",
    gpu: str = "rtx-4090",
    model: str = "",
    share: float = 0.0,
) -> RunFactor:
    return RunFactor(
        gpu_id=gpu,
        backend="cuda",
        quant=quant,
        kind=kind,  # type: ignore[arg-type]
        factor=value,
        as_of=f"2026-11-{day:02d}",
        model_id=model,
        attention_share=share,
    )


def drawn(value: float, models: int) -> float:
    """A geometric mean of runs of ``models`` models as it is applied: drawn toward 1 (``PRIOR_MODELS``)."""
    return float(value ** (models / (models + PRIOR_MODELS)))


def test_runs_combine_per_device_as_the_geometric_mean_of_the_newest_drawn_toward_one_by_their_models():
    runs = [
        factor("decode", 0.5, 1, model="a"),
        *(factor("decode", 0.8, d, model="ab"[d % 2]) for d in range(2, 2 + KEEP)),
    ]
    runs += [
        factor("prefill", 0.9, 3, model="a"),
        factor("prefill", 1.2, 4, quant="F16", model="a"),
        factor("decode", 1.1, 5, gpu="rtx-3090"),
    ]
    three, four = combine(runs)  # sorted by device
    assert (three.gpu_id, three.decode, three.prefill_matrix, three.runs) == (
        "rtx-3090",
        pytest.approx(drawn(1.1, 1)),
        None,
        1,
    )
    assert three.prefill_for(0.0) is None
    assert four.decode == pytest.approx(drawn(0.8, 2))  # the oldest (0.5) is past KEEP; two models among the kept
    # short prompts of any quant family: one factor for the prompt's GEMMs, standing for its attention too
    assert four.prefill_matrix == pytest.approx(drawn(math.sqrt(0.9 * 1.2), 1)) and four.prefill_attention is None
    assert four.prefill_for(0.0) == pytest.approx(four.prefill_matrix) == four.prefill_for(0.7)
    assert four.as_of == f"2026-11-{1 + KEEP:02d}"


@pytest.mark.parametrize("matrix, attention", [(0.8, 1.4), (1.25, 0.6), (0.7, 0.7), (1.0, 2.0)])
@pytest.mark.parametrize("deep", [0.45, 0.7, 0.9])
def test_runs_at_depth_tell_the_prompt_s_attention_apart_from_its_gemms(matrix, attention, deep):
    """A rig whose GEMMs run at ``matrix`` and whose attention runs at ``attention`` of the formula: a short
    prompt and a prompt at depth of one model give both back (drawn toward 1 by one model), and a prompt is
    scaled by its own share of each."""

    def measured(share: float) -> float:  # measured / estimated of a prompt with this attention share
        return 1.0 / ((1 - share) / matrix + share / attention)

    runs = [factor("prefill", measured(s), 3, model="a", share=s) for s in (0.01, 0.05, deep)]
    (cal,) = combine(runs)
    assert cal.prefill_matrix == pytest.approx(drawn(matrix, 1), rel=1e-6)
    assert cal.prefill_attention == pytest.approx(drawn(attention, 1), rel=1e-6)
    expected = 1.0 / ((1 - 0.5) / drawn(matrix, 1) + 0.5 / drawn(attention, 1))
    assert cal.prefill_for(0.5) == pytest.approx(expected)
    assert cal.prefill_for(0.0) == pytest.approx(cal.prefill_matrix)


def test_prompt_runs_all_short_or_all_deep_give_one_prompt_factor():
    for share in (0.0, DEEP_SHARE + 0.1):
        runs = [factor("prefill", 0.8, d, model="ab"[d % 2], share=share) for d in (1, 2)]
        (cal,) = combine(runs)
        assert cal.prefill_attention is None and cal.prefill_matrix == pytest.approx(drawn(0.8, 2))


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
        prefill_matrix=1.25,
        prefill_attention=2.0,
        as_of="2026-12-01",
        runs=2,
    )
    scaled, note = applied((cal,), s, est)
    if est.offload.mode != "none" or s.rig:
        assert scaled is est and note is None  # an offload's speed is system RAM's, which no run measured
        return
    assert note is not None and note.code == "calibrated" and note.values["device"] == s.gpu.short_name
    assert scaled.speed.decode_tokens_per_s == pytest.approx(0.8 * est.speed.decode_tokens_per_s)
    shares = est.speed.prefill_attention_share, est.speed.ttft_attention_share
    assert 0.0 <= shares[0] <= shares[1] < 1.0  # pp512 at depth 0 is no more attention than the longer prompt
    assert scaled.speed.prefill_tokens_per_s == pytest.approx(
        cal.prefill_for(shares[0]) * est.speed.prefill_tokens_per_s
    )
    assert scaled.speed.ttft_s == pytest.approx(est.speed.ttft_s / cal.prefill_for(shares[1]))
    assert 1.25 <= cal.prefill_for(shares[0]) <= cal.prefill_for(shares[1]) <= 2.0
    assert scaled.memory == est.memory and scaled.verdict == est.verdict
    other = cal.model_copy(update={"gpu_id": "not-" + cal.gpu_id})
    assert applied((other,), s, est) == (est, None)
    two = cal.model_copy(update={"gpu_count": 2})
    assert applied((two,), s, est) == (est, None)  # a run on two cards says nothing of one
    decode_only, n = applied((cal.model_copy(update={"prefill_matrix": None, "prefill_attention": None}),), s, est)
    assert n is not None and n.code == "calibrated_decode"  # the runs timed no prompt
    assert decode_only.speed.prefill_tokens_per_s == est.speed.prefill_tokens_per_s
    assert math.isclose(decode_only.speed.decode_tokens_per_s, 0.8 * est.speed.decode_tokens_per_s)


def test_vllm_answers_are_never_scaled_by_llama_cpp_runs():
    gpu = CATALOG.gpu("h100-sxm") or next(g for g in CATALOG.gpus if g.memory_bytes >= 80 << 30)
    assert MODEL is not None
    s = scenario(MODEL, gpu, Request(engine=Engine.VLLM), CATALOG)
    assert s.gpu is not None
    cal = Calibration(gpu_id=s.gpu.id, backend=s.gpu.backend.value, decode=0.5, as_of="2026-12-01", runs=1)
    est = estimate_of(s)
    assert applied((cal,), s, est) == (est, None)
