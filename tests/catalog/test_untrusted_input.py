"""Untrusted model files and hub data: bounded reads, clear messages, nothing invalid cached,
and a slow hub that cannot starve anything else."""

from __future__ import annotations

import asyncio
import json
import struct
import threading
import time

import pytest

from catalog.hub.cache import CachedHubClient
from catalog.hub.client import HubBadData, HubClient, HubUnavailable
from catalog.model_files.config import ConfigError, read_config_file, spec_from_config
from catalog.model_files.gguf import check_gguf_header, read_gguf
from core.models import Provenance
from fitbot_fakes.hf_hub import FakeFile, FakeHub, FakeRepo, make_gguf
from storage.userdata import UserDataStore

LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "intermediate_size": 14336,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}
PROV = Provenance(source="test", as_of="2026-11-30")


def lying_gguf(count: int = 1 << 60) -> bytes:
    """68 bytes: one key whose array claims ``count`` uint8 items."""
    key = b"general.lying_arrays"
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    return head + struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 0, count)


def test_a_gguf_with_a_lying_array_count_is_refused_at_once(tmp_path):
    path = tmp_path / "liar.gguf"
    path.write_bytes(lying_gguf())
    assert len(path.read_bytes()) == 68
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="liar.gguf is not a readable GGUF file"):
        read_gguf(path)
    assert time.perf_counter() - started < 1


def test_a_huge_sparse_gguf_is_not_read_beyond_the_header_cap(tmp_path):
    path = tmp_path / "sparse.gguf"
    with path.open("wb") as fh:
        key = b"tokenizer.ggml.tokens"
        fh.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key)
        fh.write(struct.pack("<IIQ", 9, 8, 40_000_000))  # 40M empty strings: 320 MB of zero lengths
        fh.truncate(2 << 30)
    with pytest.raises(ConfigError, match="header too large"):
        check_gguf_header(path)


def test_a_real_gguf_header_passes_the_bounds(tmp_path):
    path = tmp_path / "ok.gguf"
    path.write_bytes(make_gguf(n_tokens=500))
    check_gguf_header(path)
    model, size, quant = read_gguf(path)
    assert quant == "Q4_K_M" and size.size_bytes > 0


def test_a_huge_config_json_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "config.json"
    with path.open("wb") as fh:
        fh.write(b"{")
        fh.truncate(2 << 30)
    with pytest.raises(ConfigError, match="larger than"):
        read_config_file(path)
    path.write_text(json.dumps(LLAMA))
    assert read_config_file(path)["hidden_size"] == 4096


@pytest.mark.parametrize(
    ("key", "value"),
    [("architectures", 5), ("architectures", {"a": 1}), ("sliding_window", float("nan")), ("sliding_window", 1e400)],
)
def test_wrong_types_and_nan_in_a_config_are_clear_config_errors(key, value):
    with pytest.raises(ConfigError, match="config.json"):
        spec_from_config({**LLAMA, key: value}, "a/b", PROV)


MIXTRAL = {**LLAMA, "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_local_experts": 8}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({**MIXTRAL, "num_experts_per_tok": 16}, "num_experts_per_tok = 16 is more than num_local_experts = 8"),
        ({**LLAMA, "num_key_value_heads": 64}, "num_key_value_heads = 64 is more than num_attention_heads = 32"),
        ({**LLAMA, "num_attention_heads": 0}, "num_attention_heads"),
    ],
)
def test_impossible_configs_are_refused_by_name(config, message):
    """Each value in bounds, together impossible: an internal error in the estimate used to be cached for 7 days."""
    with pytest.raises(ConfigError, match=message):
        spec_from_config(config, "a/b", PROV)
    assert spec_from_config({**MIXTRAL, "num_experts_per_tok": 2}, "a/b", PROV).total_params > 0


