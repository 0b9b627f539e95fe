"""A fake Hugging Face Hub on 127.0.0.1 for the real ``huggingface_hub`` client (point ``HF_ENDPOINT`` at it).

Routes are the ones huggingface_hub 2.x calls (``hf_api.model_info``, ``file_download``):

* ``GET /api/models/{owner}/{name}[/revision/{rev}]`` with ``?blobs=True`` (files_metadata): the
  model-info JSON with ``sha``, ``siblings`` (``rfilename``, ``size``, ``blobId``, ``lfs``),
  ``safetensors`` ``{"parameters": {dtype: n}, "total": n}`` and, for GGUF repos, ``gguf``.
* ``GET|HEAD /{owner}/{name}/resolve/{rev}/{path}``: small files are served directly; LFS files
  answer 302 to ``/cdn/{sha256}`` as the real hub redirects to its CDN. Both carry
  ``X-Repo-Commit``, ``ETag`` and (LFS) ``X-Linked-Size``/``X-Linked-Etag``; ``Range`` gets 206.
* Errors come with the hub's ``X-Error-Code`` header (RepoNotFound, GatedRepo, EntryNotFound),
  which the client uses to pick its exception class.

The server runs its own event loop in a background thread. huggingface_hub is synchronous and is
called from worker threads, so an in-loop server would work too, but a thread keeps the fake
independent of any test's loop: one module-scoped fake serves sync and async tests alike, and a
deliberately slow handler never holds up a test loop's shutdown. ``close()`` wakes slow handlers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from aiohttp import web

SHA = "0123456789abcdef0123456789abcdef01234567"
LLAMA_8B_PARAMS = 8030261248


@dataclass
class FakeFile:
    body: bytes = b""
    lfs: bool = False
    listed_size: int | None = None  # the size model info claims; defaults to len(body)
    status: int | None = None  # answer every GET/HEAD with this error status
    error_code: str | None = None  # X-Error-Code for that status
    chunked: bool = False  # stream without Content-Length

    @property
    def size(self) -> int:
        return self.listed_size if self.listed_size is not None else len(self.body)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body + str(self.size).encode()).hexdigest()


@dataclass
class FakeRepo:
    repo_id: str
    files: dict[str, FakeFile] = field(default_factory=dict)
    safetensors: dict[str, Any] | None = None
    gguf: dict[str, Any] | None = None
    gated: str | bool = False
    sha: str = SHA
    info_status: int | None = None  # model info answers with this status
    info_headers: dict[str, str] = field(default_factory=dict)
    info_body: bytes | None = None  # raw model-info body (malformed JSON)
    delay_s: float = 0.0  # model info waits this long before answering
    downloads: int = 0  # what a search sorts by

    def info(self) -> dict[str, Any]:
        siblings = []
        for name, f in sorted(self.files.items()):
            sib: dict[str, Any] = {"rfilename": name, "size": f.size, "blobId": hashlib.sha1(name.encode()).hexdigest()}
            if f.lfs:
                sib["lfs"] = {"sha256": f.sha256, "size": f.size, "pointerSize": 135}
            siblings.append(sib)
        owner = self.repo_id.split("/")[0]
        data: dict[str, Any] = {
            "_id": hashlib.md5(self.repo_id.encode()).hexdigest()[:24],
            "id": self.repo_id,
            "modelId": self.repo_id,
            "author": owner,
            "sha": self.sha,
            "lastModified": "2025-04-29T03:04:05.000Z",
            "private": False,
            "disabled": False,
            "gated": self.gated,
            "downloads": 1234,
            "likes": 56,
            "tags": ["text-generation"],
            "pipeline_tag": "text-generation",
            "library_name": "transformers",
            "createdAt": "2025-04-28T00:00:00.000Z",
            "siblings": siblings,
            "spaces": [],
            "usedStorage": sum(f.size for f in self.files.values()),
        }
        if self.safetensors is not None:
            data["safetensors"] = self.safetensors
        if self.gguf is not None:
            data["gguf"] = self.gguf
        return data


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


# --- recorded-shape repos -------------------------------------------------------------------------

LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "attention_bias": False,
    "bos_token_id": 128000,
    "eos_token_id": 128001,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 14336,
    "max_position_embeddings": 131072,
    "mlp_bias": False,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.43.0",
    "use_cache": True,
    "vocab_size": 128256,
}
GEMMA3_12B_CONFIG = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "boi_token_index": 255999,
    "eoi_token_index": 256000,
    "image_token_index": 262144,
    "initializer_range": 0.02,
    "mm_tokens_per_image": 256,
    "model_type": "gemma3",
    "text_config": {
        "head_dim": 256,
        "hidden_size": 3840,
        "intermediate_size": 15360,
        "max_position_embeddings": 131072,
        "model_type": "gemma3_text",
        "num_attention_heads": 16,
        "num_hidden_layers": 48,
        "num_key_value_heads": 8,
        "query_pre_attn_scalar": 256,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
        "vocab_size": 262208,
    },
    "torch_dtype": "bfloat16",
    "transformers_version": "4.50.0.dev0",
    "vision_config": {
        "hidden_size": 1152,
        "image_size": 896,
        "intermediate_size": 4304,
        "model_type": "siglip_vision_model",
        "num_attention_heads": 16,
        "num_hidden_layers": 27,
        "patch_size": 14,
    },
}
QWEN3_MOE_CONFIG = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "attention_bias": False,
    "decoder_sparse_step": 1,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "max_position_embeddings": 40960,
    "max_window_layers": 48,
    "mlp_only_layers": [],
    "model_type": "qwen3_moe",
    "moe_intermediate_size": 768,
    "norm_topk_prob": True,
    "num_attention_heads": 32,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "use_sliding_window": False,
    "vocab_size": 151936,
}
QWEN3_14B_AWQ_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "head_dim": 128,
    "hidden_size": 5120,
    "intermediate_size": 17408,
    "max_position_embeddings": 40960,
    "model_type": "qwen3",
    "num_attention_heads": 40,
    "num_hidden_layers": 40,
    "num_key_value_heads": 8,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "vocab_size": 151936,
    "quantization_config": {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True},
}


def make_gguf(arch: str = "llama", n_tokens: int = 3000) -> bytes:
    """A small but real GGUF file written by the gguf package: metadata, a tokenizer, one tiny tensor."""
    import numpy as np
    from gguf import GGUFWriter

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        writer = GGUFWriter(path, arch)
        writer.add_name("Fake Llama 8B")
        writer.add_file_type(15)  # Q4_K_M
        writer.add_context_length(131072)
        writer.add_embedding_length(4096)
        writer.add_block_count(32)
        writer.add_feed_forward_length(14336)
        writer.add_head_count(32)
        writer.add_head_count_kv(8)
        writer.add_rope_dimension_count(128)
        writer.add_layer_norm_rms_eps(1e-5)
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list([f"tok{i:05d}" for i in range(n_tokens)])
        writer.add_tensor("token_embd.weight", np.zeros((4, 4), dtype=np.float32))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        return path.read_bytes()


def default_repos() -> list[FakeRepo]:
    def config(cfg: dict[str, Any] | str | bytes, **kw: Any) -> FakeFile:
        body = cfg if isinstance(cfg, bytes) else (cfg if isinstance(cfg, str) else json.dumps(cfg, indent=2)).encode()
        return FakeFile(body, **kw)

    def shards(prefix: str, n: int, size: int) -> dict[str, FakeFile]:
        return {
            f"{prefix}-{i:05d}-of-{n:05d}.safetensors": FakeFile(lfs=True, listed_size=size) for i in range(1, n + 1)
        }

    gguf_body = make_gguf()
    st_8b = {"parameters": {"BF16": LLAMA_8B_PARAMS}, "total": LLAMA_8B_PARAMS}
    llama_files = {
        "config.json": config(LLAMA_8B_CONFIG),
        "tokenizer.json": FakeFile(b"{}"),
        **shards("model", 4, 4_000_000_000),
    }
    return [
        FakeRepo("fitbot-test/dense-8b", llama_files, safetensors=st_8b),
        FakeRepo(
            "fitbot-test/vision-12b",
            {"config.json": config(GEMMA3_12B_CONFIG), **shards("model", 5, 4_900_000_000)},
            safetensors={"parameters": {"BF16": 12187325040}, "total": 12187325040},
        ),
        FakeRepo(
            "fitbot-test/moe-30b-a3b",
            {"config.json": config(QWEN3_MOE_CONFIG), **shards("model", 16, 3_990_000_000)},
            safetensors={"parameters": {"BF16": 30532122624}, "total": 30532122624},
        ),
        FakeRepo(
            "fitbot-test/qwen3-14b-awq",
            {"config.json": config(QWEN3_14B_AWQ_CONFIG), **shards("model", 3, 3_300_000_000)},
            safetensors={"parameters": {"I32": 1_640_000_000, "F16": 1_700_000_000}, "total": 3_340_000_000},
        ),
        FakeRepo(
            "fitbot-test/llama-8b-gguf",
            {
                "Llama-8B-Q4_K_M.gguf": FakeFile(gguf_body, lfs=True, listed_size=4_920_734_208),
                "Q8_0/Llama-8B-Q8_0-00001-of-00002.gguf": FakeFile(gguf_body, lfs=True, listed_size=4_300_000_000),
                "Q8_0/Llama-8B-Q8_0-00002-of-00002.gguf": FakeFile(lfs=True, listed_size=4_234_901_344),
                "mmproj-F16.gguf": FakeFile(lfs=True, listed_size=600_000_000),
                "README.md": FakeFile(b"# GGUF"),
            },
            gguf={
                "total": LLAMA_8B_PARAMS,
                "architecture": "llama",
                "context_length": 131072,
                "bos_token": "<|begin_of_text|>",
                "eos_token": "<|eot_id|>",
            },
        ),
        FakeRepo(
            "fitbot-test/rwkv-gguf",
            {"rwkv-Q4_0.gguf": FakeFile(make_gguf("rwkv7", 10), lfs=True, listed_size=10**9)},
            gguf={"total": 2_900_000_000, "architecture": "rwkv7"},
        ),
        # failures
        FakeRepo("fitbot-test/slow", llama_files, safetensors=st_8b, delay_s=3.0),
        FakeRepo(
            "fitbot-test/gated",
            {"config.json": FakeFile(status=401, error_code="GatedRepo")},
            gated="manual",
            safetensors=st_8b,
        ),
        FakeRepo("fitbot-test/private", info_status=401, info_headers={"X-Error-Code": "RepoNotFound"}),
        FakeRepo(
            "fitbot-test/bad-token",
            info_status=401,
            info_headers={"X-Error-Message": "Invalid credentials in Authorization header"},
        ),
        FakeRepo("fitbot-test/vanished-file", {"config.json": FakeFile(status=404, error_code="EntryNotFound")}),
        FakeRepo("fitbot-test/forbidden", info_status=403, info_headers={"X-Error-Code": "GatedRepo"}),
        FakeRepo("fitbot-test/rate-limited", info_status=429, info_headers={"Retry-After": "30"}),
        FakeRepo("fitbot-test/broken", info_status=500),
        FakeRepo("fitbot-test/bad-info", info_body=b'{"id": "fitbot-test/bad-info", "sha": '),
        FakeRepo("fitbot-test/bad-json", {"config.json": config('{"model_type": "llama", "num_hidden_layers": 32,')}),
        FakeRepo("fitbot-test/huge-listed", {"config.json": config(LLAMA_8B_CONFIG, listed_size=50 * 2**20)}),
        FakeRepo("fitbot-test/huge-body", {"config.json": config(b" " * (3 * 2**20) + b"{}", listed_size=700)}),
        FakeRepo(
            "fitbot-test/huge-chunked",
            {"config.json": config(b" " * (3 * 2**20) + b"{}", listed_size=700, chunked=True)},
        ),
        FakeRepo(
            "fitbot-test/unknown-arch",
            {
                "config.json": config(
                    {
                        "architectures": ["Rwkv7ForCausalLM"],
                        "model_type": "rwkv7",
                        "num_hidden_layers": 24,
                        "hidden_size": 2048,
                        "vocab_size": 65536,
                    }
                )
            },
        ),
        FakeRepo(
            "fitbot-test/too-many-layers",
            {"config.json": config({**LLAMA_8B_CONFIG, "num_hidden_layers": 10**12})},
            safetensors=st_8b,
        ),
        FakeRepo(
            "fitbot-test/negative-heads",
            {"config.json": config({**LLAMA_8B_CONFIG, "num_attention_heads": -4})},
            safetensors=st_8b,
        ),
        FakeRepo("fitbot-test/empty", {"README.md": FakeFile(b"# nothing")}),
    ]


# --- the server -----------------------------------------------------------------------------------


class FakeHub:
    """``with FakeHub() as hub: os.environ["HF_ENDPOINT"] = hub.endpoint``; inspect ``hub.requests``."""

    def __init__(self, repos: list[FakeRepo] | None = None) -> None:
        self.repos = {r.repo_id.lower(): r for r in (repos if repos is not None else default_repos())}
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, repo: FakeRepo) -> None:
        self.repos[repo.repo_id.lower()] = repo

    def requests_for(self, repo_id: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if repo_id.lower() in r.path.lower()]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    # lifecycle

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        started = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve())
            except Exception as exc:  # pragma: no cover - reported to start()
                errors.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-hf-hub", daemon=True)
        self._thread.start()
        started.wait(10)
        if errors:
            raise errors[0]

    async def _serve(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application(middlewares=[self._record])
        app.router.add_get("/api/models", self._search)
        app.router.add_get("/api/models/{owner}/{name}", self._model_info)
        app.router.add_get("/api/models/{owner}/{name}/revision/{rev}", self._model_info)
        app.router.add_get("/cdn/{blob}", self._cdn)
        app.router.add_get("/{owner}/{name}/resolve/{rev}/{path:.+}", self._resolve)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined,unused-ignore]

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def stop() -> None:
            assert self._closing is not None and self._runner is not None
            self._closing.set()
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    # handlers

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        with self._lock:
            self.requests.append(Recorded(request.method, request.path, dict(request.query), dict(request.headers)))
        response: web.StreamResponse = await handler(request)
        return response

    def _repo(self, request: web.Request) -> FakeRepo | None:
        return self.repos.get(f"{request.match_info['owner']}/{request.match_info['name']}".lower())

    @staticmethod
    def _error(
        status: int, code: str | None = None, message: str = "", headers: dict[str, str] | None = None
    ) -> web.Response:
        hdrs = dict(headers or {})
        if code:
            hdrs["X-Error-Code"] = code
        if message:
            hdrs["X-Error-Message"] = message
        return web.json_response({"error": message or f"HTTP {status}"}, status=status, headers=hdrs)

    async def _search(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/models?search=…&sort=downloads&limit=N``: repo ids containing the text, most downloaded first."""
        text = request.query.get("search", "").lower()
        limit = int(request.query.get("limit", "20"))
        hits = sorted((r for r in self.repos.values() if text in r.repo_id.lower()), key=lambda r: -r.downloads)
        rows = [{"id": r.repo_id, "modelId": r.repo_id, "downloads": r.downloads, "likes": 0} for r in hits[:limit]]
        return web.json_response(rows)

    async def _model_info(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None:
            return self._error(404, "RepoNotFound", "Repository not found")
        if repo.delay_s:
            assert self._closing is not None
            try:
                await asyncio.wait_for(self._closing.wait(), repo.delay_s)
            except TimeoutError:
                pass
        if repo.info_status:
            return self._error(repo.info_status, headers=repo.info_headers)
        if repo.info_body is not None:
            return web.Response(body=repo.info_body, content_type="application/json")
        return web.json_response(repo.info())

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None:
            return self._error(404, "RepoNotFound", "Repository not found")
        rev, path = request.match_info["rev"], request.match_info["path"]
        if rev not in ("main", repo.sha):
            return self._error(404, "RevisionNotFound", "Invalid rev id")
        f = repo.files.get(path)
        if f is None:
            return self._error(404, "EntryNotFound", "Entry not found")
        if f.status:
            return self._error(f.status, f.error_code, "Access to this repo is restricted" if f.error_code else "")
        headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{hashlib.sha1(f.body).hexdigest()}"', "Accept-Ranges": "bytes"}
        if f.lfs:
            headers.update(
                {"X-Linked-Size": str(f.size), "X-Linked-Etag": f'"{f.sha256}"', "Location": f"/cdn/{f.sha256}"}
            )
            return web.Response(status=302, headers=headers)
        return await self._body(request, f, headers)

    async def _cdn(self, request: web.Request) -> web.StreamResponse:
        for repo in self.repos.values():
            for f in repo.files.values():
                if f.lfs and f.sha256 == request.match_info["blob"]:
                    return await self._body(request, f, {"ETag": f'"{f.sha256}"', "Accept-Ranges": "bytes"})
        return self._error(404)

    @staticmethod
    async def _body(request: web.Request, f: FakeFile, headers: dict[str, str]) -> web.StreamResponse:
        body, status = f.body, 200
        rng = request.headers.get("Range", "")
        if rng.startswith("bytes=") and body:
            start_s, _, end_s = rng[6:].partition("-")
            start = int(start_s or 0)
            end = min(int(end_s) if end_s else len(body) - 1, len(body) - 1)
            if start >= len(body):
                return web.Response(status=416, headers={"Content-Range": f"bytes */{len(body)}"})
            headers = {**headers, "Content-Range": f"bytes {start}-{end}/{len(body)}"}
            body, status = body[start : end + 1], 206
        if f.chunked:
            response = web.StreamResponse(status=status, headers=headers)
            response.enable_chunked_encoding()
            await response.prepare(request)
            for i in range(0, len(body), 64 * 1024):
                try:
                    await response.write(body[i : i + 64 * 1024])
                except (ConnectionResetError, RuntimeError):
                    break  # the client hung up after its cap, as it should
            return response
        return web.Response(status=status, body=body, headers=headers)
