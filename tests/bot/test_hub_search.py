"""Unknown models are looked up on Hugging Face, not swapped: the real huggingface_hub client
searches a fake hub on 127.0.0.1, and the card names the repo it used."""

from __future__ import annotations

import json

import pytest

from bot.service import Service
from catalog.facts import load_facts
from catalog.hub.cache import CachedHubClient
from catalog.hub.client import HubClient
from catalog.hub.search import HubSearch, agrees
from core.query import names as N
from fitbot_fakes.hf_hub import LLAMA_8B_CONFIG, LLAMA_8B_PARAMS, FakeFile, FakeHub, FakeRepo
from storage.userdata import UserDataStore

CATALOG = load_facts()


def repo(repo_id: str, downloads: int, params: int = LLAMA_8B_PARAMS) -> FakeRepo:
    files = {"config.json": FakeFile(json.dumps(LLAMA_8B_CONFIG).encode())}
    return FakeRepo(repo_id, files, safetensors={"parameters": {"BF16": params}, "total": params}, downloads=downloads)


@pytest.fixture
def fake_hub(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    repos = [
        repo("nanolabs/Nimbo-2-1124-7B", 90_000, 7_300_000_000),
        repo("nanolabs/Nimbo-2-1124-7B-Instruct", 120_000, 7_300_000_000),
        repo("nanolabs/Nimbo-2-1124-13B", 200_000, 13_700_000_000),
        repo("someone/Nimbo-2-1124-7B-GGUF", 500_000, 7_300_000_000),
        repo("tiiuae/Falcon3-7B-Instruct", 50_000, 7_460_000_000),
    ]
    with FakeHub(repos) as hub:
        yield hub


@pytest.fixture
async def service(fake_hub, tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        hub = CachedHubClient(HubClient(timeout_s=2.0, endpoint=fake_hub.endpoint), store.hub_cache)
        search = HubSearch(endpoint=fake_hub.endpoint, token=None, timeout_s=5.0)
        yield Service(CATALOG, store=store, hub=hub, search=search)


async def test_an_unknown_model_is_found_by_name_and_the_card_names_the_repo(service, fake_hub):
    reply = await service.answer("can I run nimbo 2 7b on a 3090?")
    assert reply.kind == "fit"
    (subject,) = reply.subjects
    assert subject.model_id == "nanolabs/Nimbo-2-1124-7B-Instruct"  # the most downloaded 7B that is no quant repo
    assert [n.values for n in subject.notes if n.code == "hub_lookup"] == [
        {"repo": "nanolabs/Nimbo-2-1124-7B-Instruct"}
    ]
    assert "nanolabs/Nimbo-2-1124-7B-Instruct" in reply.summary and "Hugging Face" in reply.footer
    searches = [r for r in fake_hub.requests if r.path == "/api/models"]
    assert searches  # the real client asked the hub's search


async def test_a_search_result_is_cached(service, fake_hub):
    await service.answer("nimbo 2 7b on 4090")
    before = len([r for r in fake_hub.requests if r.path == "/api/models"])
    await service.answer("nimbo 2 7b on 3090")
    assert len([r for r in fake_hub.requests if r.path == "/api/models"]) == before


async def test_no_hit_is_an_honest_i_dont_know_in_the_users_language(service):
    reply = await service.answer("passt zorblax 9 12b auf eine 4090?")
    assert reply.kind == "suggest" and reply.locale == "de"
    assert "zorblax 9 12b" in reply.summary and "kenne ich nicht" in reply.summary


async def test_a_dead_hub_is_no_error(tmp_path):
    search = HubSearch(endpoint="http://127.0.0.1:9", token=None, timeout_s=1.0)
    assert await search.find("olmo 2 7b") == ()


async def test_offline_search_asks_nothing():
    assert await HubSearch(endpoint="http://127.0.0.1:9", token=None, offline=True).find("olmo 2 7b") == ()


@pytest.mark.parametrize(
    ("typed", "repo_id", "same"),
    [
        ("nimbo 2 7b", "nanolabs/Nimbo-2-1124-7B", True),
        ("nimbo 2 7b", "nanolabs/Nimbo-2-1124-13B", False),
        ("gemma 3 1b", "google/gemma-3-1b-it", True),
        ("gemma 3 1b", "google/gemma-3-12b-it", False),
        ("qwen2.5 coder 7b", "Qwen/Qwen2.5-7B-Instruct", False),
        ("qwen2.5 coder 7b", "Qwen/Qwen2.5-Coder-7B-Instruct", True),
        ("phi 4 mini", "microsoft/phi-4", False),
    ],
)
def test_a_search_hit_must_be_the_model_typed(typed, repo_id, same):
    assert agrees(N.typed(typed), repo_id) is same
