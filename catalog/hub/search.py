"""Finds the Hugging Face repo for a model name the catalog lacks ("olmo 2 7b" → allenai/OLMo-2-1124-7B).

The hub's model search (``/api/models?search=…&sort=downloads``, what ``HfApi.list_models`` asks)
matches a substring of the repo id, so a name is searched hyphenated ("olmo-2-7b") and by its
family word ("olmo"); every hit must then agree with the typed name on size, version and variant
(``core.query.names``), and the most downloaded one wins. Results are cached for the process's lifetime
(LRU); a slow or unreachable hub gives no hits within the deadline, never an exception. The
request is ``catalog.hub.http.stream_get`` on a daemon thread, not ``list_models``: that one
retries inside its thread for ~23 s (``http_backoff``) and kept ``fitbot run`` from stopping.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import OrderedDict
from dataclasses import dataclass

from catalog.hub.http import DEFAULT_ENDPOINT, in_thread, stream_get
from core.query import names as N

log = logging.getLogger(__name__)
CACHE_ENTRIES = 512
SEARCH_LIMIT = 50
MAX_ANSWER_BYTES = 8 << 20
SKIP_REPO = re.compile(
    r"(?:^|[-_.])(?:gguf|awq|gptq|exl2|mlx|bnb|int4|int8|fp8|onnx|lora|adapter|quantized|w4a16|w8a8|nvfp4)(?:$|[-_.])",
    re.I,
)  # quantized or converted copies: the original repo is the model


@dataclass(frozen=True)
class SearchHit:
    repo_id: str
    downloads: int


class HubSearch:
    """Name → repo ids on the hub, most downloaded first, all agreeing with the typed name."""

    def __init__(
        self, *, endpoint: str | None, token: str | None, offline: bool = False, timeout_s: float = 5.0
    ) -> None:
        self.endpoint, self.offline, self.timeout_s = endpoint, offline, timeout_s
        self._token = token
        self._cache: OrderedDict[str, tuple[SearchHit, ...]] = OrderedDict()

    async def find(self, phrase: str) -> tuple[SearchHit, ...]:
        key = " ".join(phrase.lower().split())
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if self.offline:
            return ()
        deadline = time.monotonic() + self.timeout_s
        try:
            hits: tuple[SearchHit, ...] = await in_thread(self._search, key, deadline, deadline=deadline)
        except Exception as exc:  # timeout, network, bad JSON: no hits, and the card says "I don't know"
            log.warning("hub search failed: %s", exc.__class__.__name__)
            return ()
        self._cache[key] = hits
        if len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return hits

    def _search(self, phrase: str, deadline: float) -> tuple[SearchHit, ...]:
        from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # public, not re-exported

        headers = dict(build_hf_headers(token=self._token or False, library_name="fitbot"))
        said = N.typed(phrase)
        seen: dict[str, SearchHit] = {}
        for query in search_terms(phrase, said):
            raw = stream_get(
                f"{(self.endpoint or DEFAULT_ENDPOINT).rstrip('/')}/api/models",
                params={"search": query, "sort": "downloads", "limit": str(SEARCH_LIMIT)},
                headers=headers,
                deadline=deadline,
                cap=MAX_ANSWER_BYTES,
                on_status=lambda status, _headers: RuntimeError(f"hub search answered {status}"),
                on_too_large=lambda size: RuntimeError(f"hub search answer too large ({size} bytes)"),
            )
            for info in json.loads(raw)[:SEARCH_LIMIT]:
                repo = str(info.get("id") or info.get("modelId") or "")
                if not repo or repo in seen or SKIP_REPO.search(repo.split("/")[-1]):
                    continue
                if agrees(said, repo):
                    downloads = info.get("downloads")
                    seen[repo] = SearchHit(repo, downloads if isinstance(downloads, int) else 0)
        return tuple(sorted(seen.values(), key=lambda h: -h.downloads))


def search_terms(phrase: str, said: N.Typed) -> list[str]:
    """The hyphenated name, then its family word(s): the hub matches substrings of repo ids."""
    terms = ["-".join(phrase.split())]
    if said.words:
        terms.append("-".join(said.words[:2]))
    return list(dict.fromkeys(t for t in terms if len(t) >= 2))


def agrees(said: N.Typed, repo_id: str) -> bool:
    """Whether a repo's name is the model the user named (its size is read from the name)."""
    entry = N.typed(repo_id.split("/")[-1].replace("_", " "))
    return N.model_agrees(said, entry, entry.size_b or 0.0, entry.active_b or entry.size_b or 0.0)
