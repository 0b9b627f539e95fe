"""Index models without architecture data (issue 22, item 9): online, the indexed repo's config.json
comes from the hub through the one look-up path (the real huggingface_hub client against the fake hub
on 127.0.0.1) and gets a full card naming the repo; offline or when the hub fails, a memory-only card."""

from __future__ import annotations

import json

import pytest

from bot.service import Service
from catalog.facts import load_facts
from catalog.hub.cache import CachedHubClient
from catalog.hub.client import HubClient
from catalog.hub.search import HubSearch
from fitbot_fakes.hf_hub import FakeFile, FakeHub, FakeRepo
from storage.userdata import UserDataStore

CATALOG = load_facts()
COMMAND_R = "CohereForAI/c4ai-command-r-v01"
# the shape of c4ai-command-r-v01's config.json (Cohere, 35B, full multi-head attention)
COMMAND_R_CONFIG = {
    "architectures": ["CohereForCausalLM"],
    "model_type": "cohere",
    "hidden_size": 8192,
    "intermediate_size": 22528,
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "num_hidden_layers": 40,
    "vocab_size": 256000,
    "max_position_embeddings": 8192,
    "torch_dtype": "float16",
}
COMMAND_R_PARAMS = 34_980_831_232


@pytest.fixture
def fake_hub(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    files = {"config.json": FakeFile(json.dumps(COMMAND_R_CONFIG).encode())}
    params = {"parameters": {"F16": COMMAND_R_PARAMS}, "total": COMMAND_R_PARAMS}
    with FakeHub([FakeRepo(COMMAND_R, files, safetensors=params, downloads=10_000)]) as hub:
        yield hub


@pytest.fixture
async def service(fake_hub, tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        hub = CachedHubClient(HubClient(timeout_s=2.0, endpoint=fake_hub.endpoint), store.hub_cache)
        search = HubSearch(endpoint=fake_hub.endpoint, token=None, timeout_s=5.0)
        yield Service(CATALOG, store=store, hub=hub, search=search)


@pytest.mark.parametrize("text", ["command r on 3090", "passt command r auf meine 3090?"])
async def test_online_the_indexed_repo_is_looked_up_and_answered_in_full(service, fake_hub, text):
    reply = await service.answer(text)
    assert reply.kind == "fit", (reply.kind, reply.summary[:200])
    (subject,) = reply.subjects
    assert subject.model_id == COMMAND_R and subject.gpu_id == "rtx-3090"
    assert {"repo": COMMAND_R} in [n.values for n in subject.notes if n.code == "hub_lookup"]
    assert "memory_only" not in [n.code for n in subject.notes]
    assert any(r.path.endswith("config.json") for r in fake_hub.requests_for(COMMAND_R))
    assert not [r for r in fake_hub.requests if r.path == "/api/models"]  # the index named the repo: no search


@pytest.mark.parametrize("hub_has", ["nothing", "a broken repo"])
async def test_a_failing_look_up_leaves_the_memory_only_card(service, fake_hub, hub_has):
    fake_hub.repos.clear()
    if hub_has == "a broken repo":
        fake_hub.add(FakeRepo(COMMAND_R, info_status=500))
    reply = await service.answer("command r on 3090")
    assert reply.kind == "memory_only", (reply.kind, reply.summary[:200])
    assert "memory_only" in [n.code for s in reply.subjects for n in s.notes]


async def test_offline_is_the_memory_only_card(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        hub = CachedHubClient(HubClient(timeout_s=1.0, endpoint="http://127.0.0.1:9", offline=True), store.hub_cache)
        reply = await Service(CATALOG, store=store, hub=hub).answer("command r on 3090")
    assert reply.kind == "memory_only" and reply.subjects[0].model_id == COMMAND_R