@pytest.fixture(scope="module")
def hub():
    bad = json.dumps({**LLAMA, "sliding_window": float("nan"), "architectures": 5}).encode()
    impossible = json.dumps({**MIXTRAL, "num_experts_per_tok": 16}).encode()
    repos = [
        FakeRepo("fitbot-test/nan-config", {"config.json": FakeFile(bad)}),
        FakeRepo("fitbot-test/impossible-moe", {"config.json": FakeFile(impossible)}),
        FakeRepo("fitbot-test/crawl", {"config.json": FakeFile(json.dumps(LLAMA).encode())}, delay_s=1.5),
    ]
    with FakeHub(repos) as fake:
        yield fake


@pytest.fixture(autouse=True)
def online(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


NEMOTRON_H = {
    "architectures": ["NemotronHForCausalLM"],
    "model_type": "nemotron_h",
    "hidden_size": 2688,
    "num_attention_heads": 32,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "vocab_size": 131072,
    "hybrid_override_pattern": "M*M-",
    "num_hidden_layers": 4,
    "mamba_num_heads": 64,
    "mamba_head_dim": 64,
    "ssm_state_size": 128,
    "intermediate_size": 1856,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hybrid_override_pattern": "M*X-"}, "not mamba, attention, moe or mlp"),
        ({"hybrid_override_pattern": None, "layers_block_type": None}, "hybrid_override_pattern"),
        ({"mamba_num_heads": 1 << 20}, "mamba_num_heads"),
        ({"layers_block_type": ["mamba"] * 5000}, "out of bounds"),
    ],
)
def test_a_hostile_per_block_config_is_a_clear_config_error(change, message):
    spec = spec_from_config(NEMOTRON_H, "x/ok", PROV)
    assert (spec.n_full_attention_layers, spec.n_linear_layers, spec.intermediate_size) == (1, 2, 1856)
    with pytest.raises(ConfigError, match=message):
        spec_from_config(NEMOTRON_H | change, "x/bad", PROV)


@pytest.mark.parametrize("repo", ["fitbot-test/nan-config", "fitbot-test/impossible-moe"])
async def test_bad_hub_data_is_a_clear_message_and_never_cached(hub, tmp_path, repo):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        cached = CachedHubClient(HubClient(timeout_s=2.0, endpoint=hub.endpoint), store.hub_cache)
        for _ in range(2):
            with pytest.raises(HubBadData) as info:
                await cached.lookup(repo)
            assert info.value.key == "hub.bad_config"
        assert await store.hub_cache.get(repo) is None
    assert len(hub.requests_for(repo)) >= 4  # asked again, not served from a cache


async def test_a_slow_hub_neither_fills_the_default_executor_nor_is_asked_forever(hub):
    """Stuck hub threads used to fill the loop's default executor: charts waited ~42 s behind them."""
    client = HubClient(timeout_s=1.0, endpoint=hub.endpoint)
    lookups = [asyncio.create_task(client.lookup("fitbot-test/crawl")) for _ in range(20)]
    await asyncio.sleep(0.2)
    started = time.perf_counter()
    assert await asyncio.wait_for(asyncio.to_thread(lambda: 42), 0.5) == 42  # the default executor is free
    assert time.perf_counter() - started < 0.5
    assert sum(t.name.startswith("fitbot-hub") for t in threading.enumerate()) <= 4  # bounded
    results = await asyncio.gather(*lookups, return_exceptions=True)
    assert all(isinstance(r, HubUnavailable) for r in results)
    assert client.breaker.open  # the breaker opened after the timeouts
    asked = len(hub.requests_for("fitbot-test/crawl"))
    started = time.perf_counter()
    with pytest.raises(HubUnavailable):
        await client.lookup("fitbot-test/crawl")
    assert time.perf_counter() - started < 0.1 and len(hub.requests_for("fitbot-test/crawl")) == asked


async def test_a_redirect_loop_at_the_hub_is_a_clear_unreachable_not_an_internal_error():
    from aiohttp import web

    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound(str(request.url))

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", loop)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        with pytest.raises(HubUnavailable) as info:
            await HubClient(timeout_s=2.0, endpoint=f"http://127.0.0.1:{port}").lookup("fitbot-test/dense-8b")
        assert info.value.key == "hub.unreachable"
    finally:
        await runner.cleanup()
