"""A worker's start against its PostgreSQL: an outage is waited out, a misspelt URL is refused at once."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import ValidationError

from bot.app import migrate as scale
from bot.app import run as run_module
from bot.app.cli import main as cli_main
from bot.app.settings import Settings
from fitbot_fakes.postgres import free_port
from fitbot_fakes.proxy import Proxy
from fitbot_fakes.telegram_api import FakeTelegramAPI

TOKEN = "123456:TEST-token"


@pytest.mark.parametrize("url", ["postgress://fitbot:pw-s3cret@db/fitbot", "mysql://fitbot:pw-s3cret@db/fitbot", "db"])
def test_an_unknown_database_url_scheme_is_a_clear_start_up_error(url, monkeypatch, capsys):
    """It used to become a per-process SQLite file without a word: workers that never shared anything."""
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, fitbot_database_url=url)
    assert "unknown scheme" in str(caught.value) and "postgresql://" in str(caught.value)
    monkeypatch.setenv("FITBOT_DATABASE_URL", url)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    assert cli_main(["run"]) == 2
    err = capsys.readouterr().err
    assert "FITBOT_DATABASE_URL" in err and "unknown scheme" in err
    assert "pw-s3cret" not in err  # the URL holds the password: only its scheme is named


def test_the_documented_schemes_and_an_empty_value_are_taken():
    assert Settings(_env_file=None, fitbot_database_url="postgresql://u@h/db").database_url() == "postgresql://u@h/db"
    assert Settings(_env_file=None, fitbot_database_url="postgres://u@h/db").database_url() == "postgres://u@h/db"
    assert Settings(_env_file=None, fitbot_database_url="  ").database_url() is None


async def test_a_worker_started_while_postgresql_is_down_waits_and_then_serves(
    tmp_path, postgres_url, monkeypatch, caplog
):
    """Compose or a reboot starts the workers before the database: each used to exit at once."""
    monkeypatch.setattr(scale, "START_BACKOFF_S", (0.2, 0.4))
    server = int(postgres_url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = Proxy(server)
    proxy.port = free_port()  # nothing listens there yet: connections are refused
    async with FakeTelegramAPI(token=TOKEN) as api:
        settings = Settings(
            _env_file=None,
            telegram_bot_token=TOKEN,
            telegram_base_url=api.base_url,
            fitbot_data_dir=tmp_path,
            fitbot_database_url=postgres_url.replace(f":{server}/", f":{proxy.port}/"),
            hf_hub_offline=True,
            price_refresh_hours=0,
        )
        stop = asyncio.Event()
        with caplog.at_level(logging.INFO):
            worker = asyncio.create_task(run_module.run(settings, stop=stop))
            try:
                async with asyncio.timeout(30):
                    while sum(r.__dict__.get("event") == "database_unreachable" for r in caplog.records) < 3:
                        assert not worker.done(), "the worker exited instead of waiting"
                        await asyncio.sleep(0.05)
                    await proxy.up()  # the database is there now
                    while not api.calls_of("getUpdates"):
                        await asyncio.sleep(0.05)
                    api.push_update(api.make_message("/fit qwen3-8b rtx 4090", chat_id=777))
                    while not any(e.method in ("sendMessage", "sendPhoto") and e.status == 200 for e in api.exchanges):
                        await asyncio.sleep(0.05)
            finally:
                stop.set()
                code = await asyncio.wait_for(worker, 30)
                await proxy.down()
    assert code == 0
    assert "pw" not in caplog.text and "unreachable" in caplog.text


async def test_a_stop_while_waiting_for_postgresql_exits_cleanly(tmp_path, monkeypatch):
    monkeypatch.setattr(scale, "START_BACKOFF_S", (0.2,))
    settings = Settings(
        _env_file=None,
        telegram_bot_token=TOKEN,
        fitbot_data_dir=tmp_path,
        fitbot_database_url=f"postgresql://fitbot@127.0.0.1:{free_port()}/fitbot",
    )
    stop = asyncio.Event()
    worker = asyncio.create_task(run_module.run(settings, stop=stop))
    await asyncio.sleep(0.5)
    assert not worker.done()
    stop.set()
    assert await asyncio.wait_for(worker, 10) == 0
