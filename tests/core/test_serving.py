"""Serving several users, engine by engine (issue 35, item 1), over the class of setups, not one example.

Every engine x dense, MoE, MLA and sliding-window models x consumer, workstation and datacenter devices x
one to a few hundred users x short to long contexts:

* vLLM pages its KV cache: it runs exactly when weights + its activations/CUDA-graph overhead + one
  ``max_model_len`` sequence fit in ``gpu_memory_utilization`` of the GPUs (vLLM's own start-up check),
  whatever the users; how many decode at once is at most the pool over one sequence's KV, at most
  ``max_num_seqs`` and at most the users; the rest queue.
* llama.cpp: ``--parallel N`` slots share ``--ctx-size N x context``, all in the placement (offloading
  when they do not fit); every slot decodes at once.
* Every engine: per-user speed is never above one user's speed on the card's placement, users x per user
  = total, and decode (single and per user) never rises with the context.
* A vLLM setup that runs gets a ``vllm serve`` command with the flags that set these limits.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest

from catalog.facts import load_facts
from core import memory
from core.cost import quote_offers
from core.estimate import EstimateError, Request, estimate_of, scenario
from core.fit import Verdict, place
from core.launch.commands import launch_commands
from core.models import Engine, Hardware, KvCacheType, Workload
from core.speed.device import vllm_max_num_seqs
from core.speed.estimate import batch_speed
from core.weights import weights

CATALOG = load_facts()
MODELS = (
    "llama-3.1-8b-instruct",  # dense GQA
    "qwen3-32b",  # dense GQA
    "gemma-3-27b-it",  # sliding-window layers
    "qwen3-30b-a3b",  # MoE
    "gpt-oss-120b",  # MoE, MXFP4, sliding-window layers
    "glm-4.5-air",  # MoE
    "deepseek-v3",  # MoE, MLA
)
DEVICES = (("rtx-4090", 1), ("rtx-3090", 2), ("l40s", 1), ("a100-80gb-sxm", 1), ("h100-sxm", 1), ("h200-sxm", 8))
USERS = (1, 4, 64, 300)
CONTEXTS = (4096, 32768, 131072)
ENGINES = (Engine.LLAMA_CPP, Engine.VLLM)


def _scenario(engine: Engine, model_id: str, gpu_id: str, count: int, users: int, context: int):
    model, gpu = CATALOG.model(model_id), CATALOG.gpu(gpu_id)
    assert model is not None and gpu is not None, (model_id, gpu_id)
    request = Request(engine=engine, gpu_count=count, concurrent=users, context=context)
    try:
        return scenario(model, gpu, request, CATALOG)
    except EstimateError:
        return None


def _setups():
    for engine, model_id, (gpu_id, count), users in itertools.product(ENGINES, MODELS, DEVICES, USERS):
        runs = [_scenario(engine, model_id, gpu_id, count, users, ctx) for ctx in CONTEXTS]
        yield engine, model_id, gpu_id, count, users, [s for s in runs if s is not None]


SETUPS = list(_setups())


def test_the_class_is_covered():
    # the generator reaches every engine, and both verdicts for vLLM, with several users
    assert {e for e, *_ in SETUPS} == set(ENGINES)
    seen = {
        (s.engine, estimate_of(s).verdict is Verdict.NO_FIT)
        for *_, runs in SETUPS
        for s in runs
        if s.users > 1 and s.engine is Engine.VLLM
    }
    assert seen == {(Engine.VLLM, True), (Engine.VLLM, False)}


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.value)
def test_serving_rules_hold_for_every_setup(engine):
    checked = queued = 0
    for e, model_id, gpu_id, count, users, runs in SETUPS:
        if e is not engine:
            continue
        decode, per_user = [], []
        for s in runs:
            est = estimate_of(s)
            label = (model_id, gpu_id, count, users, s.context)
            if engine is Engine.VLLM:
                # vLLM's start-up rule, computed here from the parts: weights + overhead + ONE sequence
                w = weights(s.model, s.quant, s.measured)
                one = memory.kv_cache_bytes(s.model, s.workload, concurrent=1)
                need = w.total_bytes + memory.VLLM_OVERHEAD_BYTES * count + one
                usable = memory.usable_bytes(s.hardware, s.workload)
                assert (est.verdict is not Verdict.NO_FIT) == (need <= usable), label
                assert est.memory.kv_cache_bytes == one, label  # never users x context up front
            if est.verdict is Verdict.NO_FIT:
                continue
            serving, conc = est.serving, est.speed.concurrency
            # one placement: the card's decode row is the single stream the users are judged against
            assert serving.decode_tokens_per_s == est.speed.decode_tokens_per_s_at_context, label
            assert serving.per_user_tokens_per_s <= serving.decode_tokens_per_s * (1 + 1e-9), label
            assert serving.users * serving.per_user_tokens_per_s == pytest.approx(serving.aggregate_tokens_per_s)
            assert 1 <= serving.users_served <= users, label
            if users > 1:
                assert conc is not None
                if engine is Engine.VLLM:
                    assert serving.users_served <= conc.kv_budget_bytes // conc.kv_bytes_per_sequence, label
                    assert serving.users_served <= vllm_max_num_seqs(s.device), label
                    pool_seqs = min(users, vllm_max_num_seqs(s.device), conc.sequences_fit)
                    assert serving.users_served == pool_seqs, label
                    queued += serving.users_served < users
                else:
                    assert serving.users_served == users, label  # every --parallel slot decodes
                    assert est.memory.kv_cache_bytes == memory.kv_cache_bytes(s.model, s.workload, concurrent=users)
            decode.append(est.speed.decode_tokens_per_s_at_context)
            per_user.append(serving.per_user_tokens_per_s)
            checked += 1
        # longer contexts (with their placement) never decode faster, for one user or each of many
        assert decode == sorted(decode, reverse=True), (model_id, gpu_id, users, decode)
        assert per_user == sorted(per_user, reverse=True), (model_id, gpu_id, users, per_user)
    assert checked > 100
    if engine is Engine.VLLM:
        assert queued > 10  # the pool short of users x context: they queue, the setup still runs


def test_vllm_max_num_seqs_binds_where_the_pool_holds_more():
    s = _scenario(Engine.VLLM, "llama-3.1-8b-instruct", "h200-sxm", 1, 2000, 512)
    assert s is not None
    est = estimate_of(s)
    assert est.speed.concurrency is not None and est.speed.concurrency.sequences_fit > 1024
    assert est.serving.users_served == 1024 == vllm_max_num_seqs(s.device)
    small = _scenario(Engine.VLLM, "llama-3.1-8b-instruct", "rtx-4090", 1, 2000, 256)
    assert small is not None and estimate_of(small).serving.users_served <= 256  # below 70 GiB: 256
    a100 = CATALOG.gpu("a100-80gb-sxm")
    assert a100 is not None and vllm_max_num_seqs(a100) == 256  # vLLM leaves the A100 on the small default


def test_every_running_vllm_setup_gets_a_vllm_serve_command():
    seen = 0
    for engine, _model_id, _gpu, count, users, runs in SETUPS:
        if engine is not Engine.VLLM:
            continue
        for s in runs:
            est = estimate_of(s)
            if est.verdict is Verdict.NO_FIT:
                continue
            first = launch_commands(s, CATALOG, est)[0]
            assert first.engine is Engine.VLLM and first.argv[:2] == ("vllm", "serve")
            argv = list(first.argv)
            assert argv[argv.index("--max-model-len") + 1] == str(s.context)
            assert "--gpu-memory-utilization" in argv
            assert ("--max-num-seqs" in argv) == (users > 1)
            if users > 1:  # the asked users, up to the default the card's "at once" assumes
                assert argv[argv.index("--max-num-seqs") + 1] == str(min(users, vllm_max_num_seqs(s.device)))
            assert ("--tensor-parallel-size" in argv) == (count > 1)
            assert "--parallel" not in argv and "--ctx-size" not in argv
            seen += 1
    assert seen > 50


POOL_ROWS = Path(__file__).resolve().parents[2] / "bench" / "calibration" / "vllm_pool.csv"
POOL_TOLERANCE = 0.15  # the pool is what is left after weights and a measured-on-average overhead


def test_the_pool_rule_against_vllm_start_up_logs():
    """Whether vLLM started at that --max-model-len, and the KV pool in tokens its log reports."""
    rows = list(csv.DictReader(POOL_ROWS.read_text(encoding="utf-8").splitlines()))
    assert len(rows) >= 3 and all(r["source"].startswith("https://") for r in rows)
    for row in rows:
        model, gpu = CATALOG.model(row["model_id"]), CATALOG.gpu(row["gpu_id"])
        assert model is not None and gpu is not None
        bf16 = next(q for q in CATALOG.quants if q.id == "BF16")
        count, ctx = int(row["gpu_count"]), int(row["max_model_len"])
        workload = Workload(
            context=ctx,
            engine=Engine.VLLM,
            kv_cache=KvCacheType.BF16,
            gpu_memory_utilization=float(row["gpu_memory_utilization"]),
            concurrent=64,  # many users: vLLM still only needs one sequence to start
        )
        hardware = Hardware(gpu=gpu, count=count)
        placement = place(model, bf16, hardware, workload)
        assert (placement.verdict is not Verdict.NO_FIT) == (row["starts"] == "yes"), row["note"]
        batch = batch_speed(model, placement.weights, placement, hardware, workload, 64, "BF16")
        per_token = memory.kv_cache_bytes(model, workload, context=16, concurrent=1) / 16
        pool_tokens = batch.kv_budget_bytes / per_token
        assert pool_tokens == pytest.approx(int(row["pool_tokens"]), rel=POOL_TOLERANCE), row["note"]
        if row["starts"] == "yes":  # as many at once as whole max_model_len sequences in the measured pool
            assert batch.batch == min(64, int(row["pool_tokens"]) // ctx), row["note"]


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.value)
def test_cloud_offers_follow_the_same_rule(engine):
    """/cloud prices every offer on its own GPUs with the same rule: no user above one stream, and vLLM
    never needs more than one sequence of KV to hold the model."""
    priced = 0
    for model_id, users, ctx in itertools.product(("qwen3-32b", "gpt-oss-120b", "deepseek-v3"), (1, 64), CONTEXTS):
        model = CATALOG.model(model_id)
        assert model is not None
        try:
            s = scenario(model, None, Request(engine=engine, concurrent=users, context=ctx), CATALOG)
        except EstimateError:
            continue
        for q in quote_offers(s, CATALOG, limit=6):
            assert q.per_user_tokens_per_s <= q.decode_tokens_per_s * (1 + 1e-9), (model_id, q.offer.instance)
            assert 1 <= q.users_served <= q.users == s.cost_users
            if engine is Engine.VLLM:
                assert q.users_served <= vllm_max_num_seqs(q.gpu)
            priced += 1
    assert priced > 20
