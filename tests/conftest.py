"""Shared fixtures: every test gets its own data directory and no tokens from the environment."""

from __future__ import annotations

import pytest

SECRET_VARS = (
    "DISCORD_BOT_TOKEN",
    "TELEGRAM_BOT_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "RUNPOD_API_KEY",
    "LAMBDA_API_KEY",
    "DIGITALOCEAN_TOKEN",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Point FitBot at a temporary data directory and hide real tokens, hub endpoints and price refreshes."""
    monkeypatch.setenv("FITBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PRICE_REFRESH_HOURS", "0")  # `fitbot run` in a test never asks a price API
    for name in SECRET_VARS:
        monkeypatch.delenv(name, raising=False)
    return tmp_path
