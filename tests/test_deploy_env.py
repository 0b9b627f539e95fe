"""deploy/settings.example.env works as systemd's EnvironmentFile= reads it (no inline comments)."""

from __future__ import annotations

from pathlib import Path

from bot.app.settings import Settings

EXAMPLE = Path(__file__).resolve().parents[1] / "deploy" / "settings.example.env"


def systemd_environment(text: str) -> dict[str, str]:
    """EnvironmentFile= semantics: '#'/';' lines are comments; the value is everything after '='."""
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, _, value = line.partition("=")
        env[key.strip()] = value.strip()
    return env


def test_example_settings_are_valid_under_systemd_environment_file(monkeypatch):
    env = systemd_environment(EXAMPLE.read_text(encoding="utf-8"))
    assert "TELEGRAM_BOT_TOKEN" in env and "RATE_USER_PER_MINUTE" in env
    assert not [k for k, v in env.items() if "#" in v], "inline comments become part of the value"
    for key, value in env.items():
        if value:
            monkeypatch.setenv(key, value)
    settings = Settings(_env_file=None)
    assert settings.rate_user_per_minute == 20 and settings.fitbot_log_level == "INFO"
    assert settings.adapters() == []  # no token set: nothing to start
