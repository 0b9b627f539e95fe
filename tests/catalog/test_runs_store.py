"""Measured and pooled runs in the user database (issue 38), on SQLite and PostgreSQL: a user's newest runs
kept, the day's count for flood control, a chat's pool under a member hash, /forget removing both."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.runs.calibrate import AcceptedRun
from storage.runs import MAX_RUNS_PER_USER, member_of
from storage.userdata import UserDataStore


def run(measured: float, kind: str = "decode") -> AcceptedRun:
    return AcceptedRun(
        gpu_id="rtx-4090", gpu_count=1, backend="cuda", model_id="qwen3-8b", quant="Q4_K_M", kind=kind,  # type: ignore[arg-type]
        test="tg128", measured=measured, estimated=150.0, build="8a1d9c25 (4305)", source="llama-bench",
    )  # fmt: skip


async def test_runs_keep_the_newest_count_the_day_and_forget_everything(tmp_path, store_url):
    async with UserDataStore(tmp_path / "user.sqlite", url=store_url) as store:
        runs = store.runs
        old = datetime.now(UTC) - timedelta(days=2)
        await runs.add("tg:1", [run(100.0 + i) for i in range(MAX_RUNS_PER_USER)], now=old)
        await runs.add("tg:1", [run(120.0), run(7000.0, "prefill")])
        mine = await runs.runs("tg:1")
        assert len(mine) == MAX_RUNS_PER_USER and {r.measured for r in mine[:2]} == {120.0, 7000.0}
        assert await runs.added_since("tg:1", datetime.now(UTC) - timedelta(days=1)) == 2
        assert await runs.runs("tg:2") == []
        await runs.share("tg:-100", "tg:1", [run(120.0)])
        await runs.share("tg:-100", "tg:3", [run(110.0)])
        pooled = await runs.pooled("tg:-100")
        assert {p.member for p in pooled} == {member_of("tg:1"), member_of("tg:3")}
        assert all("tg:" not in p.member for p in pooled)  # never who
        await runs.forget("tg:1")
        assert await runs.runs("tg:1") == [] and [p.member for p in await runs.pooled("tg:-100")] == [member_of("tg:3")]
        prefs = store.prefs
        assert not (await prefs.chat("tg:-100")).share_runs
        assert (await prefs.set_chat("tg:-100", share_runs=True)).share_runs
        assert (await prefs.set_chat("tg:-100", lang="de")).share_runs  # other settings leave it
