"""Live Hub look-ups: the real huggingface_hub client against FakeHub on 127.0.0.1, never the internet.

huggingface_hub snapshots HF_HUB_OFFLINE into ``constants`` at import time, and conftest sets it
to 1 for every test, so the ``hub`` fixture flips both the variable and the library's constant.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from datetime import UTC, datetime, timedelta

import pytest

from catalog.hub.cache import CachedHubClient, HubCache
from catalog.hub.client import (
    HubBadData,
    HubClient,
    HubError,
    HubRateLimited,
    HubUnavailable,
    HubUnsupportedArchitecture,
    InvalidRepoRef,
    QuantNotFound,
    RepoGated,
    RepoNotFound,
    RepoRef,
    gguf_quant,
    group_gguf_files,
    parse_gguf_prefix,
    parse_repo_ref,
)
from catalog.model_files.config import UnsupportedArchitecture
from fitbot_fakes.hf_hub import LLAMA_8B_CONFIG, LLAMA_8B_PARAMS, SHA, FakeFile, FakeHub, FakeRepo, make_gguf
from storage.userdata import USER_MIGRATIONS, UserDataStore


def hub_client(**options):
    """A client configured the way ``Settings.hub_client_options`` does, from what the test set in the environment."""
    return HubClient(
        endpoint=os.environ.get("HF_ENDPOINT"),
        **options,
    )


TOKEN = "hf_" + "placeholder-for-tests-" * 2  # built here, so the source holds no token-shaped literal


@pytest.fixture(scope="module")
def fake_hub():
    with FakeHub() as hub:
        yield hub


@pytest.fixture
def hub(fake_hub, monkeypatch):
    """The fake, its request log cleared, with HF_ENDPOINT pointing at it and offline mode off."""
    import huggingface_hub.constants

    fake_hub.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.endpoint)
    return fake_hub


@pytest.fixture
def client():
    return hub_client(timeout_s=2.0)


def dead_endpoint() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- repo references ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "repo_id", "quant"),
    [
        ("Qwen/Qwen3-14B-AWQ", "Qwen/Qwen3-14B-AWQ", None),
        ("  meta-llama/Llama-3.1-8B-Instruct ", "meta-llama/Llama-3.1-8B-Instruct", None),
        ("unsloth/Qwen3-14B-GGUF:Q4_K_M", "unsloth/Qwen3-14B-GGUF", "Q4_K_M"),
        ("unsloth/Qwen3-14B-GGUF:ud-q4_k_xl", "unsloth/Qwen3-14B-GGUF", "UD-Q4_K_XL"),
        ("https://huggingface.co/Qwen/Qwen3-14B-AWQ", "Qwen/Qwen3-14B-AWQ", None),
        ("https://huggingface.co/Qwen/Qwen3-14B-AWQ/", "Qwen/Qwen3-14B-AWQ", None),
        ("https://huggingface.co/Qwen/Qwen3-14B-AWQ/tree/main", "Qwen/Qwen3-14B-AWQ", None),
        ("https://huggingface.co/Qwen/Qwen3-14B-AWQ?library=transformers", "Qwen/Qwen3-14B-AWQ", None),
        ("huggingface.co/bartowski/Llama-3.2-1B-GGUF", "bartowski/Llama-3.2-1B-GGUF", None),
        ("hf.co/bartowski/Llama-3.2-1B-GGUF:Q8_0", "bartowski/Llama-3.2-1B-GGUF", "Q8_0"),
        ("https://hf.co/org/m/blob/main/m-IQ4_XS.gguf", "org/m", "IQ4_XS"),
        ("<https://huggingface.co/org/model>", "org/model", None),
        ("HTTPS://www.huggingface.co/org/model", "org/model", None),
    ],
)
def test_parse_repo_ref_accepts(text, repo_id, quant):
    assert parse_repo_ref(text) == RepoRef(repo_id, quant)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "gpt2",
        "owner/",
        "/name",
        "owner/name/extra",
        "owner//name",
        "owner/name:",
        "a/b:Q4 K M",
        "owner /name",
        "owner/na me",
        "owner/name\nother/x",
        "owner/name\x00",
        "../etc/passwd",
        "owner/..",
        "owner/../x",
        "../../x/y",
        "owner/name..x",
        "owner/na--me",
        "owner/name.",
        "owner/name.git",
        "-owner/name",
        "owner/name;rm -rf /",
        "owner/name' OR 1=1--",
        "owner/name?x=1",
        "owner/name#frag",
        "owner/name%2F..",
        "owner\\name",
        "owner/näme",
        "https://evil.example/owner/name",
        "https://huggingface.co.evil.example/o/n",
        "https://huggingface.co@evil.example/o/n",
        "https://huggingface.co:8443/o/n",
        "ftp://huggingface.co/o/n",
        "https://huggingface.co/datasets/o/n",
        "https://huggingface.co/spaces/o/n",
        "https://huggingface.co/o",
        "https://huggingface.co/o/n/settings",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "o/n:Q4_K_M:Q8_0",
        "o/n:$(id)",
        "a" * 97 + "/b",
        "o/" + "b" * 97,
    ],
)
def test_parse_repo_ref_rejects(text):
    with pytest.raises(InvalidRepoRef) as info:
        parse_repo_ref(text)
    assert info.value.key == "hub.invalid_ref"


@pytest.mark.parametrize(
    ("filename", "quant"),
    [
        ("Qwen3-14B-Q4_K_M.gguf", "Q4_K_M"),
        ("Qwen3-14B-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"),
        ("Q8_0/Qwen3-14B-Q8_0-00001-of-00002.gguf", "Q8_0"),
        ("Llama-3.2-1B-Instruct-IQ4_XS.gguf", "IQ4_XS"),
        ("model.i1-Q4_K_M.gguf", "Q4_K_M"),
        ("gpt-oss-20b-MXFP4.gguf", "MXFP4"),
        ("Qwen2.5-7B-Instruct-bf16-00001-of-00004.gguf", "BF16"),
        ("QwQ-32B-Q3_K_S.gguf", "Q3_K_S"),
        ("README.gguf", None),
    ],
)
def test_gguf_quant_from_file_name(filename, quant):
    assert gguf_quant(filename) == quant


def test_group_gguf_files_sums_splits_and_skips_projectors():
    groups = group_gguf_files(
        [
            ("m-Q4_K_M.gguf", 100),
            ("Q8_0/m-Q8_0-00001-of-00002.gguf", 70),
            ("Q8_0/m-Q8_0-00002-of-00002.gguf", 60),
            ("BF16/m-BF16-00001-of-00003.gguf", 90),
            ("BF16/m-BF16-00002-of-00003.gguf", 90),
            ("mmproj-F16.gguf", 50),
            ("config.json", 1),
        ]
    )
    assert {q: (g.size_bytes, g.complete) for q, g in groups.items()} == {
        "Q4_K_M": (100, True),
        "Q8_0": (130, True),
        "BF16": (180, False),
    }


# --- GGUF header prefix ---------------------------------------------------------------------------


def test_parse_gguf_prefix_reads_real_header():
    meta = parse_gguf_prefix(make_gguf())
    assert meta["general.architecture"] == "llama"
    assert meta["llama.block_count"] == 32 and meta["llama.attention.head_count_kv"] == 8
    assert meta["tokenizer.ggml.tokens#len"] == 3000


def test_parse_gguf_prefix_survives_every_cut():
    data = make_gguf(n_tokens=50)
    for cut in range(24, len(data), 7):
        meta = parse_gguf_prefix(data[:cut])  # never raises, only knows less
        assert set(meta) <= set(parse_gguf_prefix(data)) | {k + "#len" for k in meta}


def test_parse_gguf_prefix_rejects_non_gguf():
    from catalog.model_files.config import ConfigError

    with pytest.raises(ConfigError):
        parse_gguf_prefix(b"<html>not a gguf file at all, sorry</html>")


# --- successful look-ups --------------------------------------------------------------------------


async def test_dense_model_from_config_and_safetensors(hub, client):
    model = await client.lookup("fitbot-test/dense-8b")
    spec = model.spec
    assert (spec.n_layers, spec.hidden_size, spec.n_heads, spec.n_kv_heads, spec.head_dim) == (32, 4096, 32, 8, 128)
    assert spec.vocab_size == 128256 and spec.max_context == 131072
    assert spec.total_params == spec.active_params == LLAMA_8B_PARAMS
    assert spec.hf_repo == "fitbot-test/dense-8b" and spec.provenance.unverified == ()
    assert model.revision == SHA and model.source_file == "config.json" and model.sizes == ()
    assert model.url == f"{hub.endpoint}/fitbot-test/dense-8b"
    assert SHA[:12] in spec.provenance.source and "Hugging Face" in spec.provenance.source
    info, config = hub.requests_for("fitbot-test/dense-8b")
    assert info.path == "/api/models/fitbot-test/dense-8b" and info.query.get("blobs") == "true"
    assert config.path == f"/fitbot-test/dense-8b/resolve/{SHA}/config.json"  # pinned to the info's revision
    assert "authorization" not in {k.lower() for k in info.headers}
    key, params = model.card_source()
    assert key == "hub.card_source" and params["revision"] == SHA[:12] and params["fetched_at"] == model.fetched_at


async def test_multimodal_uses_text_config(hub, client):
    spec = (await client.lookup("hf.co/fitbot-test/vision-12b")).spec
    assert (spec.n_layers, spec.hidden_size, spec.head_dim, spec.vocab_size) == (48, 3840, 256, 262208)
    assert spec.sliding_window == 1024 and spec.n_sliding_layers == 40 and spec.kv_layers == 8
    assert spec.total_params == 12187325040


async def test_moe_counts_active_params(hub, client):
    spec = (await client.lookup("https://huggingface.co/fitbot-test/moe-30b-a3b/tree/main")).spec
    assert spec.is_moe and (spec.n_experts, spec.experts_per_token, spec.moe_intermediate_size) == (128, 8, 768)
    assert spec.total_params == 30532122624
    assert 2.5e9 < spec.active_params < 4.0e9


async def test_packed_awq_checkpoint_counts_params_from_dims(hub, client):
    spec = (await client.lookup("fitbot-test/qwen3-14b-awq")).spec
    assert abs(spec.total_params - 14.8e9) / 14.8e9 < 0.03  # not the 3.3e9 packed I32/F16 elements
    assert spec.provenance.unverified == ("total_params",) and spec.native_dtype == "int4"


async def test_gguf_repo_sizes_and_ranged_header(hub, client):
    model = await client.lookup("fitbot-test/llama-8b-gguf")
    assert {s.quant_id: s.size_bytes for s in model.sizes} == {
        "Q4_K_M": 4_920_734_208,
        "Q8_0": 4_300_000_000 + 4_234_901_344,  # split files summed, mmproj left out
    }
    assert all(s.repo == "fitbot-test/llama-8b-gguf" and s.model_id == model.spec.id for s in model.sizes)
    spec = model.spec
    assert (spec.n_layers, spec.hidden_size, spec.n_heads, spec.n_kv_heads, spec.vocab_size) == (32, 4096, 32, 8, 3000)
    assert spec.total_params == LLAMA_8B_PARAMS and spec.gguf_repo == "fitbot-test/llama-8b-gguf"
    assert spec.hf_repo is None and model.source_file == "Llama-8B-Q4_K_M.gguf"
    paths = [(r.method, r.path, r.headers.get("Range")) for r in hub.requests]
    assert not any(p.endswith("config.json") for _, p, _ in paths)
    resolve = [p for p in paths if "/resolve/" in p[1]]
    assert resolve == [("GET", f"/fitbot-test/llama-8b-gguf/resolve/{SHA}/Llama-8B-Q4_K_M.gguf", "bytes=0-2097151")]
    cdn = [p for p in paths if p[1].startswith("/cdn/")]
    assert len(cdn) == 1 and cdn[0][2] == "bytes=0-2097151"  # the range survives the CDN redirect


async def test_gguf_quant_suffix_reads_that_quants_first_shard(hub, client):
    model = await client.lookup("fitbot-test/llama-8b-gguf:q8_0")
    assert model.size("Q8_0").size_bytes == 8_534_901_344
    assert model.source_file == "Q8_0/Llama-8B-Q8_0-00001-of-00002.gguf"


async def test_gguf_header_prefix_smaller_than_tokenizer(hub):
    model = await hub_client(timeout_s=2.0, max_header_bytes=2048).lookup("fitbot-test/llama-8b-gguf")
    assert model.spec.vocab_size == 3000 and model.spec.n_layers == 32  # the token array's length is enough


async def test_missing_quant_names_the_available_ones(hub, client):
    with pytest.raises(QuantNotFound) as info:
        await client.lookup("fitbot-test/llama-8b-gguf:Q2_K")
    assert info.value.key == "hub.quant_not_found"
    assert info.value.params == {"repo": "fitbot-test/llama-8b-gguf", "quant": "Q2_K", "available": ["Q4_K_M", "Q8_0"]}
    assert [r.path for r in hub.requests] == ["/api/models/fitbot-test/llama-8b-gguf"]  # no file was read
    with pytest.raises(QuantNotFound) as info:
        await client.lookup(RepoRef("fitbot-test/dense-8b", "q4_k_m"))
    assert info.value.params["available"] == [] and info.value.params["quant"] == "Q4_K_M"


async def test_gguf_with_unknown_architecture(hub, client):
    with pytest.raises(HubUnsupportedArchitecture) as info:
        await client.lookup("fitbot-test/rwkv-gguf")
    assert info.value.key == "hub.unsupported_architecture" and info.value.params["arch"] == "rwkv7"
    assert isinstance(info.value, UnsupportedArchitecture) and info.value.arch == "rwkv7"


# --- failures -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "error", "key", "params"),
    [
        ("fitbot-test/gated", RepoGated, "hub.gated", {}),
        ("fitbot-test/forbidden", RepoGated, "hub.gated", {}),
        ("fitbot-test/private", RepoNotFound, "hub.not_found_or_private", {}),
        ("fitbot-test/bad-token", RepoGated, "hub.bad_token", {}),
        ("fitbot-test/vanished-file", HubBadData, "hub.missing_file", {}),
        ("fitbot-test/does-not-exist", RepoNotFound, "hub.not_found", {}),
        ("fitbot-test/rate-limited", HubRateLimited, "hub.rate_limited", {"retry_after_s": 30}),
        ("fitbot-test/broken", HubUnavailable, "hub.unavailable", {"status": 500}),
        ("fitbot-test/bad-info", HubBadData, "hub.bad_json", {}),
        ("fitbot-test/bad-json", HubBadData, "hub.bad_json", {"reason": "config.json is not valid JSON"}),
        ("fitbot-test/huge-listed", HubBadData, "hub.too_large", {"size": 50 * 2**20, "limit": 2 * 2**20}),
        ("fitbot-test/huge-body", HubBadData, "hub.too_large", {"size": 3 * 2**20 + 2}),
        ("fitbot-test/huge-chunked", HubBadData, "hub.too_large", {"file": "config.json"}),
        (
            "fitbot-test/unknown-arch",
            HubUnsupportedArchitecture,
            "hub.unsupported_architecture",
            {"arch": "Rwkv7ForCausalLM"},
        ),
        ("fitbot-test/empty", HubBadData, "hub.no_model_files", {}),
    ],
)
async def test_failures_map_to_keyed_errors(hub, client, repo, error, key, params):
    with pytest.raises(error) as info:
        await client.lookup(repo)
    assert info.value.key == key
    assert info.value.params["repo"] == repo
    assert params.items() <= info.value.params.items()


@pytest.mark.parametrize(
    ("repo", "field"),
    [("fitbot-test/too-many-layers", "num_hidden_layers"), ("fitbot-test/negative-heads", "num_attention_heads")],
)
async def test_config_out_of_bounds_is_named(hub, client, repo, field):
    with pytest.raises(HubBadData) as info:
        await client.lookup(repo)
    assert info.value.key == "hub.bad_config"
    assert f"out of bounds at {field}" in info.value.params["reason"]


async def test_oversized_listed_config_is_never_downloaded(hub, client):
    with pytest.raises(HubBadData):
        await client.lookup("fitbot-test/huge-listed")
    assert [r.path for r in hub.requests] == ["/api/models/fitbot-test/huge-listed"]


async def test_slow_hub_times_out(hub):
    started = asyncio.get_running_loop().time()
    with pytest.raises(HubUnavailable) as info:
        await hub_client(timeout_s=0.4).lookup("fitbot-test/slow")
    assert info.value.key == "hub.timeout"
    assert asyncio.get_running_loop().time() - started < 2.0


async def test_unreachable_hub(hub):
    with pytest.raises(HubUnavailable) as info:
        await HubClient(timeout_s=2.0, endpoint=dead_endpoint()).lookup("fitbot-test/dense-8b")
    assert info.value.key == "hub.unreachable"


async def test_offline_mode_makes_no_request(hub):
    with pytest.raises(HubUnavailable) as info:
        await HubClient(endpoint=hub.endpoint, offline=True).lookup("fitbot-test/dense-8b")
    assert info.value.key == "hub.offline" and hub.requests == []


@pytest.mark.parametrize("text", ["../../etc/passwd", "https://evil.example/a/b", "a/b c"])
async def test_invalid_ref_makes_no_request(hub, client, text):
    with pytest.raises(InvalidRepoRef):
        await client.lookup(text)
    assert hub.requests == []


async def test_every_error_is_a_hub_error():
    for cls in (
        InvalidRepoRef,
        RepoNotFound,
        RepoGated,
        HubRateLimited,
        HubUnavailable,
        HubBadData,
        QuantNotFound,
        HubUnsupportedArchitecture,
    ):
        assert issubclass(cls, HubError)


# --- token ----------------------------------------------------------------------------------------


async def test_token_is_sent_but_never_logged(hub, monkeypatch, caplog):
    import huggingface_hub.constants

    client = HubClient(timeout_s=2.0, endpoint=hub.endpoint, token=TOKEN)
    monkeypatch.setattr(huggingface_hub.constants, "HF_DEBUG", True)  # the library logs each request as curl
    caplog.set_level(logging.DEBUG)
    for name in ("huggingface_hub", "httpx2", "httpcore", "catalog"):
        caplog.set_level(logging.DEBUG, logger=name)
    model = await client.lookup("fitbot-test/dense-8b")
    with pytest.raises(RepoGated) as gated:
        await client.lookup("fitbot-test/gated")
    with pytest.raises(HubUnavailable) as broken:
        await client.lookup("fitbot-test/broken")
    sent = [r.headers.get("Authorization") for r in hub.requests if not r.path.startswith("/cdn/")]
    assert sent and all(h == f"Bearer {TOKEN}" for h in sent)
    assert any(r.name.startswith("huggingface_hub") for r in caplog.records)  # the library's logs were captured
    assert "fitbot-test/dense-8b" in caplog.text
    everything = " ".join(
        [
            caplog.text,
            str(gated.value),
            repr(gated.value.params),
            str(broken.value),
            repr(client),
            model.model_dump_json(),
        ]
    )
    assert TOKEN not in everything and TOKEN[3:15] not in everything


# --- the cache ------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def store(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as opened:
        yield opened


def flaky_repo(name: str) -> FakeRepo:
    return FakeRepo(
        f"fitbot-test/{name}",
        {"config.json": FakeFile(__import__("json").dumps(LLAMA_8B_CONFIG).encode())},
        safetensors={"parameters": {"BF16": LLAMA_8B_PARAMS}, "total": LLAMA_8B_PARAMS},
    )


async def test_user_db_is_its_own_wal_file(store):
    async with store.db.execute("PRAGMA journal_mode") as cur:
        assert (await cur.fetchone())[0] == "wal"
    async with store.db.execute("SELECT name FROM _migrations") as cur:
        assert [row[0] async for row in cur] == [m.__name__ for m in USER_MIGRATIONS]


async def test_fresh_cache_hit_makes_no_request(hub, store):
    clock = Clock()
    cached = CachedHubClient(hub_client(timeout_s=2.0, clock=clock), store.hub_cache, clock=clock)
    first = await cached.lookup("fitbot-test/llama-8b-gguf")
    count = len(hub.requests)
    clock.now += timedelta(days=6)
    second = await cached.lookup("fitbot-test/llama-8b-gguf:Q8_0")
    assert len(hub.requests) == count and second == first and not second.stale
    with pytest.raises(QuantNotFound):
        await cached.lookup("fitbot-test/llama-8b-gguf:Q2_K")
    assert len(hub.requests) == count


async def test_cache_survives_reopen(hub, store, tmp_path):
    model = await CachedHubClient(hub_client(timeout_s=2.0), store.hub_cache).lookup("fitbot-test/dense-8b")
    await store.close()
    async with UserDataStore(tmp_path / "user.sqlite") as again:
        assert await HubCache(again.hub_cache).get("FITBOT-TEST/dense-8b") == model


async def test_old_entry_is_refreshed(hub, store):
    clock = Clock()
    cached = CachedHubClient(
        hub_client(timeout_s=2.0, clock=clock), store.hub_cache, clock=clock, max_age=timedelta(days=7)
    )
    first = await cached.lookup("fitbot-test/dense-8b")
    clock.now += timedelta(days=8)
    second = await cached.lookup("fitbot-test/dense-8b")
    assert second.fetched_at == clock.now > first.fetched_at and not second.stale
    assert len([r for r in hub.requests if r.path.startswith("/api/")]) == 2
    assert (await HubCache(store.hub_cache).get("fitbot-test/dense-8b")).fetched_at == clock.now


@pytest.mark.parametrize(("status", "key"), [(503, "hub.unavailable"), (429, "hub.rate_limited")])
async def test_hub_down_answers_stale(hub, store, status, key):
    repo = flaky_repo(f"flaky-{status}")
    hub.add(repo)
    clock = Clock()
    cached = CachedHubClient(hub_client(timeout_s=2.0, clock=clock), store.hub_cache, clock=clock)
    first = await cached.lookup(repo.repo_id)
    repo.info_status = status
    clock.now += timedelta(days=30)
    stale = await cached.lookup(repo.repo_id)
    assert stale.stale and stale.stale_reason == key and stale.spec == first.spec
    assert stale.fetched_at == first.fetched_at and stale.card_source()[0] == "hub.card_source_stale"
    assert not (await HubCache(store.hub_cache).get(repo.repo_id)).stale


async def test_hub_down_without_cache_raises(hub, store, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", dead_endpoint())
    with pytest.raises(HubUnavailable):
        await CachedHubClient(hub_client(timeout_s=2.0), store.hub_cache).lookup("fitbot-test/dense-8b")


async def test_not_found_on_refresh_is_not_hidden(hub, store):
    repo = flaky_repo("vanishing")
    hub.add(repo)
    clock = Clock()
    cached = CachedHubClient(hub_client(timeout_s=2.0, clock=clock), store.hub_cache, clock=clock)
    await cached.lookup(repo.repo_id)
    repo.info_status = 404
    clock.now += timedelta(days=8)
    with pytest.raises(RepoNotFound):
        await cached.lookup(repo.repo_id)


async def test_concurrent_askers_share_one_request(hub, store):
    cached = CachedHubClient(hub_client(timeout_s=2.0), store.hub_cache)
    results = await asyncio.gather(*(cached.lookup("fitbot-test/moe-30b-a3b") for _ in range(5)))
    assert len({r.fetched_at for r in results}) == 1
    assert len([r for r in hub.requests if r.path.startswith("/api/")]) == 1
