"""Discord shards split over processes: DISCORD_SHARD_COUNT and DISCORD_SHARD_IDS per process.

Two production bots (``build_bot`` with ``shard_ids``), as two processes would run them, against
the fake gateway with two shards: each identifies only its own shard, and an interaction from a
guild is answered by the bot that holds that guild's shard.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from bot.adapters.discord.bot import build_bot
from bot.app.settings import Settings
from bot.service import Service
from catalog.store import CatalogStore
from fitbot_fakes.discord_api import TOKEN, FakeDiscord

GUILDS = (1 << 22, 2 << 22, 3 << 22, 4 << 22)  # (id >> 22) % 2: shards 1, 0, 1, 0


def test_shard_settings(monkeypatch):
    monkeypatch.setenv("DISCORD_SHARD_COUNT", "4")
    monkeypatch.setenv("DISCORD_SHARD_IDS", "0, 2-3")
    assert Settings().shard_ids() == [0, 2, 3]
    assert Settings().discord_shards == 4
    monkeypatch.setenv("DISCORD_SHARD_IDS", "4")
    with pytest.raises(ValueError, match="DISCORD_SHARD_COUNT"):
        Settings()
    monkeypatch.delenv("DISCORD_SHARD_IDS")
    assert Settings().shard_ids() is None


async def test_each_process_serves_its_own_shards(tmp_path, monkeypatch):
    catalog = await CatalogStore(tmp_path / "catalog.sqlite").load()
    async with FakeDiscord(guild_ids=GUILDS, shards=2) as fake:
        with fake.point(monkeypatch):
            bots = [
                build_bot(Service(catalog), shards=2, shard_ids=[i], guild_ready_timeout=0.05, charts=False)
                for i in range(2)
            ]
            tasks = [asyncio.create_task(b.start(TOKEN)) for b in bots]
            try:
                await fake.wait_gateway(2, count=2, timeout=10)  # one IDENTIFY per process, not four
                identified = sorted(tuple(f["d"]["shard"]) for f in fake.gateway_frames if f.get("op") == 2)
                assert identified == [(0, 2), (1, 2)]
                for b in bots:
                    await asyncio.wait_for(b.wait_until_ready(), 10)
                assert [sorted(b.shards) for b in bots] == [[0], [1]]
                for guild in GUILDS:
                    payload = fake.make_slash("fit", {"model": "qwen3-8b", "gpu": "rtx-4090"}, guild_id=guild)
                    await fake.dispatch("INTERACTION_CREATE", payload)
                    await fake.wait_request("POST", f"/interactions/{payload['id']}/")
                shard_of = {g: (g >> 22) % 2 for g in GUILDS}
                assert [sorted(g.id for g in b.guilds) for b in bots] == [
                    sorted(g for g in GUILDS if shard_of[g] == i) for i in range(2)
                ]
            finally:
                for b in bots:  # as ``run_discord`` stops: answers in flight finish first, then the close
                    await b.drain(5)
                    await b.close()
                for t in tasks:
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await asyncio.wait_for(t, 5)
