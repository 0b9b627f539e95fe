"""No secret at any log level: also the webhook secret ``fitbot run`` generates when none is set."""

from __future__ import annotations

import asyncio
import logging

from bot.app import run as run_module
from bot.app.logs import REDACTED, redact_also, setup_logging
from bot.app.settings import Settings


async def test_a_generated_webhook_secret_is_redacted_at_debug(tmp_path, capsys, monkeypatch):
    passed: dict[str, str | None] = {}

    async def fake_run_telegram(service, **kwargs):
        passed["secret"] = kwargs["webhook_secret"]
        logging.getLogger("telegram.ext").debug("setWebhook secret_token=%s", kwargs["webhook_secret"])

    import bot.adapters.telegram.bot as telegram_bot

    monkeypatch.setattr(telegram_bot, "run_telegram", fake_run_telegram)
    settings = Settings(
        _env_file=None,
        fitbot_data_dir=tmp_path,
        telegram_bot_token="123456:TEST-token",
        telegram_webhook_url="https://bot.example.org/telegram",
        fitbot_log_level="DEBUG",
    )
    setup_logging("DEBUG", settings.secrets())
    try:
        await run_module.run_adapter("telegram", None, settings, asyncio.Event(), lambda *a, **k: None)  # type: ignore[arg-type]
    finally:
        logging.getLogger().handlers.clear()
    secret = passed["secret"]
    assert secret and len(secret) >= 32
    err = capsys.readouterr().err
    assert secret not in err and REDACTED in err


def test_redact_also_reaches_every_handler(capsys):
    setup_logging("DEBUG", [])
    try:
        redact_also("s3cr3t-generated-value")
        logging.getLogger("x").debug("value s3cr3t-generated-value here")
    finally:
        logging.getLogger().handlers.clear()
    assert "s3cr3t-generated-value" not in capsys.readouterr().err
