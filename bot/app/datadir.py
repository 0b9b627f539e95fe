"""The data directory: one ``fitbot run`` per directory (an OS lock), and a marker that says FitBot made it.

* ``claim`` takes an exclusive ``flock`` on ``fitbot.lock`` for the life of the process. Two
  processes on one directory answered Telegram twice (the second re-queued the first's open inbox
  rows); now the second is refused with a message naming the directory and the holder's pid. The
  kernel drops the lock when the process dies, so a crash never leaves a stale lock. The lock
  guards what is per process on either backend (``user.sqlite`` without a shared database; the
  catalog, ``health.json`` and the Discord journal always), so workers sharing PostgreSQL each
  get a data directory of their own and share only the database.
* A directory that cannot be written (a read-only mount, the unit's sandbox, wrong owner) is
  refused with ``DataDirUnwritable``, which names it and what to check, not a traceback.
* ``MARKER`` is written by ``fitbot run`` (``mark``); ``fitbot health`` checks it first, so a wrong
  ``FITBOT_DATA_DIR`` fails clearly instead of reporting "ok" and creating empty databases there.
* ``from_environment`` finds the directory the way ``Settings`` does, without importing
  pydantic-settings (a tenth of a second): the one-shot commands need no other setting.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

CATALOG_FILE = "catalog.sqlite"
PRICES_FILE = "prices.sqlite"  # prices seen by `fitbot catalog refresh`, merged over the snapshot
LOCK_FILE = "fitbot.lock"
MARKER = ".fitbot-data"


def data_dir(fitbot_data_dir: Path | None, xdg_data_home: Path | None) -> Path:
    """Where FitBot keeps its databases: FITBOT_DATA_DIR, else $XDG_DATA_HOME/fitbot."""
    if fitbot_data_dir:
        return fitbot_data_dir
    return (xdg_data_home or Path(os.path.expanduser("~")) / ".local" / "share") / "fitbot"


def from_environment(env_file: str = ".env") -> Path:
    """``Settings().data_dir()``: the two variables from the environment, else from ``env_file``; names
    in any case, empty values unset (as ``Settings`` reads them)."""
    values: dict[str, str] = {}
    if Path(env_file).is_file():
        from dotenv import dotenv_values  # what pydantic-settings reads the file with

        values.update((k.lower(), v) for k, v in dotenv_values(env_file, encoding="utf-8").items() if v)
    values.update((k.lower(), v) for k, v in os.environ.items() if v)
    given = {name: Path(values[name]) if name in values else None for name in ("fitbot_data_dir", "xdg_data_home")}
    return data_dir(given["fitbot_data_dir"], given["xdg_data_home"])


class DataDirBusy(RuntimeError):
    """Another process holds the data directory."""


class DataDirUnwritable(RuntimeError):
    """The data directory cannot be created or written."""


def claim(data_dir: Path) -> IO[str]:
    """Locks ``data_dir`` for this process (keep the returned file open); raises ``DataDirBusy`` if held,
    ``DataDirUnwritable`` if it cannot be written."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        handle = open(data_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held for the process's life
    except OSError as exc:
        raise DataDirUnwritable(
            f"the data directory {data_dir} cannot be written ({exc.strerror or exc.__class__.__name__});"
            " check FITBOT_DATA_DIR, its owner and mount (under the systemd unit: StateDirectory= or"
            " ReadWritePaths=)"
        ) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise DataDirBusy(
            f"another fitbot process (pid {holder}) is running on the data directory {data_dir};"
            " only one may use a data directory; workers sharing FITBOT_DATABASE_URL each need their own"
            " (see deploy/OPERATIONS.md)"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def mark(data_dir: Path) -> None:
    """Records that FitBot owns ``data_dir`` (for ``fitbot health``)."""
    marker = data_dir / MARKER
    if not marker.exists():
        marker.write_text("FitBot data directory (written by `fitbot run`)\n", encoding="utf-8")


def is_marked(data_dir: Path) -> bool:
    return (data_dir / MARKER).is_file()
