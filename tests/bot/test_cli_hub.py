"""`fitbot ask` looks a new repo up on Hugging Face like the bots do (real huggingface_hub, FakeHub on loopback)."""

from __future__ import annotations

import json

import pytest

from bot.app import cli
from fitbot_fakes.hf_hub import LLAMA_8B_CONFIG, LLAMA_8B_PARAMS, FakeFile, FakeHub, FakeRepo

REPO = "Qwen/SomeNewModel-7B"


def _online(monkeypatch, endpoint: str) -> None:
    """Point the CLI at the fake hub; huggingface_hub snapshots HF_HUB_OFFLINE (set by conftest) at import."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def hub():
    repo = FakeRepo(
        REPO,
        {"config.json": FakeFile(json.dumps(LLAMA_8B_CONFIG).encode())},
        safetensors={"parameters": {"BF16": LLAMA_8B_PARAMS}, "total": LLAMA_8B_PARAMS},
    )
    with FakeHub([repo]) as fake:
        yield fake


def test_ask_looks_a_pasted_repo_up_on_the_hub(hub, monkeypatch, capsys) -> None:
    _online(monkeypatch, hub.endpoint)
    assert cli.main(["ask", f"{REPO} on a 4090"]) == 0
    out = capsys.readouterr().out
    assert "SomeNewModel-7B" in out and "RTX 4090" in out
    assert hub.requests_for(REPO), "the CLI never asked the hub"


def test_ask_offline_says_it_cannot_look_it_up(monkeypatch, capsys) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert cli.main(["ask", f"{REPO} on a 4090"]) == 0
    out = capsys.readouterr().out
    assert "offline" in out.lower() and "paste" not in out.lower()


def test_a_catalog_model_whose_live_config_differs_is_answered_from_the_live_config(monkeypatch, capsys) -> None:
    from catalog.importers.model_configs import stored_config

    live = json.loads(json.dumps(stored_config("Qwen/Qwen3-8B")))
    live["max_position_embeddings"] = 131072  # the hub's config moved on since the catalog copy
    repo = FakeRepo("Qwen/Qwen3-8B", {"config.json": FakeFile(json.dumps(live).encode())})
    with FakeHub([repo]) as fake:
        _online(monkeypatch, fake.endpoint)
        assert cli.main(["ask", "qwen3 8b on a 4090 at 100k"]) == 0
    out = capsys.readouterr().out
    assert "differs from the catalog (max_context)" in out and "live config" in out


def test_a_catalog_model_that_agrees_with_the_hub_gets_no_note(monkeypatch, capsys) -> None:
    from catalog.importers.model_configs import stored_config

    repo = FakeRepo("Qwen/Qwen3-8B", {"config.json": FakeFile(json.dumps(stored_config("Qwen/Qwen3-8B")).encode())})
    with FakeHub([repo]) as fake:
        _online(monkeypatch, fake.endpoint)
        assert cli.main(["ask", "qwen3 8b on a 4090"]) == 0
        assert fake.requests_for("Qwen/Qwen3-8B"), "the live config was never asked for"
    assert "differs from the catalog" not in capsys.readouterr().out
