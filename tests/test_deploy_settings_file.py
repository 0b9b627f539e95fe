"""The shipped env files work as systemd's EnvironmentFile=, compose's env_file and ``docker run --env-file``
read them (fitbot_fakes/settings_loaders.py): empty values included, the data directory the unit and the image agree on,
and ``fitbot run`` starts with each."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app.settings import Settings
from fitbot_fakes import fixtures
from fitbot_fakes.settings_loaders import (
    ENV_FILES,
    LOADERS,
    compose_env_file,
    compose_loaded,
    image_environment,
    systemd_environment_file,
    systemd_loaded,
    unit_environment,
)

telegram_api = fixtures.telegram_api

EXAMPLE = Path(__file__).resolve().parents[1] / "deploy" / "settings.example"


def test_example_settings_are_valid_under_systemd_environment_file(monkeypatch):
    env = systemd_environment_file(EXAMPLE.read_text(encoding="utf-8"))
    assert "TELEGRAM_BOT_TOKEN" in env and "RATE_USER_PER_MINUTE" in env
    assert not [k for k, v in env.items() if "#" in v], "inline comments become part of the value"
    for key in [k for k in os.environ if k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_"))]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # empty ones too, as systemd passes them
    settings = Settings(_env_file=None)
    assert settings.rate_user_per_minute == 20 and settings.fitbot_log_level == "INFO"
    assert settings.adapters() == []  # no token set: nothing to start


# --------------------------------------------------------------------------- as systemd and compose load them

DEPLOY = EXAMPLE.parent
ROOT = DEPLOY.parent
TOKEN = "123456:TEST-token"


@pytest.mark.parametrize("path", ENV_FILES, ids=[p.name for p in ENV_FILES])
def test_each_env_file_means_the_same_to_systemd_compose_and_docker(path: Path) -> None:
    """A value one loader reads differently (a quote, an inline comment, a continued line) fails here."""
    text = path.read_text(encoding="utf-8")
    read = {name: load(text) for name, load in LOADERS.items()}
    assert read["systemd"], f"{path.name}: nothing assigned"
    assert read["compose"] == read["systemd"] and read["docker-run"] == read["systemd"]


@pytest.mark.parametrize("loaded", [systemd_loaded, compose_loaded], ids=["systemd", "compose"])
def test_the_example_file_loads_with_its_empty_values_and_agrees_on_the_data_directory(loaded, monkeypatch):
    env = loaded()
    assert env["DISCORD_SHARDS"] == "" and env["TELEGRAM_BOT_TOKEN"] == ""  # kept empty, as both loaders do
    for key in [k for k in os.environ if k in env or k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_"))]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings(_env_file=None)
    assert settings.discord_shards is None and settings.telegram_bot_token is None  # empty means unset
    expected = "/var/lib/fitbot" if loaded is systemd_loaded else "/data"
    assert str(settings.data_dir()) == expected


def test_the_unit_makes_its_user_and_its_data_directory():
    unit = (DEPLOY / "fitbot.service").read_text(encoding="utf-8")
    assert "DynamicUser=yes" in unit and "StateDirectory=fitbot" in unit
    assert unit_environment()["FITBOT_DATA_DIR"] == "/var/lib/fitbot"


def test_compose_mounts_the_data_directory_and_the_webhook_file_publishes_its_port():
    compose = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    assert "fitbot-data:/data" in compose and image_environment()["FITBOT_DATA_DIR"] == "/data"
    webhook = (DEPLOY / "compose.webhook.yaml").read_text(encoding="utf-8")
    port = systemd_environment_file(EXAMPLE.read_text(encoding="utf-8"))["TELEGRAM_WEBHOOK_PORT"]
    assert f':{port}:{port}"' in webhook and "TELEGRAM_WEBHOOK_LISTEN: 0.0.0.0" in webhook


@pytest.mark.parametrize("path", ENV_FILES, ids=[p.name for p in ENV_FILES])
@pytest.mark.parametrize("loaded", [systemd_loaded, compose_loaded], ids=["systemd", "compose"])
async def test_fitbot_run_starts_and_stops_with_each_env_file_as_systemd_and_compose_load_it(
    telegram_api, tmp_path, loaded: Callable[[Path], dict[str, str]], path: Path
):
    """The shipped file, every empty value included, plus a token: ``fitbot run`` polls, answers and stops cleanly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_"))}
    env.update({k: v for k, v in loaded(path).items() if k != "PATH"})  # the image's PATH names its venv
    env.update(
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_BASE_URL=telegram_api.base_url,
        FITBOT_DATA_DIR=str(tmp_path / "data"),  # the unit's /var/lib/fitbot, the image's /data, here
        HF_HUB_OFFLINE="1",
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.app.cli", "run", cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        await telegram_api.wait_call("getUpdates", timeout=60)
        telegram_api.push_update(telegram_api.make_message("/fit qwen3 8b 4090", chat_id=77))
        async with asyncio.timeout(30):  # the card (as a captioned chart)
            while not telegram_api.calls_of("sendPhoto") + telegram_api.calls_of("sendMessage"):
                await asyncio.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()[-2000:]


def test_the_loaders_read_by_their_own_rules():
    """The traps a shipped file must avoid, read as each loader's documentation says."""
    text = 'EMPTY=\nINLINE=10 # seconds\nQUOTED="a b"\nSPACED = x  \nCONT=a\\\nb\n'
    assert systemd_environment_file(text) == {
        "EMPTY": "",
        "INLINE": "10 # seconds",
        "QUOTED": "a b",
        "SPACED": "x",
        "CONT": "ab",
    }
    assert compose_env_file(text) == {
        "EMPTY": "",
        "INLINE": "10",
        "QUOTED": "a b",
        "SPACED": "x",
        "CONT": "a\\",
    }
    # the continued line "b" is a bare name there: inherited from the loader's environment (unset here)
    docker = text.replace("SPACED = x  \n", "")  # docker rejects a name with spaces
    assert LOADERS["docker-run"](docker) == {
        "EMPTY": "",
        "INLINE": "10 # seconds",
        "QUOTED": '"a b"',
        "CONT": "a\\",
    }
