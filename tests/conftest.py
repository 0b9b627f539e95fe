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


# ---- a real PostgreSQL for the store suite (issue 25): started once per session, one database per test


@pytest.fixture(scope="session")
def postgres_server():
    """``initdb`` + ``pg_ctl`` on a temporary directory and free port; skipped only where PostgreSQL
    is not installed (``.ci/run`` installs it and sets FITBOT_REQUIRE_POSTGRES=1, so CI never skips)."""
    import os

    from fitbot_fakes.postgres import TempPostgres, find_bindir

    if find_bindir() is None:
        if os.environ.get("FITBOT_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL is required here but initdb was not found")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    with TempPostgres() as server:
        yield server


@pytest.fixture
async def postgres_url(postgres_server):
    """A fresh, empty database on the session's server, dropped after the test."""
    import uuid

    import asyncpg

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_server.url)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        yield postgres_server.url_for(name)
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    finally:
        await admin.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request):
    """Each store test runs twice: on the SQLite file (None, the default) and on PostgreSQL."""
    return None if request.param == "sqlite" else request.getfixturevalue("postgres_url")
