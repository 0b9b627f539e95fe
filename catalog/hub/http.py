"""Hub requests that end: a hard deadline per call, daemon threads, and a circuit breaker per repo.

Why not the library's request helpers: ``HfApi.list_models`` pages through ``http_backoff``, which
retries connection errors and timeouts with sleeps of 1, 2, 4, 8 and 8 s inside the worker thread
(a DNS failure kept ``fitbot run`` from stopping for 15-20 s), and ``HfApi.model_info`` reads its
answer with only a per-read timeout, so a server that drips one byte a second holds the thread
for as long as it likes. ``HF_HUB_ETAG_TIMEOUT`` and ``HF_HUB_DOWNLOAD_TIMEOUT`` only reach
``hf_hub_download``, which FitBot does not use. So every hub request here goes through the
library's own HTTP client (``get_session``: its proxy settings, user agent and headers) but is
read by ``stream_get``: streamed, with a byte cap and a deadline checked after every chunk, so the
thread ends on its own shortly after the deadline, whatever the server does. No retries: the
caller decides (``CachedHubClient`` serves a stale answer when the hub is down).

The blocking calls run on ``HUB_THREADS`` daemon threads (``in_thread``): a thread still reading
when the process stops does not hold the exit (``ThreadPoolExecutor`` workers are joined at exit,
and ``asyncio.run`` waits for the default executor). A call that finds every thread busy waits for
one only until its deadline.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("catalog.hub.client")

DEFAULT_ENDPOINT = "https://huggingface.co"
HUB_THREADS = 4
THREAD_NAME = "fitbot-hub"
BREAKER_FAILURES = 3  # this many look-ups of one repo in a row that time out or find the hub down...
BREAKER_COOLDOWN_S = 30.0  # ...make that repo fail at once this long; then one look-up probes
BREAKER_REPOS = 1024  # repos remembered (least recently used forgotten first)


class HubDeadline(Exception):
    """The call did not finish before its deadline (the thread stops reading soon after)."""


# --- daemon threads ------------------------------------------------------------------------------

_busy = 0
_busy_lock = threading.Lock()
_started = 0


def _take_thread() -> bool:
    global _busy
    with _busy_lock:
        if _busy >= HUB_THREADS:
            return False
        _busy += 1
        return True


def _free_thread() -> None:
    global _busy
    with _busy_lock:
        _busy -= 1


async def in_thread(fn: Callable[..., Any], *args: Any, deadline: float) -> Any:
    """``fn(*args)`` on a daemon thread; raises ``HubDeadline`` when ``deadline`` (monotonic) passes first."""
    global _started
    while not _take_thread():
        if time.monotonic() >= deadline:
            raise HubDeadline
        await asyncio.sleep(0.05)
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    future.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved, also after a deadline

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def work() -> None:
        try:
            result, ok = fn(*args), True
        except BaseException as exc:  # handed to the awaiting coroutine
            result, ok = exc, False
        finally:
            _free_thread()
        try:
            loop.call_soon_threadsafe(settle, ok, result)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    _started += 1
    threading.Thread(target=work, name=f"{THREAD_NAME}-{_started}", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        raise HubDeadline from None


# --- one request ---------------------------------------------------------------------------------


def stream_get(
    url: str,
    *,
    headers: dict[str, str],
    deadline: float,
    cap: int,
    on_status: Callable[[int, Any], Exception],
    params: dict[str, str] | None = None,
    truncate: bool = False,
    on_too_large: Callable[[int], Exception] | None = None,
) -> bytes:
    """GET ``url`` through huggingface_hub's client: at most ``cap`` bytes, ending by ``deadline``.

    An error status raises ``on_status(status, headers)``. A body over ``cap`` is cut to it
    (``truncate``) or raises ``on_too_large(size)``. Transport errors propagate (httpx's classes).
    """
    from huggingface_hub import get_session

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise HubDeadline
    buf = bytearray()
    with get_session().stream("GET", url, headers=headers, params=params, timeout=remaining) as response:
        if response.status_code >= 400:
            raise on_status(response.status_code, response.headers)
        length = response.headers.get("Content-Length", "")
        if not truncate and on_too_large is not None and length.isdigit() and int(length) > cap:
            raise on_too_large(int(length))
        for chunk in response.iter_bytes():
            buf += chunk
            if len(buf) > cap:
                if not truncate and on_too_large is not None:
                    raise on_too_large(len(buf))
                del buf[cap:]
                break
            if time.monotonic() > deadline:
                raise HubDeadline
    return bytes(buf)


# --- circuit breaker -----------------------------------------------------------------------------


@dataclass
class _RepoState:
    failures: int = 0
    opened_at: float | None = None
    probing: bool = False
    last_key: str = "hub.unavailable"


class CircuitBreaker:
    """Stops asking the hub about a repo that keeps timing out, without switching off the others.

    Per repo: after ``failures`` consecutive timeouts or unavailable answers that repo fails at
    once ("hub unavailable", as its last failure said) for ``cooldown_s``; then one look-up probes,
    and its success closes it again. One global breaker let a single user switch every look-up
    off for 30 s by asking three times about one slow repo.
    """

    def __init__(
        self,
        failures: int = BREAKER_FAILURES,
        cooldown_s: float = BREAKER_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures, self.cooldown_s, self.clock = failures, cooldown_s, clock
        self._repos: OrderedDict[str, _RepoState] = OrderedDict()
        self._lock = threading.Lock()

    def _state(self, repo: str) -> _RepoState:
        key = repo.lower()
        state = self._repos.pop(key, None) or _RepoState()
        self._repos[key] = state
        if len(self._repos) > BREAKER_REPOS:
            self._repos.popitem(last=False)
        return state

    @property
    def open(self) -> bool:
        """Whether any repo is shut off now."""
        now = self.clock()
        return any(s.opened_at is not None and now - s.opened_at < self.cooldown_s for s in self._repos.values())

    def is_open(self, repo: str) -> bool:
        state = self._repos.get(repo.lower())
        return state is not None and state.opened_at is not None and self.clock() - state.opened_at < self.cooldown_s

    def last_key(self, repo: str) -> str:
        state = self._repos.get(repo.lower())
        return state.last_key if state is not None else "hub.unavailable"

    def allow(self, repo: str) -> bool:
        with self._lock:
            state = self._state(repo)
            if state.opened_at is None:
                return True
            if self.clock() - state.opened_at < self.cooldown_s or state.probing:
                return False
            state.probing = True  # half-open: one probe
            return True

    def record(self, repo: str, ok: bool, key: str = "hub.unavailable") -> None:
        with self._lock:
            state = self._state(repo)
            state.probing = False
            if ok:
                state.failures, state.opened_at = 0, None
                return
            state.last_key = key
            state.failures += 1
            if state.failures >= self.failures:
                if state.opened_at is None:
                    log.warning(
                        "Hugging Face keeps failing for %s; not asking about it for %.0f s", repo, self.cooldown_s
                    )
                state.opened_at = self.clock()
