"""The data directory: one ``fitbot run`` per directory (an OS lock), and a marker that says FitBot made it.

* ``claim`` takes an exclusive ``flock`` on ``fitbot.lock`` for the life of the process. Two
  processes on one directory answered Telegram twice (the second re-queued the first's open inbox
  rows); now the second is refused with a message naming the directory and the holder's pid. The
  kernel drops the lock when the process dies, so a crash never leaves a stale lock. A storage
  backend shared by several processes (PostgreSQL) skips ``claim``.
* A directory that cannot be written (a read-only mount, the unit's sandbox, wrong owner) is
  refused with ``DataDirUnwritable``, which names it and what to check, not a traceback.
* ``MARKER`` is written by ``fitbot run`` (``mark``); ``fitbot health`` checks it first, so a wrong
  ``FITBOT_DATA_DIR`` fails clearly instead of reporting "ok" and creating empty databases there.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

LOCK_FILE = "fitbot.lock"
MARKER = ".fitbot-data"


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
            " only one may use a data directory (see deploy/OPERATIONS.md)"
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
