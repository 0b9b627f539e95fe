"""The hub's blocking requests, run on ``catalog.hub.client``'s worker threads: model info and one file.

Each is one streamed request (``hub_http.stream_get``) with a byte cap and a deadline, so a drip or
a huge answer cannot hold its thread; HTTP errors and transport failures become ``HubError``s with
locale keys (the table in ``catalog.hub.client``).
"""

from __future__ import annotations

from typing import Any

from catalog.hub.http import HubDeadline, stream_get
from catalog.hub.refs import HubBadData, HubError, HubRateLimited, HubUnavailable, RepoGated, RepoNotFound

MIB = 1 << 20
MAX_INFO_BYTES = 16 * MIB  # a model-info answer larger than this is refused (~200k files listed)


def status_error(status: int, headers: Any, repo_id: str) -> HubError:
    """Map an HTTP error status (and the hub's X-Error-Code) to our error tree."""
    code = headers.get("X-Error-Code") if headers is not None else None
    message = headers.get("X-Error-Message") if headers is not None else None
    if code == "GatedRepo" or status == 403:
        return RepoGated("hub.gated", repo=repo_id)
    if status == 401 and message == "Invalid credentials in Authorization header":
        return RepoGated("hub.bad_token", repo=repo_id)
    if status == 401 and code == "RepoNotFound":
        return RepoNotFound("hub.not_found_or_private", repo=repo_id)
    if status == 401:
        return RepoGated("hub.private", repo=repo_id)
    if status == 404 and code in ("EntryNotFound", "RevisionNotFound"):
        return HubBadData("hub.missing_file", repo=repo_id)
    if status == 404:
        return RepoNotFound(repo=repo_id)
    if status == 429:
        retry = str(headers.get("Retry-After") or "").strip() if headers is not None else ""
        return HubRateLimited(repo=repo_id, retry_after_s=int(retry) if retry.isdigit() else None)
    if status >= 500:
        return HubUnavailable("hub.unavailable", repo=repo_id, status=status)
    return HubError("hub.error", repo=repo_id, status=status)


def map_exception(exc: BaseException, repo_id: str) -> HubError | None:
    """Our error for a library/transport exception, or None when it is not one we know."""
    try:
        import httpx2 as httpx  # huggingface_hub 2.x
    except ImportError:  # pragma: no cover - huggingface_hub 1.x used httpx
        import httpx  # type: ignore[no-redef]
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return status_error(exc.response.status_code, exc.response.headers, repo_id)
    if isinstance(exc, OfflineModeIsEnabled):
        return HubUnavailable("hub.offline", repo=repo_id)
    if isinstance(exc, httpx.TimeoutException):
        return HubUnavailable("hub.timeout", repo=repo_id)
    if isinstance(exc, httpx.TransportError | httpx.InvalidURL | httpx.TooManyRedirects | httpx.RequestError):
        return HubUnavailable("hub.unreachable", repo=repo_id)  # incl. a redirect loop
    return None


def hub_headers(token: str | bool) -> dict[str, str]:
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # public, not re-exported

    return dict(build_hf_headers(token=token, library_name="fitbot", library_version="0.1"))


def model_info(repo_id: str, endpoint: str, token: str | bool, deadline: float) -> Any:
    """``HfApi.model_info(files_metadata=True)``'s request, read by ``stream_get`` (a drip cannot hold it)."""
    from huggingface_hub.hf_api import ModelInfo

    try:
        raw = stream_get(
            f"{endpoint}/api/models/{repo_id}",
            params={"blobs": "true"},  # file sizes, as files_metadata=True asks
            headers=hub_headers(token),
            deadline=deadline,
            cap=MAX_INFO_BYTES,
            on_status=lambda status, headers: status_error(status, headers, repo_id),
            on_too_large=lambda size: HubBadData(
                "hub.too_large", repo=repo_id, file=f"api/models/{repo_id}", size=size, limit=MAX_INFO_BYTES
            ),
        )
    except (HubError, HubDeadline):
        raise
    except Exception as exc:
        mapped = map_exception(exc, repo_id)
        if mapped is not None:
            raise mapped from None
        raise
    try:
        import json

        return ModelInfo(**json.loads(raw))  # type: ignore[no-untyped-call]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):  # bad JSON or shape
        raise HubBadData("hub.bad_json", repo=repo_id, reason="model info is not valid JSON") from None


def get_file(
    endpoint: str,
    token: str | bool,
    repo_id: str,
    sha: str,
    filename: str,
    listed_size: int | None,
    cap: int,
    ranged: bool,
    deadline: float,
) -> bytes:
    """Stream one file (or its first ``cap`` bytes when ``ranged``), never more than ``cap`` bytes."""
    if not ranged and listed_size is not None and listed_size > cap:
        raise HubBadData("hub.too_large", repo=repo_id, file=filename, size=listed_size, limit=cap)
    from huggingface_hub import hf_hub_url

    headers = hub_headers(token)
    if ranged:
        headers["Range"] = f"bytes=0-{cap - 1}"
        headers["Accept-Encoding"] = "identity"
    try:
        return stream_get(
            hf_hub_url(repo_id, filename, revision=sha, endpoint=endpoint),
            headers=headers,
            deadline=deadline,
            cap=cap,
            truncate=ranged,
            on_status=lambda status, headers: status_error(status, headers, repo_id),
            on_too_large=lambda size: HubBadData("hub.too_large", repo=repo_id, file=filename, size=size, limit=cap),
        )
    except (HubError, HubDeadline):
        raise
    except Exception as exc:
        mapped = map_exception(exc, repo_id)
        if mapped is None:
            raise
        raise mapped from None
