"""deploy/compose.scale.yaml: PostgreSQL, the migration first, two workers that are valid settings, a proxy."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app.settings import Settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_the_scale_out_compose_file_wires_two_valid_workers(monkeypatch):
    yaml = pytest.importorskip("yaml")
    services = yaml.safe_load((DEPLOY / "compose.scale.yaml").read_text(encoding="utf-8"))["services"]
    assert services["migrate"]["command"] == ["fitbot", "migrate"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    shards = []
    for name in ("worker-1", "worker-2"):
        worker = services[name]
        assert worker["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        for key, value in worker["environment"].items():
            monkeypatch.setenv(key, value.replace("${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}", "pw"))
        settings = Settings(_env_file=None)
        assert settings.database_url() == "postgresql://fitbot:pw@postgres:5432/fitbot"
        assert settings.telegram_webhook_listen == "0.0.0.0"
        shards += settings.shard_ids() or []
    assert sorted(shards) == [0, 1]  # every shard held by exactly one worker
    caddy = (DEPLOY / "Caddyfile.scale").read_text(encoding="utf-8")
    assert "worker-1:8443 worker-2:8443" in caddy and "lb_try_duration" in caddy
