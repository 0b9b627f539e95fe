"""Operations sub-commands: ``fitbot run``, ``fitbot health`` and ``fitbot stats``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from bot.settings import Settings


async def _health(settings: Settings) -> int:
    from catalog.store import CatalogStore
    from catalog.userdata import UserDataStore

    catalog = await CatalogStore().load()
    async with UserDataStore() as store:
        await (await store.db.execute("SELECT 1")).fetchone()
    print(f"ok: catalog {catalog.version} ({len(catalog.models)} models, {len(catalog.gpus)} devices)")
    return 0


async def _stats(settings: Settings, as_json: bool) -> int:
    from catalog.userdata import UserDataStore

    async with UserDataStore() as store:
        log = store.query_log(settings.query_log_days)
        await log.prune()
        stats = await log.stats()
    if as_json:
        print(json.dumps(stats, indent=1))
        return 0
    print(
        f"questions: {stats['questions']}, not understood: {stats['not_understood']},"
        f" mean latency {stats['mean_latency_ms']} ms"
    )
    for key in ("intents", "models", "gpus", "platforms"):
        rows = stats[key]
        print(f"{key}: " + (", ".join(f"{name} {count}" for name, count in rows) if rows else "–"))  # type: ignore[attr-defined]
    return 0


def main(args: argparse.Namespace) -> int:
    try:
        settings = Settings()
    except Exception as exc:  # pydantic's message names the variable, never its value for secrets
        print(f"fitbot: invalid settings: {exc}", file=sys.stderr)
        return 2
    if settings.fitbot_data_dir:  # one data directory for every store, also when it came from .env
        os.environ["FITBOT_DATA_DIR"] = str(settings.fitbot_data_dir)
    if args.command == "run":
        from bot.run import main_run

        return main_run(settings)
    try:
        if args.command == "health":
            return asyncio.run(_health(settings))
        return asyncio.run(_stats(settings, args.json))
    except Exception as exc:
        print(f"fitbot: {args.command} failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1
