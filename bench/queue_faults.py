"""Fenced shared work under faults: three ``fitbot run`` workers on one PostgreSQL, a backlog queued at once.

    .venv/bin/python bench/queue_faults.py [--scenario sigstop|pgrestart|clockstep|dbcut|all] [--updates 600] [--quick]

The cluster is bench/scale.py's (a throwaway PostgreSQL, the fake Bot API in this process, production
workers as child processes, exactly-once accounting by ``bench.burst_plan``). When a third of
the backlog is answered, one fault:

* ``sigstop``: the elected poller is SIGSTOPped for ``--pause`` seconds (past the inbox lease, 15 s,
  and the leader's, 10 s), then SIGCONTed: it wakes up holding a batch the others took over;
* ``pgrestart``: PostgreSQL restarts (``pg_ctl restart -m fast``: every session cut) under load;
* ``clockstep``: every lease and leader beat is moved 30 s into the past in one statement, which is
  what a 30 s forward step of the database's clock does to them (the bench cannot step the clock of
  a shared machine); the workers' own clocks play no part in leases;
* ``dbcut``: the elected poller reaches PostgreSQL through a loopback proxy (``fitbot_fakes.proxy``)
  that goes down for ``--cut`` seconds (connections refused and reset) while the others keep theirs.

Prints lost (never answered), duplicates (answers sent twice) and their share of the backlog, the
updates the faulted side held at that instant ("in flight": the most that could be sent twice),
and for ``sigstop`` and ``dbcut`` the poll failover: from the fault to another worker holding the
poller's lock.
Asserts nothing (tests/bot/test_shared_fencing.py and tests/catalog/test_db_leader.py check the rules).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale import TOKEN, answered, card_tally, leader, start_worker, until, wait_leader  # noqa: E402

SCENARIOS = ("sigstop", "pgrestart", "clockstep", "dbcut")
STEP_S = 30.0


async def held_by(url: str, name: str | None) -> int:
    """Open updates claimed (``claimed_by``) by ``name``, or by anyone when None."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        if name is None:
            value = await conn.fetchval(
                "SELECT COUNT(*) FROM tg_inbox WHERE done_at IS NULL AND claimed_by IS NOT NULL"
            )
        else:
            value = await conn.fetchval("SELECT COUNT(*) FROM tg_inbox WHERE done_at IS NULL AND claimed_by = $1", name)
    finally:
        await conn.close()
    return int(value)


