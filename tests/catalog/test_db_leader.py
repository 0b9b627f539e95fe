"""Leader election: one leader per job through PostgreSQL advisory locks, failover when it dies."""

from __future__ import annotations

import asyncio
import time

from storage.leader import AdvisoryLockElection, LocalElection, election, leader_of, while_leader
from storage.userdata import UserDataStore


async def test_on_sqlite_the_one_process_always_leads(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        elect = election(store.database, "telegram-poll")
        assert isinstance(elect, LocalElection)
        assert await elect.lead(asyncio.Event())
        assert await leader_of(store.database, "telegram-poll") == "this process"


async def test_one_leader_and_failover_when_its_session_dies(tmp_path, postgres_url):
    async with UserDataStore(tmp_path / "user.sqlite", url=postgres_url) as store:
        db = store.database
        first = election(db, "telegram-poll", retry_s=0.1)
        second = election(db, "telegram-poll", retry_s=0.1)
        other_job = election(db, "price-refresh", retry_s=0.1)
        assert isinstance(first, AdvisoryLockElection)
        never = asyncio.Event()
        assert await first.lead(never)
        assert await other_job.lead(never)  # a different job has its own leader
        waiting = asyncio.create_task(second.lead(never))
        await asyncio.sleep(0.4)
        assert not waiting.done()  # the lock is held
        assert (await leader_of(db, "telegram-poll") or "").startswith("fitbot@")
        # the leader's process dies: its session ends without a word (no unlock)
        conn = first._conn
        await db.execute("SELECT pg_terminate_backend(?)", (conn.get_server_pid(),))
        started = time.monotonic()
        assert await asyncio.wait_for(waiting, 5)
        assert time.monotonic() - started < 2
        await asyncio.wait_for(first.lost(), 5)  # the old leader notices it lost the lead
        for e in (first, second, other_job):
            await e.resign()
        assert await leader_of(db, "telegram-poll") is None


async def test_while_leader_runs_the_job_in_exactly_one_process_and_hands_over(tmp_path, postgres_url):
    async with UserDataStore(tmp_path / "user.sqlite", url=postgres_url) as store:
        runs: list[str] = []
        stops = {"a": asyncio.Event(), "b": asyncio.Event()}

        def job(name: str):
            async def run(job_stop: asyncio.Event) -> None:
                runs.append(name)
                await job_stop.wait()

            return run

        tasks = {
            n: asyncio.create_task(while_leader(election(store.database, "cleanup", 0.1), stops[n], job(n)))
            for n in stops
        }
        await asyncio.sleep(0.5)
        assert len(runs) == 1
        leader = runs[0]
        stops[leader].set()  # a graceful stop resigns at once
        await asyncio.wait_for(tasks[leader], 5)
        for _ in range(50):
            if len(runs) == 2:
                break
            await asyncio.sleep(0.05)
        assert runs == [leader, "b" if leader == "a" else "a"]
        for n, event in stops.items():
            event.set()
            await asyncio.wait_for(tasks[n], 5)


async def test_a_stalled_leader_is_broken_after_its_lease_and_steps_down_when_it_runs_again(tmp_path, postgres_url):
    """SIGSTOP, a long GC, a frozen loop: the session (and its lock) lives on, the beats stop."""
    async with UserDataStore(tmp_path / "user.sqlite", url=postgres_url) as store:
        db = store.database
        stalled = election(db, "telegram-poll", retry_s=0.1, lease_s=0.5)
        candidate = election(db, "telegram-poll", retry_s=0.1, lease_s=0.5)
        never = asyncio.Event()
        assert await stalled.lead(never)
        assert await stalled.beat()  # progress while it runs
        waiting = asyncio.create_task(candidate.lead(never))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # beating recently: not broken
        # ... then it beats no more (its lost() loop and job are frozen with it)
        assert await asyncio.wait_for(waiting, 10)
        assert not await stalled.beat()  # running again: the lead is gone, its job stops before its next step
        await asyncio.wait_for(stalled.lost(), 5)
        assert await candidate.beat()
        owner = await db.fetchval("SELECT pid FROM leader_beats WHERE job = 'telegram-poll'")
        assert owner == candidate._conn.get_server_pid()
        for e in (stalled, candidate):
            await e.resign()
        assert await leader_of(db, "telegram-poll") is None


async def test_a_leader_that_keeps_beating_is_never_broken(tmp_path, postgres_url):
    async with UserDataStore(tmp_path / "user.sqlite", url=postgres_url) as store:
        leader = election(store.database, "cleanup", retry_s=0.1, lease_s=0.5)
        candidate = election(store.database, "cleanup", retry_s=0.1, lease_s=0.5)
        never = asyncio.Event()
        assert await leader.lead(never)
        leader.check_s = 0.1  # its loop beats five times a lease
        heart = asyncio.create_task(leader.lost())
        waiting = asyncio.create_task(candidate.lead(never))
        await asyncio.sleep(1.5)  # three leases
        assert not waiting.done() and not heart.done()
        waiting.cancel()
        heart.cancel()
        await asyncio.gather(waiting, heart, return_exceptions=True)
        for e in (leader, candidate):
            await e.resign()
