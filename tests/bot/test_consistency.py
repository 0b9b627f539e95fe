"""One number, one rule: per-user speed, total speed and users agree across /fit, /speed and /cloud, as
text and in ``Subject.figures``; time to first token grows with the prompt; ``--json`` carries figures.

Issue 20: Qwen3-32B on an RTX 4090 with 4 users said 17.0 tok/s each on /fit and 34.1 on /speed; the
/speed table said "16 users, 44.5 tok/s each, 356 together"; /cloud said "4 users batched" above a
"×8" table. Every card now reads ``core.speed.serving.decode_speeds`` through the one Analysis.
"""

from __future__ import annotations

import json

import pytest

from bot.adapters.console import ask as ask_json
from bot.render.text import to_console
from bot.service import Service
from catalog.facts import load_facts
from core.estimate import Request, estimate_of, scenario, varied
from locales import tokens_per_s

SETUPS = [  # (model, device, users): dense and MoE, fits, tight and offload, one to 16 users, 1-2 GPUs
    ("qwen3-32b", "rtx 4090", 4),
    ("qwen3-32b", "rtx 5090", 4),
    ("qwen3-32b", "h100", 8),
    ("llama-3.1-8b-instruct", "rtx 4090", 1),
    ("llama-3.1-8b-instruct", "rtx 3090", 8),
    ("llama-3.1-8b-instruct", "rtx 3060 12gb", 2),
    ("llama-3.1-8b-instruct", "h100", 16),
    ("llama-3.3-70b-instruct", "h100", 2),
    ("llama-3.3-70b-instruct", "2x rtx 3090", 2),
    ("gpt-oss-20b", "rtx 4090", 4),
    ("gpt-oss-120b", "h100", 4),
    ("glm-4.5-air", "rtx 4090", 2),
    ("glm-4.5-air", "h100", 4),
    ("qwen3-30b-a3b", "rtx 4090", 8),
    ("qwen3-30b-a3b", "rtx 5090", 16),
    ("qwen3-14b", "rtx 4090", 4),
    ("qwen3-8b", "rtx 3090", 16),
    ("gemma-3-27b-it", "rtx 4090", 2),
    ("mistral-small-3.2-24b", "rtx 5090", 4),
    ("phi-4", "rtx 4090", 8),
]


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(load_facts())


async def figures(service: Service, text: str) -> tuple[dict, str]:
    reply = await service.answer(text, "en")
    assert reply.subjects and reply.subjects[0].figures is not None, f"{reply.kind}: {reply.summary[:200]}"
    return reply.subjects[0].figures.model_dump(), to_console(reply)


@pytest.mark.parametrize(("model", "device", "users"), SETUPS)
async def test_users_per_user_and_total_agree_across_fit_speed_and_cloud(service, model, device, users):
    fit, fit_text = await figures(service, f"/fit {model} {device} {users} users")
    speed, speed_text = await figures(service, f"/speed {model} {device} {users} users")
    keys = ("users", "users_at_once", "per_user_tokens_per_s", "total_tokens_per_s", "verdict")
    assert {k: fit[k] for k in keys} == {k: speed[k] for k in keys}
    assert fit["users"] == users
    if fit["verdict"] == "no_fit":
        return
    per_user, total = fit["per_user_tokens_per_s"], fit["total_tokens_per_s"]
    assert users * per_user == pytest.approx(total, rel=1e-3)
    assert 1 <= fit["users_at_once"] <= users
    # the same numbers as text: /fit's users row and /speed's row for the asked number of users
    if users > 1:
        for text in (fit_text, speed_text):
            assert tokens_per_s(per_user, "en") in text and tokens_per_s(total, "en") in text, text
    # /cloud batches the same users; an offer on this very device (when one holds it) has the same speeds
    cloud, cloud_text = await figures(service, f"/cloud {model} {users} users")
    assert cloud["cost_users"] == users
    if users > 1 and cloud["offers"]:
        assert f"×{users}" in cloud_text and f"with {users} users" in cloud_text
    gpu_id = (await service.answer(f"/fit {model} {device}", "en")).subjects[0].gpu_id
    same = [o for o in cloud["offers"] if o["gpu_id"] == gpu_id and o["gpu_count"] == 1]
    if same and fit["verdict"] in ("fits", "tight") and "2x" not in device:
        offer = same[0]
        assert offer["users"] == users and offer["users_at_once"] == fit["users_at_once"]
        assert offer["per_user_tokens_per_s"] == pytest.approx(per_user, rel=1e-3)
        assert offer["total_tokens_per_s"] == pytest.approx(total, rel=1e-3)


def test_time_to_first_token_grows_with_the_prompt():
    catalog = load_facts()
    for model_id, gpu_id in (
        ("qwen3-32b", "rtx-4090"),
        ("llama-3.1-8b-instruct", "rtx-3090"),
        ("gpt-oss-120b", "h100-sxm"),
    ):
        model, gpu = catalog.model(model_id), catalog.gpu(gpu_id)
        assert model is not None and gpu is not None
        base = scenario(model, gpu, Request(context=32768), catalog)
        ttfts = [estimate_of(varied(base, prompt_tokens=p)).speed.ttft_s for p in (256, 1024, 4096, 16384, 32768)]
        assert ttfts == sorted(ttfts) and len(set(ttfts)) == len(ttfts), ttfts


async def test_speed_table_ttft_grows_with_context(service):
    reply = await service.answer("/speed qwen3-8b rtx 4090", "en")
    assert reply.table is not None
    ttft = [float(row[3].replace(",", "")) for row in reply.table.rows]
    assert len(ttft) >= 3 and ttft == sorted(ttft) and len(set(ttft)) == len(ttft), ttft


def test_prompt_never_longer_than_the_context():
    catalog = load_facts()
    model, gpu = catalog.model("qwen3-8b"), catalog.gpu("rtx-4090")
    assert model is not None and gpu is not None
    assert scenario(model, gpu, Request(context=2048), catalog).prompt_tokens == 2048
    assert scenario(model, gpu, Request(), catalog).prompt_tokens == 4096


def test_ask_json_carries_figures_next_to_subjects():
    service = Service(load_facts())
    data = json.loads(ask_json(service, "/fit qwen3-32b rtx 4090 4 users", "en", as_json=True))
    (subject,) = data["subjects"]
    fig = subject["figures"]
    memory = fig["memory"]
    for key in ("weights_gib", "kv_cache_gib", "overhead_gib", "total_gib", "gpu_gib", "ram_gib", "usable_gib"):
        assert memory[key] >= 0, key
    assert fig["verdict"] in ("fits", "tight", "offload", "no_fit")
    assert fig["decode_band"][0] <= fig["decode_tokens_per_s"] <= fig["decode_band"][1]
    assert fig["prefill_band"][0] <= fig["prefill_tokens_per_s"] <= fig["prefill_band"][1]
    assert fig["ttft_s"] > 0 and fig["prompt_tokens"] == 4096
    assert fig["users"] == 4 and 1 <= fig["users_at_once"] <= 4
    assert fig["usd_per_million_tokens"] > 0
