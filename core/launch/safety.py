"""What may stand in a command FitBot hands back: quoted words and model references that are names.

A corrected command repeats what a user pasted, and in a group another user may run it. Every word
of a shell line is therefore quoted (``shlex.quote``), so nothing the paste carried is ever a shell
operator, substitution or second command; and the model a line names must be a name the engine
accepts, not just any text:

* Ollama (``types/model/name.go``, ``ParseName``): ``[host/][namespace/]model[:tag][+build]``, each
  part of ``A-Z a-z 0-9 _ . -`` (no dot in the namespace), the whole at most 128 characters, with an
  ``http(s)://`` prefix dropped; ``hf.co/<org>/<repo>[:<quant>]`` is that form with host ``hf.co``.
* Hugging Face repo ids (``huggingface_hub.utils.validate_repo_id``): ``[org/]name``, letters,
  digits, ``_ . -``, at most 96 characters, no ``--`` or ``..``.
* A local file or folder (``-m``, ``vllm serve ./dir``): any path without control characters.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

_OLLAMA_PART = r"[A-Za-z0-9_.-]+"
_OLLAMA_NAME = re.compile(
    rf"(?:https?://)?(?:{_OLLAMA_PART}/[A-Za-z0-9_-]+/|[A-Za-z0-9_-]+/)?{_OLLAMA_PART}(?::{_OLLAMA_PART})?(?:\+{_OLLAMA_PART})?"
)
_REPO_ID = re.compile(r"(?:[A-Za-z0-9_.-]{1,96}/)?[A-Za-z0-9_.-]{1,96}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_OLLAMA_NAME = 128


def is_ollama_name(ref: str) -> bool:
    """A model reference ``ollama run``/``pull`` and a Modelfile's FROM accept as a name."""
    bare = re.sub(r"^https?://", "", ref)
    return 0 < len(bare) <= MAX_OLLAMA_NAME and ".." not in bare and _OLLAMA_NAME.fullmatch(ref) is not None


def is_repo_id(ref: str) -> bool:
    """A Hugging Face repo id (``org/name``), optionally with ``:QUANT`` as llama.cpp's ``-hf`` takes it."""
    repo, _, quant = ref.partition(":")
    if quant and not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", quant):
        return False
    return _REPO_ID.fullmatch(repo) is not None and "--" not in repo and ".." not in repo


def is_path(ref: str) -> bool:
    """A local file or folder name: any characters but control characters (quoting does the rest)."""
    return bool(ref) and _CONTROL.search(ref) is None


def is_ollama_ref(ref: str) -> bool:
    """What a Modelfile's FROM or ``ollama run`` may name: a model name or a local GGUF/folder path."""
    return is_ollama_name(ref) or (ref.startswith(("/", "./", "../", "~/")) and is_path(ref))


def shell_line(words: Iterable[str]) -> str | None:
    """The words as one POSIX shell line, each quoted where it needs it; None when a word holds a
    control character (a newline would start a second command in any quoting a chat shows)."""
    out = list(words)
    if any(_CONTROL.search(word) for word in out):
        return None
    return shlex.join(out)


def env_word(name: str, value: str) -> str | None:
    """``NAME=value`` as one shell word with the value quoted; None for a name that is not one."""
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name) or _CONTROL.search(value):
        return None
    return f"{name}={shlex.quote(value)}"


__all__ = ["env_word", "is_ollama_name", "is_ollama_ref", "is_path", "is_repo_id", "shell_line"]
