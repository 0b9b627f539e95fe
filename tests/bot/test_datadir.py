"""One ``fitbot run`` per data directory: the second is refused with a message that names it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.app import datadir
from bot.app.datadir import DataDirBusy
from bot.app.run import run
from bot.app.settings import Settings


def test_a_second_claim_on_one_directory_is_refused_and_a_released_one_can_be_taken(tmp_path):
    first = datadir.claim(tmp_path)
    with pytest.raises(DataDirBusy, match=str(tmp_path)):
        datadir.claim(tmp_path)
    first.close()
    datadir.claim(tmp_path).close()


async def test_fitbot_run_on_a_directory_in_use_exits_1_and_says_why(tmp_path, caplog):
    settings = Settings(_env_file=None, fitbot_data_dir=tmp_path, telegram_bot_token="123456:TEST-token")
    held = datadir.claim(tmp_path)
    try:
        with caplog.at_level(logging.ERROR):
            code = await run(settings, adapter_runner=lambda *a: asyncio.sleep(0), stop=asyncio.Event())
    finally:
        held.close()
    assert code == 1
    assert any("another fitbot process" in r.getMessage() and str(tmp_path) in r.getMessage() for r in caplog.records)


async def test_workers_sharing_postgresql_each_run_on_their_own_data_directory(tmp_path, postgres_url, caplog):
    """Scale-out is not refused: the lock guards the per-process directory, the database is what is shared."""

    def on(directory: str) -> Settings:
        return Settings(
            _env_file=None,
            fitbot_data_dir=tmp_path / directory,
            telegram_bot_token="123456:TEST-token",
            fitbot_database_url=postgres_url,
        )

    serving: list[str] = []
    serving_both = asyncio.Event()

    async def adapter(name, service, settings, stop, state):
        assert service.store.database.shared
        serving.append(settings.data_dir().name)
        if len(serving) == 2:
            serving_both.set()
        await stop.wait()

    stop = asyncio.Event()
    workers = [asyncio.create_task(run(on(d), adapter_runner=adapter, stop=stop)) for d in ("w1", "w2")]
    try:
        await asyncio.wait_for(serving_both.wait(), 30)
        with caplog.at_level(logging.ERROR):
            code = await run(on("w1"), adapter_runner=adapter, stop=asyncio.Event())
        assert code == 1
        assert any("FITBOT_DATABASE_URL each need their own" in r.getMessage() for r in caplog.records)
    finally:
        stop.set()
        codes = await asyncio.gather(*workers)
    assert sorted(serving) == ["w1", "w2"]
    assert codes == [0, 0]


@pytest.mark.parametrize(
    ("environment", "env_file"),
    [
        ({"FITBOT_DATA_DIR": "/srv/fitbot"}, ""),
        ({"fitbot_data_dir": "/srv/lower"}, ""),
        ({"XDG_DATA_HOME": "/xdg"}, ""),
        ({"FITBOT_DATA_DIR": "", "XDG_DATA_HOME": "/xdg"}, ""),  # empty means unset
        ({}, ""),
        ({}, "FITBOT_DATA_DIR=/from/file\n"),
        ({"FITBOT_DATA_DIR": "/from/env"}, "FITBOT_DATA_DIR=/from/file\n"),  # the environment wins
        ({"FITBOT_DATA_DIR": ""}, "FITBOT_DATA_DIR=/from/file\nXDG_DATA_HOME=\n"),
        ({}, "# comment\nexport XDG_DATA_HOME='/quoted xdg'\nFITBOT_DATA_DIR\n"),
    ],
)
def test_the_one_shot_commands_find_the_data_directory_as_the_settings_do(environment, env_file, tmp_path, monkeypatch):
    for key in ("FITBOT_DATA_DIR", "XDG_DATA_HOME", "fitbot_data_dir", "xdg_data_home"):
        monkeypatch.delenv(key, raising=False)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    if env_file:
        (tmp_path / ".env").write_text(env_file, encoding="utf-8")
    assert datadir.from_environment() == Settings().data_dir()


async def test_fitbot_run_on_a_directory_it_cannot_write_exits_1_and_names_it(tmp_path, caplog):
    """A read-only mount or the unit's sandbox: one clear line naming the directory, no traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    where = blocker / "data"  # cannot be created: its parent is a file (as unwritable as a read-only mount)
    settings = Settings(_env_file=None, fitbot_data_dir=where, telegram_bot_token="123456:TEST-token")
    with caplog.at_level(logging.ERROR):
        code = await run(settings, adapter_runner=lambda *a: asyncio.sleep(0), stop=asyncio.Event())
    assert code == 1
    [record] = [r for r in caplog.records if getattr(r, "event", None) == "startup_failed"]
    assert str(where) in record.getMessage() and "cannot be written" in record.getMessage()
    assert record.exc_info is None
