"""How the three loaders our deploy files meet read an env file, each by its own rules (issue 21): stand-ins
for systemd, compose and docker, which do not run here.

A shipped env file must mean the same under all three, empty values included:

* systemd ``EnvironmentFile=`` (systemd.exec(5), src/basic/env-file.c): ``#``/``;`` start a comment
  only at the start of a line; an unquoted value keeps everything (``#`` included) after ``=`` up to
  the line's end, leading and trailing whitespace dropped, a backslash escapes the next character
  (a newline: the line continues); quotes are removed (``'…'`` verbatim, ``"…"`` with shell escapes).
* compose ``env_file`` (compose-spec dotenv): ``#`` lines are comments and an unquoted value ends at
  an inline `` #``; ``KEY: value`` works too; quotes are removed; ``${VAR}`` is expanded.
* ``docker run --env-file`` (docker/cli opts): ``#`` lines are comments; the value is everything
  after the first ``=``, verbatim: no quote removal, no inline comments, no expansion.

Each returns ``{name: value}`` in file order; ``KEY=`` gives ``""`` in all three (not unset).
``systemd_loaded`` / ``compose_loaded`` / ``docker_loaded`` add what the unit or the image sets itself:
the environment ``fitbot run`` gets from a shipped env file under each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
EXAMPLE = DEPLOY / "settings.example"
ENV_FILES = sorted(DEPLOY.glob("settings.example*"))  # every env file we ship (examples only: no values)

_SHELL_NEED_ESCAPE = '"\\`$'
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def systemd_environment_file(text: str) -> dict[str, str]:
    """systemd's reading, character by character (a value may continue over lines)."""
    env: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        if text[i] in "#;":  # a comment line (a trailing backslash does not continue it)
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        start = i
        while i < n and text[i] not in "=\r\n":
            i += 1
        if i >= n or text[i] != "=":
            continue  # no "=": ignored
        key = text[start:i].rstrip(" \t")
        i += 1
        value, i = _systemd_value(text, i)
        if _NAME.match(key):  # systemd drops assignments to invalid names
            env[key] = value
    return env


def _systemd_value(text: str, i: int) -> tuple[str, int]:
    """From after ``=`` to the end of the value; quotes count only before any unquoted character."""
    out: list[str] = []
    n = len(text)
    started = False  # an unquoted character was read: quotes are literal from here
    keep = 0  # length of ``out`` without its trailing unquoted whitespace
    while i < n and text[i] not in "\r\n":
        c = text[i]
        if not started and c in " \t":
            i += 1
        elif not started and c in "'\"":
            i = _systemd_quoted(text, i, out)
            keep = len(out)
        elif c == "\\":
            if i + 1 < n and text[i + 1] != "\n":  # an escaped newline continues the value
                out.append(text[i + 1])
            started, keep = True, len(out)
            i += 2
        else:
            out.append(c)
            started = True
            if c not in " \t":
                keep = len(out)
            i += 1
    return "".join(out[:keep]), i


def _systemd_quoted(text: str, i: int, out: list[str]) -> int:
    """A quoted part: ``'…'`` verbatim, ``"…"`` with the shell's escapes; may span lines."""
    quote = text[i]
    i += 1
    while text[i] != quote:
        if quote == '"' and text[i] == "\\":
            i += 1
            if text[i] in _SHELL_NEED_ESCAPE:
                out.append(text[i])
            elif text[i] != "\n":
                out.extend(("\\", text[i]))
        else:
            out.append(text[i])
        i += 1
    return i + 1


def compose_env_file(text: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """compose's reading: line by line, inline `` #`` comments, quotes removed, ``${VAR}`` expanded."""
    environ = environ or {}
    env: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        match = re.match(r"([A-Za-z0-9_.]+)\s*([=:])?", line)
        if match is None:
            raise ValueError(f"compose rejects the line {raw!r}")
        key = match.group(1)
        if match.group(2) is None:  # a bare name: inherited from compose's own environment, if set
            if key in environ:
                env[key] = environ[key]
            continue
        rest = line[match.end() :].lstrip()
        if rest[:1] in ("'", '"'):
            quote = rest[0]
            end = rest.index(quote, 1)
            value = rest[1:end]
            if quote == '"':
                value = _expand(value.replace("\\n", "\n").replace("\\r", "\r"), env, environ)
        else:
            value = _expand(re.split(r"\s#", rest, maxsplit=1)[0].rstrip(), env, environ)
        env[key] = value
    return env


def _expand(value: str, env: Mapping[str, str], environ: Mapping[str, str]) -> str:
    def var(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, environ.get(name, ""))

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", var, value)


def docker_env_file(text: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``docker run --env-file``: everything after the first ``=`` is the value, byte for byte."""
    environ = environ or {}
    env: dict[str, str] = {}
    for raw in text.removeprefix("\ufeff").splitlines():
        line = raw.lstrip()
        if not line or line.startswith("#"):
            continue
        key, has_value, value = line.partition("=")
        if not key or any(c.isspace() for c in key):
            raise ValueError(f"docker rejects the line {raw!r}")
        if has_value:
            env[key] = value
        elif key in environ:
            env[key] = environ[key]
    return env


LOADERS: dict[str, Callable[[str], dict[str, str]]] = {
    "systemd": systemd_environment_file,
    "compose": compose_env_file,
    "docker-run": docker_env_file,
}


def unit_environment() -> dict[str, str]:
    """The unit's own ``Environment=`` assignments (space-separated KEY=value pairs)."""
    env: dict[str, str] = {}
    for line in (DEPLOY / "fitbot.service").read_text(encoding="utf-8").splitlines():
        if line.startswith("Environment="):
            for pair in line.removeprefix("Environment=").split():
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def image_environment() -> dict[str, str]:
    """The Dockerfile's ``ENV`` block (KEY=value pairs, continued with backslashes)."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            for pair in line.removeprefix("ENV ").split():
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def systemd_loaded(path: Path = EXAMPLE) -> dict[str, str]:
    """What the service sees: EnvironmentFile= assignments override Environment= ones; empty values stay."""
    return {**unit_environment(), **systemd_environment_file(path.read_text(encoding="utf-8"))}


def compose_loaded(path: Path = EXAMPLE) -> dict[str, str]:
    """What the container sees: the image's ENV, overridden by env_file (empty values stay empty strings)."""
    return {**image_environment(), **compose_env_file(path.read_text(encoding="utf-8"))}


def docker_loaded(path: Path = EXAMPLE) -> dict[str, str]:
    """``docker run --env-file``: the image's ENV, overridden by the file, verbatim."""
    return {**image_environment(), **docker_env_file(path.read_text(encoding="utf-8"))}


LOADED: dict[str, Callable[[Path], dict[str, str]]] = {
    "systemd": systemd_loaded,
    "compose": compose_loaded,
    "docker-run": docker_loaded,
}
