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
