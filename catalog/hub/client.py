"""Live Hugging Face look-ups: a repo id becomes a ``ModelSpec`` plus measured GGUF sizes, no weights.

Errors (each carries ``key``, a locale message id, and ``params`` for its placeholders)::

    HubError                        hub.error
    ├── InvalidRepoRef              hub.invalid_ref                 rejected before any request
    ├── RepoNotFound                hub.not_found                   404
    │                               hub.not_found_or_private        401 RepoNotFound (the hub's answer to
    │                                                               anonymous callers for both cases)
    ├── RepoGated                   hub.gated                       403, or 401 with X-Error-Code GatedRepo
    │                               hub.bad_token                   401: HF_TOKEN is invalid
    │                               hub.private                     any other 401
    ├── HubRateLimited              hub.rate_limited                429; params.retry_after_s (int or None)
    ├── HubUnavailable              hub.unavailable                 5xx (params.status)
    │                               hub.timeout / hub.unreachable   no answer in time / connection failed
    │                               hub.offline                     HF_HUB_OFFLINE is set
    ├── HubBadData                  hub.bad_json / hub.too_large / hub.bad_config / hub.bad_gguf
    │                               hub.missing_file                a listed file 404s (repo changed mid-look-up)
    │                               hub.no_model_files              neither config.json nor .gguf files
    ├── QuantNotFound               hub.quant_not_found             owner/repo:Q4_K_M names a missing quant
    └── HubUnsupportedArchitecture  hub.unsupported_architecture    also an ``hf_config.UnsupportedArchitecture``

Design notes:

* ``huggingface_hub`` is imported inside the worker functions: it costs about a second and the
  CLI must not pay that at start-up. Endpoint, token and offline mode come from the caller
  (``bot.app.settings`` reads ``HF_ENDPOINT``, ``HF_TOKEN`` and ``HF_HUB_OFFLINE``); they are passed to
  every call explicitly (``token=False`` when unset, so no login file is read).
  The token goes into the Authorization header only: never into logs, reprs or error params.
* The blocking requests themselves live in ``catalog.hub.fetch``; this module maps their results.
* ``model_info(files_metadata=True)`` is one request, without retries: siblings with sizes, the
  commit sha, safetensors parameter totals by dtype and, for GGUF repos, the hub's own ``gguf``
  summary (total parameters). Files are then read at that sha, so all numbers are one revision.
* Files go through the library's session (``get_session``, ``hf_hub_url``, ``build_hf_headers``)
  rather than ``hf_hub_download``, which writes into the HF disk cache (ours is SQLite), retries
  5xx/429 with sleeps adding up to ~20 s inside a thread that cannot be cancelled, and has no body
  cap. Here every read is streamed with a byte cap, an HTTP timeout and a deadline, so the worker
  thread ends on its own even after ``asyncio.wait_for`` has given up on it.
* The GGUF header is read with one Range request for the first ``max_header_bytes`` (2 MiB). The
  ``gguf`` package's reader needs the whole header, whose tokenizer arrays run to ~10 MB for
  150k-token vocabularies; llama.cpp writes the architecture keys first, so a small prefix holds
  them, and an array cut off by the prefix still tells its length (the vocabulary size).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from catalog.hub.fetch import MIB, get_file, model_info
from catalog.hub.http import DEFAULT_ENDPOINT, CircuitBreaker, HubDeadline, in_thread
from catalog.hub.refs import (
    GgufGroup,
    HubBadData,
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
    parse_repo_ref,
)
from catalog.model_files.config import (
    REPO_ID,
    ConfigError,
    UnsupportedArchitecture,
    config_from_gguf,
    spec_from_config,
)
from catalog.model_files.gguf import parse_gguf_prefix
from core.models import ModelSpec, Provenance, QuantSize

__all__ = [
    "CircuitBreaker",
    "HubBadData",
    "HubClient",
    "HubError",
    "HubModel",
    "HubRateLimited",
    "HubUnavailable",
    "HubUnsupportedArchitecture",
    "InvalidRepoRef",
    "QuantNotFound",
    "RepoGated",
    "RepoNotFound",
    "RepoRef",
    "UnsupportedArchitecture",
    "gguf_quant",
    "parse_gguf_prefix",
    "parse_repo_ref",
]

log = logging.getLogger(__name__)

LOOKUP_DEADLINE_FACTOR = 3.0  # a whole look-up (info + one file) gets at most this many per-request timeouts


# --- result --------------------------------------------------------------------------------------


class HubModel(BaseModel):
    """What a look-up found: the model, measured GGUF sizes, and which revision they came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo_id: str
    revision: str  # commit sha every number was read at
    fetched_at: datetime  # UTC
    url: str
    spec: ModelSpec
    sizes: tuple[QuantSize, ...] = ()
    source_file: str  # "config.json" or the GGUF file whose header was read
    stale: bool = False  # served from the cache because the hub could not be asked
    stale_reason: str | None = None  # the HubError key that made it stale

    @property
    def quants(self) -> tuple[str, ...]:
        return tuple(s.quant_id for s in self.sizes)

    def size(self, quant: str) -> QuantSize | None:
        return next((s for s in self.sizes if s.quant_id == quant.upper()), None)

    def card_source(self) -> tuple[str, dict[str, Any]]:
        """Message key and params for "from Hugging Face, revision X, fetched at T"."""
        key = "hub.card_source_stale" if self.stale else "hub.card_source"
        return key, {
            "repo": self.repo_id,
            "revision": self.revision[:12],
            "fetched_at": self.fetched_at,
            "url": self.url,
        }


