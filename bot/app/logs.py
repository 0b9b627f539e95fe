"""Logging for ``fitbot run``: one JSON object per line, with every secret redacted on every handler.

Secrets reach log records in ways no call site controls: python-telegram-bot's ``InvalidToken``
message quotes the token, aiohttp exceptions print Bot API URLs (``…/bot<token>/sendMessage``),
httpx logs every URL at DEBUG. So redaction is not left to the call sites: ``Redactor`` is a
``logging.Filter`` installed on every handler of the root logger, and it rewrites the message,
its arguments, the formatted traceback and any extra fields before a formatter sees them.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Iterable

_RESERVED = set(vars(logging.makeLogRecord({})))
# Telegram bot tokens ("123456789:AA…") and Bot API URLs, even of tokens we were not told about.
_TELEGRAM_TOKEN = re.compile(r"\d{5,}:[A-Za-z0-9_-]{20,}")
_BOT_URL = re.compile(r"/bot[^/\s'\"]+/")
REDACTED = "«redacted»"
NOISY = ("httpx", "httpcore", "discord.gateway", "discord.client", "discord.http", "telegram.ext.Updater", "aiohttp")


class Redactor(logging.Filter):
    """Replaces the given secrets (and anything shaped like a Telegram token or Bot API URL) in a record."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        text = _TELEGRAM_TOKEN.sub(REDACTED, text)
        return _BOT_URL.sub(f"/bot{REDACTED}/", text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            # formatters use the cached text instead of formatting the exception again
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _RESERVED and isinstance(value, str):
                setattr(record, key, self.redact(value))
        return True


class JsonLines(logging.Formatter):
    """One JSON object per line; extra fields given with ``extra={...}`` are kept."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update({k: v for k, v in vars(record).items() if k not in _RESERVED and not k.startswith("_")})
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


def emit(level: str, message: str, **fields: object) -> None:
    """One JSON line on stderr without configuring logging (for errors before the settings are known)."""
    line = {"ts": round(time.time(), 3), "level": level, "logger": "fitbot", "msg": message, **fields}
    print(json.dumps(line, ensure_ascii=False, default=str), file=sys.stderr)


def redact_also(secret: str) -> None:
    """Adds a secret known only after start-up (a generated webhook secret) to every handler's redactor."""
    for handler in logging.getLogger().handlers:
        for each in handler.filters:
            if isinstance(each, Redactor) and len(secret) >= 6 and secret not in each.secrets:
                each.secrets = sorted({*each.secrets, secret}, key=len, reverse=True)


def setup_logging(level: str, secrets: Iterable[str] = ()) -> Redactor:
    """JSON lines on stderr, the redaction filter on every root handler, chatty libraries at WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    redactor = Redactor(secrets)
    for each in logging.getLogger().handlers:
        each.addFilter(redactor)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    return redactor
