"""What a hub look-up talks about: errors with message keys, repo references, and GGUF file groups.

Pure parsing, no network: a repo id or URL (with an optional ``:QUANT``) is checked before any
request, and a repo's GGUF files are grouped by quant with split files summed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from catalog.model_files.config import REPO_ID, UnsupportedArchitecture

# --- errors ----------------------------------------------------------------------------------------


class HubError(Exception):
    """A look-up failed; ``key`` and ``params`` let the conversation layer say why in the user's language."""

    default_key = "hub.error"

    def __init__(self, key: str | None = None, /, **params: Any) -> None:
        self.key = key or self.default_key
        self.params = params
        detail = ", ".join(f"{k}={v!r}" for k, v in params.items())
        super().__init__(f"{self.key} ({detail})" if detail else self.key)


class InvalidRepoRef(HubError):
    default_key = "hub.invalid_ref"


class RepoNotFound(HubError):
    default_key = "hub.not_found"


class RepoGated(HubError):
    default_key = "hub.gated"


class HubRateLimited(HubError):
    default_key = "hub.rate_limited"

    @property
    def retry_after_s(self) -> int | None:
        return self.params.get("retry_after_s")


class HubUnavailable(HubError):
    default_key = "hub.unavailable"


class HubBadData(HubError):
    default_key = "hub.bad_json"


class QuantNotFound(HubError):
    default_key = "hub.quant_not_found"


class HubUnsupportedArchitecture(HubError, UnsupportedArchitecture):
    default_key = "hub.unsupported_architecture"

    def __init__(self, key: str | None = None, /, **params: Any) -> None:
        HubError.__init__(self, key, **params)
        self.arch = str(params.get("arch", ""))


# --- repo references -------------------------------------------------------------------------------

_HOSTS = {"huggingface.co", "www.huggingface.co", "hf.co"}
_NOT_OWNERS = {"datasets", "spaces", "api", "docs", "models", "collections", "papers", "organizations", "settings"}
_URL_TAILS = {"tree", "blob", "resolve", "raw", "commits", "commit", "discussions", "files", ""}
_QUANT_REF = re.compile(r"^[A-Za-z0-9]{1,12}(?:[_-][A-Za-z0-9]{1,12}){0,5}$")
_QUANT_IN_NAME = re.compile(
    r"(?<![A-Za-z0-9])((?:UD-)?(?:I?Q[1-8](?:_[A-Z0-9]{1,4}){0,3}|TQ[12]_0|BF16|F16|F32|MXFP4(?:_MOE)?))(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})(?=\.gguf$)", re.IGNORECASE)


@dataclass(frozen=True)
class RepoRef:
    """A validated model repo id, with the GGUF quant the user named (``owner/repo:Q4_K_M``)."""

    repo_id: str
    quant: str | None = None

    def __str__(self) -> str:
        return f"{self.repo_id}:{self.quant}" if self.quant else self.repo_id


def _valid_name(part: str) -> bool:
    return (
        bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}", part))
        and ".." not in part
        and "--" not in part
        and not part.endswith((".", "-"))
        and not part.lower().endswith(".git")
    )


def parse_repo_ref(text: str) -> RepoRef:
    """Parse "owner/name", "owner/name:Q4_K_M" or a huggingface.co / hf.co URL; raise ``InvalidRepoRef``."""
    raw = text.strip()
    if raw.startswith("<") and raw.endswith(">"):  # Discord's "no embed" brackets
        raw = raw[1:-1]
    shown = text[:80]
    if not raw or len(raw) > 300 or not raw.isascii() or any(c.isspace() or not c.isprintable() for c in raw):
        raise InvalidRepoRef(text=shown)
    rest, is_url = raw, False
    scheme = re.match(r"(?i)^https?://", rest)
    if scheme:
        rest, is_url = rest[scheme.end() :], True
    host, sep, path = rest.partition("/")
    if host.lower() in _HOSTS and sep:
        rest, is_url = path, True
    elif is_url:
        raise InvalidRepoRef(text=shown)  # another host, a port, user-info, ...
    if is_url:
        rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    segments = rest.split("/")
    quant: str | None = None
    if len(segments) >= 2 and ":" in segments[1]:
        segments[1], quant = segments[1].split(":", 1)
    if len(segments) < 2 or any(c in s for s in segments for c in ":?#%\\@"):
        raise InvalidRepoRef(text=shown)
    owner, name, *tail = segments
    if tail and not (is_url and tail[0] in _URL_TAILS) and tail != [""]:
        raise InvalidRepoRef(text=shown)
    if owner.lower() in _NOT_OWNERS or not (_valid_name(owner) and _valid_name(name)):
        raise InvalidRepoRef(text=shown)
    if quant is None and tail and tail[-1].lower().endswith(".gguf"):
        quant = gguf_quant(tail[-1])
    if quant is not None:
        if not _QUANT_REF.fullmatch(quant):
            raise InvalidRepoRef(text=shown)
        quant = quant.upper()
    repo_id = f"{owner}/{name}"
    if not REPO_ID.fullmatch(repo_id):
        raise InvalidRepoRef(text=shown)
    return RepoRef(repo_id, quant)


def gguf_quant(filename: str) -> str | None:
    """The quant named in a GGUF file name ("Qwen3-14B-UD-Q4_K_XL-00001-of-00002.gguf" -> "UD-Q4_K_XL")."""
    base = _SPLIT.sub("", filename.rsplit("/", 1)[-1])
    found = _QUANT_IN_NAME.findall(base)
    return found[-1].upper() if found else None


@dataclass
class GgufGroup:
    quant: str
    files: list[str]
    size_bytes: int
    complete: bool


def group_gguf_files(siblings: Iterable[tuple[str, int | None]]) -> dict[str, GgufGroup]:
    """Quant -> its files and summed size; split files ("-00001-of-00003") are added up.

    Projector files (mmproj) are not model weights and are left out. When two different base
    names map to one quant (a repo holding two models), the first in name order is kept.
    """
    bases: dict[str, list[tuple[str, int | None, int]]] = {}
    for name, size in sorted(siblings):
        leaf = name.rsplit("/", 1)[-1]
        if not leaf.lower().endswith(".gguf") or leaf.lower().startswith("mmproj"):
            continue
        split = _SPLIT.search(leaf)
        base = _SPLIT.sub("", name)
        bases.setdefault(base, []).append((name, size, int(split.group(2)) if split else 1))
    groups: dict[str, GgufGroup] = {}
    for base, files in bases.items():
        folder = base.rsplit("/", 1)[0] if "/" in base else ""
        quant = gguf_quant(base) or (gguf_quant(folder) if folder else None)  # "Q8_0/model-00001-of-00002.gguf"
        if not quant or quant in groups:
            continue
        sizes = [s for _, s, _ in files]
        complete = all(isinstance(s, int) and s > 0 for s in sizes) and len(files) == files[0][2]
        groups[quant] = GgufGroup(quant, [n for n, _, _ in files], sum(s or 0 for s in sizes), complete)
    return groups