async def step_clock(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            await conn.execute(
                "UPDATE tg_inbox SET lease_until = lease_until - $1 WHERE lease_until IS NOT NULL", STEP_S
            )
            await conn.execute("UPDATE leader_beats SET beat_at = beat_at - $1", STEP_S)
    finally:
        await conn.close()


async def fault(
    scenario: str, pg: Any, workers: list[asyncio.subprocess.Process], pause_s: float, proxy: Any
) -> dict[str, Any]:
    """Apply the fault; returns what it held and how long it took."""
    polling = await leader(pg.url)
    if scenario == "dbcut":
        in_flight = await held_by(pg.url, polling)
        await proxy.down()
        _, failover_s = await wait_leader(pg.url, polling, pause_s + 30)
        await asyncio.sleep(max(0.0, pause_s - failover_s))
        await proxy.up()
        return {"in_flight": in_flight, "poll_failover_s": round(failover_s, 2), "cut_s": pause_s}
    if scenario == "sigstop":
        assert polling is not None
        stopped = next(w for w in workers if polling.endswith(f":{w.pid}"))
        in_flight = await held_by(pg.url, polling)
        stopped.send_signal(signal.SIGSTOP)
        _, failover_s = await wait_leader(pg.url, polling, pause_s + 30)
        await asyncio.sleep(max(0.0, pause_s - failover_s))
        stopped.send_signal(signal.SIGCONT)
        return {"in_flight": in_flight, "poll_failover_s": round(failover_s, 2), "paused_s": pause_s}
    in_flight = await held_by(pg.url, None)
    started = time.monotonic()
    if scenario == "pgrestart":
        log = str(pg.root / "server.log")  # the new server's output goes there, not into pg_ctl's pipes
        await asyncio.to_thread(pg._run, "pg_ctl", "-D", str(pg.data), "-m", "fast", "-l", log, "-w", "restart")
        return {"in_flight": in_flight, "restart_s": round(time.monotonic() - started, 2)}
    await step_clock(pg.url)
    return {"in_flight": in_flight, "step_s": STEP_S}


async def scenario_round(scenario: str, updates: int, timeout: float, pause_s: float) -> dict[str, Any]:
    from bench.burst_plan import (
        apology_texts,
        expectations,
        make_plan,
        slow_down_pattern,
        verify,
        wait_for_responses,
    )
    from catalog.store import CatalogStore
    from fitbot_fakes.postgres import TempPostgres, free_port
    from fitbot_fakes.proxy import Proxy
    from fitbot_fakes.telegram_api import FakeTelegramAPI

    asks = make_plan(max(1, updates // 5), 5, seed=40)[:updates]
    with tempfile.TemporaryDirectory() as tmp, TempPostgres() as pg:
        root = Path(tmp)
        catalog_file = root / "catalog.sqlite"
        catalog = await CatalogStore(catalog_file).load()
        expected = await expectations(catalog, asks)
        cards = {text for texts in expected.values() for text in texts} | apology_texts()
        async with FakeTelegramAPI(token=TOKEN) as api:
            workers: list[asyncio.subprocess.Process] = []
            proxy = Proxy(pg.port)
            proxy.port = free_port()
            await proxy.up()
            try:
                first_url = pg.url.replace(f":{pg.port}/", f":{proxy.port}/") if scenario == "dbcut" else pg.url
                workers.append(await start_worker(root / "worker0", catalog_file, api.base_url, first_url))
                await wait_leader(pg.url, None, 60)  # the first one up leads (through the proxy for dbcut)
                for n in (1, 2):
                    workers.append(await start_worker(root / f"worker{n}", catalog_file, api.base_url, pg.url))
                await api.wait_call("getUpdates", timeout=60)
                await asyncio.sleep(1.0)  # every worker up (setMyCommands)
                tally = card_tally(api, cards, slow_down_pattern())
                pushed: dict[int, list[float]] = {}
                for a in asks:
                    api.push_update(api.make_message(a.text, chat_id=a.chat, language_code=a.lang))
                    pushed.setdefault(a.chat, []).append(time.monotonic())
                await until(answered(tally, updates // 3), "a third answered", timeout)
                figures = await fault(scenario, pg, workers, pause_s, proxy)
                verdict, _ = await wait_for_responses(tally, asks, expected, timeout, grace=3.0)
                verify(asks, expected, tally, pushed_at=pushed)
                for problem in verdict.problems:
                    print(problem[:300], file=sys.stderr)
            finally:
                for w in workers:
                    if w.returncode is None:
                        w.send_signal(signal.SIGCONT)
                        w.send_signal(signal.SIGTERM)
                await asyncio.gather(*(w.wait() for w in workers))
                await proxy.down()
    return {
        "scenario": scenario,
        "updates": updates,
        "answered": verdict.answered + verdict.slow_downs + verdict.apologies,
        "lost": verdict.missing,
        "duplicates": verdict.duplicates,
        "duplicates_pct": round(100 * verdict.duplicates / max(1, updates), 2),
        **figures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=(*SCENARIOS, "all"), default="all")
    parser.add_argument("--updates", type=int, default=600, help="questions queued at once (default 600)")
    parser.add_argument("--pause", type=float, default=25.0, help="seconds the poller stays SIGSTOPped or cut off")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for every answer")
    parser.add_argument("--quick", action="store_true", help="a CI-sized run: clockstep, 60 updates")
    args = parser.parse_args()
    scenarios = SCENARIOS if args.scenario == "all" else (args.scenario,)
    if args.quick:
        scenarios, args.updates = (("clockstep",) if args.scenario == "all" else scenarios), 60
    for scenario in scenarios:
        result = asyncio.run(scenario_round(scenario, args.updates, args.timeout, args.pause))
        print(" · ".join(f"{k} {v}" for k, v in result.items()), flush=True)


if __name__ == "__main__":
    main()