def require_quant(model: HubModel, quant: str | None) -> HubModel:
    """Raise ``QuantNotFound`` when the user named a quant the repo does not have."""
    if quant and model.size(quant) is None:
        raise QuantNotFound(repo=model.repo_id, quant=quant, available=list(model.quants))
    return model


# --- client --------------------------------------------------------------------------------------

_PACKED_DTYPES = {"I32", "U32", "I16", "U16", "I8", "U8", "I64"}


class HubClient:
    """Async look-ups against the Hub (or ``HF_ENDPOINT``); the blocking calls run in worker threads."""

    def __init__(
        self,
        *,
        timeout_s: float = 10.0,
        max_config_bytes: int = 2 * MIB,
        max_header_bytes: int = 2 * MIB,
        endpoint: str | None = None,
        token: str | None = None,
        offline: bool = False,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.timeout_s = timeout_s
        self.max_config_bytes = max_config_bytes
        self.max_header_bytes = max_header_bytes
        self._endpoint = endpoint
        self._token = token
        self.offline = offline
        self._clock = clock
        self.breaker = CircuitBreaker()
        self._deadlines: set[asyncio.Timeout] = set()  # of the look-ups under way (``cut_short``)
        self._cut = False

    def __repr__(self) -> str:
        return f"HubClient(endpoint={self.endpoint()!r}, timeout_s={self.timeout_s})"

    def endpoint(self) -> str:
        return (self._endpoint or DEFAULT_ENDPOINT).rstrip("/")

    async def lookup(self, ref: RepoRef | str) -> HubModel:
        """Fetch and map one repo; raise a ``HubError`` subclass with a message key on failure.

        The whole look-up has one deadline (``LOOKUP_DEADLINE_FACTOR`` x ``timeout_s``), its blocking
        calls run on the hub's own threads, and a hub that keeps failing is not asked for a while.
        """
        if isinstance(ref, str):
            ref = parse_repo_ref(ref)
        if self.offline:
            raise HubUnavailable("hub.offline", repo=ref.repo_id)
        repo, breaker = ref.repo_id, self.breaker
        if self._cut:
            raise HubUnavailable("hub.unavailable", repo=repo)
        if not breaker.allow(repo):  # this repo keeps failing: say so now, as its last failure did
            raise HubUnavailable(breaker.last_key(repo), repo=repo)
        try:
            async with asyncio.timeout(self.timeout_s * LOOKUP_DEADLINE_FACTOR) as deadline:
                self._deadlines.add(deadline)
                try:
                    model = await self._lookup(ref)
                finally:
                    self._deadlines.discard(deadline)
        except TimeoutError:
            breaker.record(repo, False, "hub.timeout")
            raise HubUnavailable("hub.timeout", repo=repo) from None
        except HubUnavailable as exc:
            breaker.record(repo, False, exc.key)
            raise
        except HubError:
            breaker.record(repo, True)  # the hub answered (404, bad data, ...): it is up
            raise
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:  # odd data, clearly said
            breaker.record(repo, True)
            raise HubBadData("hub.bad_json", repo=repo, reason=exc.__class__.__name__) from None
        breaker.record(repo, True)
        return model

    def cut_short(self) -> None:
        """The process is stopping: look-ups under way end now (as timed out), new ones fail at once.

        Answers waiting on a slow hub would otherwise hold the stop for up to three request timeouts.
        """
        self._cut = True
        for deadline in list(self._deadlines):
            deadline.reschedule(asyncio.get_running_loop().time())

    async def _lookup(self, ref: RepoRef) -> HubModel:
        endpoint, token = self.endpoint(), self._token or False
        info = await self._in_thread(ref.repo_id, model_info, ref.repo_id, endpoint, token)
        repo_id = info.id if isinstance(info.id, str) and REPO_ID.fullmatch(info.id) else ref.repo_id
        sha = info.sha
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{7,64}", sha):
            raise HubBadData("hub.bad_json", repo=repo_id, reason="model info has no commit sha")
        siblings = {s.rfilename: s.size or (s.lfs.size if s.lfs else None) for s in info.siblings or ()}
        groups = group_gguf_files(siblings.items())
        quant = ref.quant.upper() if ref.quant else None
        if quant and quant not in groups:  # before reading anything more
            raise QuantNotFound(repo=repo_id, quant=quant, available=sorted(groups))
        fetched_at = self._clock()
        as_of = fetched_at.date().isoformat()
        config, total, source = await self._config(info, quant, repo_id, sha, endpoint, token, siblings, groups)
        unverified: list[str] = []
        if total is None:
            unverified.append("total_params")
        prov = Provenance(
            source=f"Hugging Face {repo_id} {source} @ {sha[:12]}", as_of=as_of, unverified=tuple(unverified)
        )
        try:
            spec = spec_from_config(config, repo_id, prov, total_params=total, name=repo_id.split("/")[-1])
        except UnsupportedArchitecture as exc:
            raise HubUnsupportedArchitecture(repo=repo_id, arch=exc.arch) from None
        except ConfigError as exc:
            raise HubBadData("hub.bad_config", repo=repo_id, reason=str(exc)) from None
        if groups:
            spec = spec.model_copy(
                update={"gguf_repo": repo_id, "hf_repo": repo_id if source == "config.json" else None}
            )
        sizes = tuple(
            QuantSize(
                model_id=spec.id,
                quant_id=g.quant,
                size_bytes=g.size_bytes,
                repo=repo_id,
                provenance=Provenance(
                    source=f"Hugging Face file list of {repo_id} @ {sha[:12]}",
                    as_of=as_of,
                    unverified=() if g.complete else ("size_bytes",),
                ),
            )
            for g in sorted(groups.values(), key=lambda g: g.size_bytes)
            if g.size_bytes > 0
        )
        log.info("hub look-up %s at %s: %s, %d GGUF quants", repo_id, sha[:12], source, len(sizes))
        return HubModel(
            repo_id=repo_id,
            revision=sha,
            fetched_at=fetched_at,
            url=f"{endpoint}/{repo_id}",
            spec=spec,
            sizes=sizes,
            source_file=source,
        )

    async def _config(
        self,
        info: Any,
        quant: str | None,
        repo_id: str,
        sha: str,
        endpoint: str,
        token: str | bool,
        siblings: dict[str, int | None],
        groups: dict[str, GgufGroup],
    ) -> tuple[dict[str, Any], int | None, str]:
        """The config dict (from config.json, else a GGUF header), the exact parameter count and the file read."""
        if "config.json" in siblings:
            source = "config.json"
            raw = await self._in_thread(
                repo_id,
                get_file,
                endpoint,
                token,
                repo_id,
                sha,
                source,
                siblings[source],
                self.max_config_bytes,
                False,
            )
            config = _json_object(raw, repo_id)
            total = _safetensors_total(info, config)
            if total is None and isinstance(info.gguf, dict):
                total = _positive_int(info.gguf.get("total"))
            return config, total, source
        if not groups:
            raise HubBadData("hub.no_model_files", repo=repo_id)
        group = groups.get(quant or "") or min(groups.values(), key=lambda g: g.size_bytes)
        source = group.files[0]  # the first shard holds all the metadata
        raw = await self._in_thread(
            repo_id, get_file, endpoint, token, repo_id, sha, source, None, self.max_header_bytes, True
        )
        try:
            config = config_from_gguf(parse_gguf_prefix(raw))
        except UnsupportedArchitecture as exc:
            raise HubUnsupportedArchitecture(repo=repo_id, arch=exc.arch) from None
        except ConfigError as exc:
            raise HubBadData("hub.bad_gguf", repo=repo_id, reason=str(exc)) from None
        total = _positive_int(info.gguf.get("total")) if isinstance(info.gguf, dict) else None
        return config, total, source

    async def _in_thread(self, repo_id: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking call on the hub's daemon threads; it and its thread end by one request timeout.

        Not the loop's default executor: threads stuck on a slow hub used to fill it, and every
        other ``to_thread`` (chart rendering) waited behind them (``catalog.hub.http``).
        """
        deadline = time.monotonic() + self.timeout_s
        try:
            return await in_thread(fn, *args, deadline, deadline=deadline)
        except HubDeadline:
            raise HubUnavailable("hub.timeout", repo=repo_id) from None


def _json_object(raw: bytes, repo_id: str) -> dict[str, Any]:
    import json

    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise HubBadData("hub.bad_json", repo=repo_id, reason="config.json is not valid JSON") from None
    if not isinstance(value, dict):
        raise HubBadData("hub.bad_json", repo=repo_id, reason="config.json is not a JSON object")
    return value


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**14 else None


def _safetensors_total(info: Any, config: dict[str, Any]) -> int | None:
    """Exact parameter count from the safetensors metadata, unless a packed quant makes it wrong.

    AWQ/GPTQ/bitsandbytes checkpoints store 4-bit weights packed into I32/U8 elements, so the
    element count undercounts the parameters up to 8x; the config dims count them instead.
    """
    st = getattr(info, "safetensors", None)
    if st is None:
        return None
    params = st.parameters if isinstance(st.parameters, dict) else {}
    if config.get("quantization_config") and _PACKED_DTYPES & {str(k).upper() for k in params}:
        return None
    return _positive_int(st.total)
