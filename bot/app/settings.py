"""Settings from the environment (and an optional ``.env``), validated once at start-up.

Tokens are ``SecretStr``: they never appear in ``repr``, logs or error messages. Every setting is
documented in ``deploy/settings.example``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.app import datadir
from storage import DATABASE_SCHEMES

# the price sources' operator keys (catalog/prices/sources), each read from its upper-case variable
PRICE_KEYS = (
    "runpod_api_key",
    "lambda_api_key",
    "digitalocean_token",
    "vast_api_key",
    "shadeform_api_key",
    "prime_api_key",
    "tensordock_api_key",
    "verda_client_id",
    "verda_client_secret",
)


class Settings(BaseSettings):
    # An empty value means unset: systemd EnvironmentFile=, compose env_file and docker --env-file pass
    # "KEY=" as an empty string, and settings.example leaves every optional value empty.
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True)

    discord_bot_token: SecretStr | None = None
    telegram_bot_token: SecretStr | None = None
    hf_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("hf_token", "hugging_face_hub_token")
    )
    hf_endpoint: str | None = None  # a Hugging Face mirror or a test hub; default https://huggingface.co
    hf_hub_offline: bool = False  # no hub look-ups at all: unknown repos get an honest "offline" card

    fitbot_data_dir: Path | None = None  # default: $XDG_DATA_HOME/fitbot
    fitbot_database_url: SecretStr | None = None  # postgresql://… shares the user data across processes
    xdg_data_home: Path | None = None
    fitbot_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    fitbot_adapters: str = "auto"  # "auto" = every adapter whose token is set; or "discord,telegram"

    telegram_base_url: str | None = None  # self-hosted Bot API server, e.g. http://127.0.0.1:8081/bot
    telegram_webhook_url: str | None = None  # public https URL; polling when unset
    telegram_webhook_secret: SecretStr | None = None
    telegram_webhook_listen: str = "127.0.0.1"
    telegram_webhook_port: int = Field(default=8443, ge=1, le=65535)
    discord_shards: int | None = Field(
        default=None, ge=1, le=1024, validation_alias=AliasChoices("discord_shard_count", "discord_shards")
    )
    discord_shard_ids: str | None = None  # this process's shards of DISCORD_SHARD_COUNT: "0,1" or "0-3"
    discord_message_content: bool = False  # privileged intent; mentions work without it

    hub_timeout_s: float = Field(default=10.0, gt=0, le=120)
    hub_cache_days: float = Field(default=7.0, gt=0, le=365)
    rate_user_per_minute: int = Field(default=20, ge=1, le=10000)
    rate_chat_per_minute: int = Field(default=60, ge=1, le=100000)
    rate_expensive_per_minute: int = Field(default=10, ge=1, le=10000)  # charts and hub look-ups, per user
    max_question_chars: int = Field(default=2000, ge=16, le=100000)
    query_log_days: int = Field(default=90, ge=1, le=3650)
    # live GPU prices (catalog/prices): refreshed every this many hours inside `fitbot run`, 0 = off
    price_refresh_hours: float = Field(default=24.0, ge=0, le=24 * 365)
    price_endpoint: str | None = None  # one test server for every price API (fitbot_fakes.price_apis)
    # operator keys (catalog/prices/sources): every provider but Azure needs one; one not set is skipped
    runpod_api_key: SecretStr | None = None
    lambda_api_key: SecretStr | None = None
    digitalocean_token: SecretStr | None = None
    vast_api_key: SecretStr | None = None
    shadeform_api_key: SecretStr | None = None
    prime_api_key: SecretStr | None = None
    tensordock_api_key: SecretStr | None = None
    verda_client_id: SecretStr | None = None
    verda_client_secret: SecretStr | None = None

    # `fitbot mcp --http` (the MCP server for remote clients): the bearer token every request must carry
    fitbot_mcp_token: SecretStr | None = None
    fitbot_mcp_host: str = "127.0.0.1"
    fitbot_mcp_port: int = Field(default=8765, ge=1, le=65535)
    fitbot_mcp_max_body_bytes: int = Field(default=64 * 1024, ge=1024, le=4 * 1024 * 1024)  # larger: HTTP 413
    # reverse proxies whose X-Forwarded-For names the client (per-client limits); "*" = any (container behind one)
    fitbot_mcp_trusted_proxies: str = "127.0.0.1"

    @field_validator("fitbot_database_url")
    @classmethod
    def _known_scheme(cls, url: SecretStr | None) -> SecretStr | None:
        """A misspelt scheme (``postgress://``, ``mysql://``) is refused, not quietly a per-process SQLite
        file; the message names the scheme only (the URL holds the password)."""
        if url is None or not url.get_secret_value().strip():
            return None
        scheme = url.get_secret_value().split("://", 1)[0] if "://" in url.get_secret_value() else ""
        if scheme not in DATABASE_SCHEMES:
            raise ValueError(
                f"unknown scheme {scheme[:20]!r}: use postgresql://user:password@host/db, or leave it empty for"
                " the SQLite file in the data directory"
            )
        return url

    @model_validator(mode="after")
    def _shards_fit(self) -> Settings:
        self.shard_ids()  # DISCORD_SHARD_IDS without a count above each id fails at start-up, not later
        return self

    def data_dir(self) -> Path:
        """Where FitBot keeps its databases: FITBOT_DATA_DIR, else $XDG_DATA_HOME/fitbot."""
        return datadir.data_dir(self.fitbot_data_dir, self.xdg_data_home)

    def catalog_path(self) -> Path:
        return self.data_dir() / datadir.CATALOG_FILE

    def user_db_path(self) -> Path:
        return self.data_dir() / "user.sqlite"

    def database_url(self) -> str | None:
        """The shared PostgreSQL database, or None for the SQLite file in the data directory."""
        return self.fitbot_database_url.get_secret_value() if self.fitbot_database_url else None

    def shard_ids(self) -> list[int] | None:
        """DISCORD_SHARD_IDS as a list (each below DISCORD_SHARD_COUNT, which it requires), or None: all."""
        if not self.discord_shard_ids or not self.discord_shard_ids.strip():
            return None
        ids: set[int] = set()
        for part in self.discord_shard_ids.replace(" ", "").split(","):
            low, _, high = part.partition("-")
            ids.update(range(int(low), int(high or low) + 1))
        if not self.discord_shards or max(ids) >= self.discord_shards:
            raise ValueError("DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT above every id")
        return sorted(ids)

    def mcp_token(self) -> str | None:
        """The MCP server's bearer token, or None when unset (then HTTP mode refuses to start)."""
        token = self.fitbot_mcp_token.get_secret_value().strip() if self.fitbot_mcp_token else ""
        return token or None

    def prices_path(self) -> Path:
        return self.data_dir() / datadir.PRICES_FILE

    def price_keys(self) -> dict[str, str]:
        """Operator API keys of the price sources, by environment variable name."""
        keys = {name.upper(): getattr(self, name) for name in PRICE_KEYS}
        return {name: key.get_secret_value() for name, key in keys.items() if key and key.get_secret_value()}

    def hub_client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``catalog.hub.client.HubClient``: the only place that knows the hub's settings."""
        return {
            "timeout_s": self.hub_timeout_s,
            "endpoint": self.hf_endpoint,
            "token": self.hf_token.get_secret_value() if self.hf_token else None,
            "offline": self.hf_hub_offline,
        }

    def secrets(self) -> list[str]:
        """Every secret value (and a Telegram token's secret part), for the log redaction filter."""
        found = []
        for secret in (
            self.discord_bot_token,
            self.telegram_bot_token,
            self.hf_token,
            self.telegram_webhook_secret,
            self.fitbot_database_url,
            *(getattr(self, name) for name in PRICE_KEYS),
            self.fitbot_mcp_token,
        ):
            if secret is not None and secret.get_secret_value():
                found.append(secret.get_secret_value())
        if self.telegram_bot_token is not None and ":" in self.telegram_bot_token.get_secret_value():
            found.append(self.telegram_bot_token.get_secret_value().split(":", 1)[1])
        return found

    def adapters(self) -> list[str]:
        """Adapters to start: the configured list, or every one whose token is set."""
        if self.fitbot_adapters.strip().lower() != "auto":
            return [a.strip() for a in self.fitbot_adapters.lower().split(",") if a.strip()]
        found = []
        if self.discord_bot_token:
            found.append("discord")
        if self.telegram_bot_token:
            found.append("telegram")
        return found
