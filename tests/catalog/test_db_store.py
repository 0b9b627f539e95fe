"""The store suite, run on both backends: SQLite (the default) and a real PostgreSQL (tests/conftest.py).

"Two workers" are two ``UserDataStore``s opened on the same database, as two processes would.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from catalog.hub.cache import HubCache
from catalog.hub.client import HubModel
from storage.migrations import applied
from storage.prefs import LoggedQuery
from storage.queue import MAX_CLAIMS, SharedInbox
from storage.shared import ButtonTable, RateWindows
from storage.userdata import USER_MIGRATIONS, UserDataStore
from tests.core.specs import GLM_AIR


def open_store(tmp_path, url):
    """On SQLite, stores opened twice race for one file's write lock, which a loaded CI machine holds
    longer than the 250 ms an answer waits in production (one store per process there)."""
    return UserDataStore(tmp_path / "user.sqlite", busy_timeout_ms=10_000, url=url)


async def test_migrations_run_once_and_are_recorded(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as store:
        assert await applied(store.database) == [m.__name__ for m in USER_MIGRATIONS]
    async with open_store(tmp_path, store_url) as again:  # re-opening applies nothing twice
        assert len(await applied(again.database)) == len(USER_MIGRATIONS)


async def test_two_workers_open_a_fresh_database_at_once(tmp_path, store_url):
    stores = await asyncio.gather(*(open_store(tmp_path, store_url).open() for _ in range(3)))
    try:
        assert {len(await applied(s.database)) for s in stores} == {len(USER_MIGRATIONS)}
    finally:
        for s in stores:
            await s.close()


async def test_a_preference_set_by_one_worker_is_read_by_another(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as one, open_store(tmp_path, store_url) as two:
        await one.prefs.set_user("tg:1", gpu_id="rtx-4090", gpu_count=2, ram_gb=64.0)
        seen = await two.prefs.user("tg:1")
        assert (seen.gpu_id, seen.gpu_count, seen.ram_gb) == ("rtx-4090", 2, 64.0)
        await two.prefs.set_chat("tg:-5", lang="de", answer_mentions=False)
        chat = await one.prefs.chat("tg:-5")
        assert (chat.lang, chat.answer_mentions) == ("de", False)
        assert await one.prefs.forget("tg:1") == 1
        assert (await two.prefs.user("tg:1")).gpu_id is None


async def test_racing_changes_of_different_fields_from_two_workers_all_land(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as one, open_store(tmp_path, store_url) as two:
        users = [f"tg:{i}" for i in range(20)]
        await asyncio.gather(
            *(one.prefs.set_user(u, gpu_id="rtx-3090") for u in users),
            *(two.prefs.set_user(u, lang="de") for u in users),
            *(two.prefs.set_user(u, context=32768) for u in users),
        )
        for u in users:
            p = await one.prefs.user(u)
            assert (p.gpu_id, p.lang, p.context) == ("rtx-3090", "de", 32768)


async def test_hub_cache_replaces_and_prunes(tmp_path, store_url):
    old = datetime(2025, 1, 1, tzinfo=UTC)
    model = HubModel(
        repo_id="Org/Repo",
        revision="a",
        fetched_at=old,
        url="https://hf.co/Org/Repo",
        spec=GLM_AIR,
        source_file="config.json",
    )
    async with open_store(tmp_path, store_url) as store:
        await HubCache(store.hub_cache).put(model)
        await HubCache(store.hub_cache).put(model.model_copy(update={"revision": "b"}), "org/REPO")
        assert (await HubCache(store.hub_cache).get("org/repo")).revision == "b"
        assert await store.hub_cache.prune(timedelta(days=1), now=old + timedelta(days=2)) == 1
        assert await store.hub_cache.get("Org/Repo") is None


async def test_usage_counts_from_two_workers_add_up(tmp_path, store_url):
    row = LoggedQuery("telegram", "fit", "qwen3-8b", "rtx-4090", "Q4_K_M", 8192, True, 3.0)
    missed = LoggedQuery("discord", "suggest", None, None, None, None, False, 1.0)
    async with open_store(tmp_path, store_url) as one, open_store(tmp_path, store_url) as two:
        await asyncio.gather(one.query_log().record(row, row), two.query_log().record(missed))
        stats = await one.query_log().stats()
    assert (stats["questions"], stats["not_understood"]) == (3, 1)
    assert stats["models"] == [("qwen3-8b", 2)]
    assert dict(stats["platforms"]) == {"telegram": 2, "discord": 1}  # type: ignore[arg-type]


async def test_inbox_each_update_goes_to_exactly_one_of_racing_workers(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as one, open_store(tmp_path, store_url) as two:
        inbox = SharedInbox(one.database, "w1")
        assert await inbox.add([(i, f"u{i % 7}", "{}") for i in range(1, 301)]) == 300
        assert await inbox.add([(5, "u5", "{}"), (301, "u1", "{}")]) == 1  # a second delivery is ignored
        workers = [SharedInbox(one.database, "w1"), SharedInbox(two.database, "w2"), SharedInbox(two.database, "w3")]
        got: dict[str, list[int]] = {w.worker: [] for w in workers}

        async def drain(w: SharedInbox) -> None:
            while batch := await w.claim(7):
                got[w.worker] += [c.update_id for c in batch]
                await w.done([c.update_id for c in batch])

        await asyncio.gather(*(drain(w) for w in workers))
        every = sorted(i for ids in got.values() for i in ids)
        assert every == list(range(1, 302))  # none lost, none twice
        depth = await inbox.depth()
        assert (depth.open, depth.unclaimed, depth.oldest_unclaimed_s) == (0, 0, None)


async def test_inbox_lease_of_a_dead_worker_runs_out_and_another_takes_over(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as store:
        dead = SharedInbox(store.database, "dead", lease_s=0.3)
        alive = SharedInbox(store.database, "alive")
        await dead.add([(1, "u", "a"), (2, "u", "b")])
        assert [c.update_id for c in await dead.claim(10)] == [1, 2]
        assert await alive.claim(10) == []  # leased
        depth = await alive.depth()
        assert (depth.open, depth.unclaimed) == (2, 0)
        await asyncio.sleep(0.4)
        again = await alive.claim(10)
        assert [(c.update_id, c.claims) for c in again] == [(1, 2), (2, 2)]  # claims > 1: a worker died
        assert await dead.done([1]) == 1  # the late first worker's mark still closes the row
        assert await alive.renew([(c.update_id, c.fence) for c in again]) == {2}


async def test_a_worker_whose_lease_was_taken_over_may_not_send(tmp_path, store_url):
    """The fencing token: the paused worker's claim is no longer the row's, so ``hold`` says no."""
    async with open_store(tmp_path, store_url) as store:
        paused = SharedInbox(store.database, "paused", lease_s=0.2)
        other = SharedInbox(store.database, "other")
        await paused.add([(1, "u", "a"), (2, "u", "b")])
        first = await paused.claim(10)
        assert await paused.hold((1, first[0].fence))  # still ours: may send (and the lease is extended)
        await asyncio.sleep(0.3)  # paused past the lease
        taken = await other.claim(10)
        assert [c.update_id for c in taken] == [1, 2] and all(
            c.fence > f.fence for c, f in zip(taken, first, strict=True)
        )
        assert not await paused.hold((1, first[0].fence))  # taken over: drop it
        assert await paused.renew([(c.update_id, c.fence) for c in first]) == set()  # a lost lease
        assert await other.hold((1, taken[0].fence))
        # the same worker claiming again after its lease ran out gets a new token; the old one is dead
        again = SharedInbox(store.database, "other", lease_s=-1.0)
        await other.add([(3, "u", "c")])
        old = (await again.claim(1))[0]
        new = (await again.claim(10))[-1]
        assert new.update_id == 3 and not await again.hold((3, old.fence)) and await again.hold((3, new.fence))
        await other.done([1])
        assert not await other.hold((1, taken[0].fence))  # closed: nothing more to send for it


async def test_an_answer_begun_under_one_claim_is_not_sent_again_under_the_next(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as store:
        stalled = SharedInbox(store.database, "stalled", lease_s=-1.0)
        other = SharedInbox(store.database, "other")
        await stalled.add([(1, "u", "a"), (2, "u", "b")])
        first = await stalled.claim(10)
        assert not any(c.begun for c in first)
        assert await stalled.began((1, first[0].fence)) == 1  # the first message of 1's answer went out
        again = {c.update_id: c for c in await other.claim(10)}
        assert again[1].begun and again[1].sent_fence == first[0].fence  # close it, do not answer again
        assert not again[2].begun  # nothing of 2 went out: answer it


async def test_inbox_release_on_stop_and_poison_set_aside(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as store:
        w = SharedInbox(store.database, "w", lease_s=-1.0)  # every lease is over at once
        await w.add([(1, "u", "x"), (2, "u", "y")])
        claimed = await w.claim(1)
        assert [c.update_id for c in claimed] == [1]
        assert await w.release([(1, claimed[0].fence)]) == 1
        for _ in range(MAX_CLAIMS):
            assert 1 in [c.update_id for c in await w.claim(5)]
        depth = await w.depth()
        assert depth.set_aside == 2 and depth.unclaimed == 0
        assert await w.claim(5) == []
        assert depth.open == 2


async def test_oldest_unclaimed_update_is_reported(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as store:
        w = SharedInbox(store.database, "w")
        await w.add([(1, "u", "x")])
        await asyncio.sleep(0.2)
        depth = await w.depth()
        assert depth.unclaimed == 1 and 0.15 < depth.oldest_unclaimed_s < 30


async def test_a_flood_through_two_workers_is_limited_as_one(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as one, open_store(tmp_path, store_url) as two:
        windows = [RateWindows(one.database), RateWindows(two.database)]
        results = await asyncio.gather(*(windows[i % 2].take([("user:1", 10), ("chat:9", 100)]) for i in range(40)))
        assert sum(r == 0.0 for r in results) == 10
        assert all(0 < r <= 60 for r in results if r)
        assert await windows[1].take([("user:2", 10), ("chat:9", 100)]) == 0.0  # others are not affected
        assert await windows[0].take([("user:3", 10), ("chat:9", 11)]) > 0  # the chat (11 used) is full: refused
        assert await windows[0].take([("user:3", 10)]) == 0.0  # ... and that refusal charged user:3 nothing


async def test_a_button_made_by_one_worker_is_pressed_on_another(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as one, open_store(tmp_path, store_url) as two:
        await ButtonTable(one.database).put("k1", "/fit qwen3-32b rtx 4090 32k", ttl_s=60)
        await ButtonTable(one.database).put("k2", "old", ttl_s=-1)
        assert await ButtonTable(two.database).get("k1") == "/fit qwen3-32b rtx 4090 32k"
        assert await ButtonTable(two.database).get("k2") is None
        assert await ButtonTable(two.database).prune() == 1


async def test_a_network_failed_answer_goes_back_for_any_worker_later(tmp_path, store_url):
    async with open_store(tmp_path, store_url) as store:
        one, two = SharedInbox(store.database, "one"), SharedInbox(store.database, "two")
        await one.add([(1, "c1|u1", "x")])
        (claimed,) = await one.claim(5)
        assert await one.retry_later((1, claimed.fence), 0.3) == 1
        assert await two.claim(5) == []  # not before the back-off
        await asyncio.sleep(0.4)
        again = await two.claim(5)
        assert [(c.update_id, c.claims) for c in again] == [(1, 2)]  # the try counts towards poison
        assert await two.done([1], failed="handler: BadRequest") == 1
        assert await store.database.fetchval("SELECT failed FROM tg_inbox WHERE update_id = 1") == "handler: BadRequest"
