"""A real, throwaway PostgreSQL server for tests and benches: ``initdb`` + ``pg_ctl`` on a temp dir.

Nothing is mocked: it is the distribution's own server on a free loopback port, trust
authentication, fsync off (the data dies with the directory anyway). PostgreSQL refuses to run
as root, so under root (CI containers) every server command runs as the ``postgres`` user
through ``runuser`` and the directory is handed to that user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

SUPERUSER = "fitbot"
START_TIMEOUT_S = 60


def find_bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: on the PATH, or Debian's /usr/lib/postgresql/NN/bin (newest)."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(debian[-1]).parent if debian else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TempPostgres:
    """``with TempPostgres() as pg: pg.url`` — a running server until the block ends."""

    def __init__(self, bindir: Path | None = None) -> None:
        bindir = bindir or find_bindir()
        if bindir is None:
            raise FileNotFoundError("PostgreSQL is not installed (no initdb; Debian: apt-get install postgresql)")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="fitbot-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as_postgres = os.geteuid() == 0

    @property
    def url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=START_TIMEOUT_S)

    def start(self) -> Self:
        if self._as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        os.chmod(self.root, 0o700)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "--no-sync")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start")
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, FileNotFoundError):
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
