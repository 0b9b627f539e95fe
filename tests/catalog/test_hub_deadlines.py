"""Hub calls that end: a dripping model info or a hanging search ends by its deadline, its thread
ends soon after and never holds the process's exit, and one slow repo does not switch off the others."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from catalog.hub.client import HubClient, HubUnavailable
from catalog.hub.search import HubSearch
from fitbot_fakes.hostile_hub import HostileHub

ROOT = Path(__file__).resolve().parents[2]
SLOW = "fitbot-test/dense-8b"  # served dripping below
GOOD = "fitbot-test/moe-30b-a3b"


@pytest.fixture(scope="module")
def hub():
    with HostileHub(drip={SLOW}, drip_every_s=0.2) as fake:
        yield fake


@pytest.fixture(autouse=True)
def online(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


def hub_threads() -> int:
    return sum(t.name.startswith("fitbot-hub") for t in threading.enumerate())


async def test_a_dripping_model_info_ends_by_the_deadline_and_so_does_its_thread(hub):
    client = HubClient(timeout_s=1.0, endpoint=hub.endpoint)
    started = time.monotonic()
    with pytest.raises(HubUnavailable) as info:
        await client.lookup(SLOW)
    assert info.value.key == "hub.timeout" and time.monotonic() - started < 1.6
    async with asyncio.timeout(3):  # the thread stops reading at its deadline (the next drip), not at the body's end
        while hub_threads():
            await asyncio.sleep(0.05)


async def test_one_slow_repo_trips_only_its_own_breaker(hub):
    client = HubClient(timeout_s=0.5, endpoint=hub.endpoint)
    for _ in range(3):
        with pytest.raises(HubUnavailable):
            await client.lookup(SLOW)
    assert client.breaker.is_open(SLOW)
    started = time.monotonic()
    with pytest.raises(HubUnavailable):
        await client.lookup(SLOW)  # at once now
    assert time.monotonic() - started < 0.1
    model = await client.lookup(GOOD)  # everyone else's look-ups still go through
    assert model.repo_id == GOOD and not client.breaker.is_open(GOOD)


async def test_a_hanging_search_gives_no_hits_in_time(hub):
    hub.search_hangs = True
    try:
        search = HubSearch(endpoint=hub.endpoint, token=None, timeout_s=0.5)
        started = time.monotonic()
        assert await search.find("zorblax 7b") == ()
        assert time.monotonic() - started < 1.0
    finally:
        hub.search_hangs = False


def test_a_process_with_a_hub_call_still_reading_exits_at_once(hub):
    """Hub threads are daemons: a process whose look-up is stuck on a slow server exits without waiting."""
    script = textwrap.dedent(
        f"""
        import asyncio, huggingface_hub.constants as c
        c.HF_HUB_OFFLINE = False
        from catalog.hub.client import HubClient
        async def main():
            client = HubClient(timeout_s=30.0, endpoint={hub.endpoint!r})
            try:
                await asyncio.wait_for(client.lookup({SLOW!r}), 0.5)
            except TimeoutError:
                print("gave up", flush=True)
        asyncio.run(main())
        """
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "gave up" in done.stdout, done.stderr[-2000:]
    import_s = 3.0  # python start-up and imports on a busy CI machine
    assert time.monotonic() - started < import_s + 5.0  # the 30 s read did not hold the exit
