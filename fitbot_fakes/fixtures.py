"""Pytest fixtures for the loopback fakes; import them into a conftest.py.

``from fitbot_fakes.fixtures import telegram_api, discord_api  # noqa: F401``
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from fitbot_fakes.discord_api import FakeDiscord
from fitbot_fakes.telegram_api import FakeTelegramAPI


@pytest.fixture
async def telegram_api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeTelegramAPI]:
    """A started fake Bot API; PTB_TIMEDELTA=1 opts into timedelta retry_after (no deprecation warning)."""
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    async with FakeTelegramAPI() as api:
        yield api


@pytest.fixture
async def discord_api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """A started fake Discord with discord.py's REST base and gateway URL pointed at it."""
    async with FakeDiscord() as fake:
        with fake.point(monkeypatch):
            yield fake
