"""``fitbot mcp --http`` end to end: the real process on 127.0.0.1 and a free port (once for the module), the
SDK's streamable HTTP client with the bearer token; refusals without it, with a wrong one and for 1 MB bodies;
per-client rate limits; the token never in the log; no start without a token."""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from bot.app.cli import main
from bot.app.settings import Settings
from fitbot_fakes.mcp_client import free_port, http_remote, http_server, server_env

TOKEN = "mcp-test-token-3f9a7c1e5b"
RATE = 15  # tool calls per client and minute (RATE_USER_PER_MINUTE), low enough to reach here


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data, port = tmp_path_factory.mktemp("mcp-http"), free_port()
    env = server_env(data / "data", FITBOT_MCP_TOKEN=TOKEN, RATE_USER_PER_MINUTE=str(RATE), FITBOT_LOG_LEVEL="DEBUG")
    log = data / "server.log"
    with http_server(env, port, log):
        yield f"http://127.0.0.1:{port}/mcp", log


def post(url: str, body: bytes, token: str | None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


INITIALIZE = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
).encode()  # fmt: skip


@pytest.mark.parametrize("token", [None, "", "wrong-token", TOKEN + "x"], ids=["none", "empty", "wrong", "longer"])
def test_without_the_token_every_request_is_refused_with_401(server, token):
    url, _ = server
    status, body = post(url, INITIALIZE, token)
    assert status == 401 and "Authorization: Bearer" in json.loads(body)["error_description"]


def test_with_the_token_the_sdk_client_lists_and_calls_the_tools(server, capsys):
    url, _ = server
    with http_remote(url, TOKEN) as remote:
        tools = remote.tools().tools
        result = remote.call("fit", {"model": "glm-4.5-air", "hardware": "rtx 4090", "ram_gb": 128})
        miss = remote.call("gpus_for_model", {"model": "qwen3-23b"})
    assert len(tools) == 10 and not result.is_error
    assert main(["estimate", "--model", "glm-4.5-air", "--gpu", "rtx 4090", "--ram", "128", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)["figures"]
    (subject,) = result.structured_content["subjects"]
    card = subject["figures"]
    assert {k: v for k, v in card.items() if k != "offers"} == {k: v for k, v in estimate.items() if k != "offers"}
    assert card["offers"] == estimate["offers"][: len(card["offers"])]  # the card shows the cheapest offers
    assert miss.is_error and miss.structured_content["suggestions"]


def declared(url: str, length: int, token: str | None) -> tuple[int, str]:
    """A POST that declares a ``length``-byte body and sends none: the answer must come from the headers alone."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest("POST", parts.path)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(length)}.items():
            conn.putheader(name, value)
        if token is not None:
            conn.putheader("Authorization", f"Bearer {token}")
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_a_one_megabyte_body_is_refused_before_it_is_read(server):
    url, _ = server
    assert declared(url, 1_000_000, TOKEN) == (413, "Request body too large")
    assert declared(url, 1_000_000, None)[0] == 401  # the token is checked first
    over = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "ask", "arguments": {"question": "x" * 70_000}}}).encode()  # fmt: skip
    assert post(url, over, TOKEN) == (413, "Request body too large")  # sent in full: refused once past 64 KiB


def test_each_client_is_rate_limited_with_a_slow_down_answer(server):
    """Two clients behind a reverse proxy on this host (X-Forwarded-For): one floods, the other is not slowed."""
    url, _ = server
    setup = {"model": "qwen3-8b", "hardware": "rtx 4090"}
    with http_remote(url, TOKEN, {"X-Forwarded-For": "10.0.0.7"}) as flooder:
        flood = [flooder.call("fit", setup) for _ in range(RATE + 2)]
    with http_remote(url, TOKEN, {"X-Forwarded-For": "10.0.0.8"}) as other:
        calm = other.call("fit", setup)
    assert [r.is_error for r in flood] == [False] * RATE + [True, True]
    assert flood[-1].structured_content["kind"] == "slow_down"
    assert re.search(r"please ask again in \d+ s", flood[-1].content[0].text)
    assert not calm.is_error


def test_a_reverse_proxy_passing_on_the_public_host_is_served(server):
    url, _ = server
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("POST", parts.path, INITIALIZE, {
            "Host": "fitbot.example.org", "X-Forwarded-For": "203.0.113.9", "Authorization": f"Bearer {TOKEN}",
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        })  # fmt: skip
        response = conn.getresponse()
        assert response.status == 200 and "fitbot" in response.read().decode()
    finally:
        conn.close()


def test_the_token_is_never_logged(server):
    url, log = server
    post(url, INITIALIZE, TOKEN)
    post(url, INITIALIZE, "wrong-token")
    text = log.read_text(errors="replace")
    assert text and TOKEN not in text and "wrong-token" not in text


def test_the_token_is_one_of_the_secrets_the_logs_redact():
    assert TOKEN in Settings(_env_file=None, fitbot_mcp_token=TOKEN).secrets()


def test_http_mode_refuses_to_start_without_a_token(capsys, monkeypatch):
    monkeypatch.delenv("FITBOT_MCP_TOKEN", raising=False)
    assert main(["mcp", "--http", "--port", str(free_port())]) == 2
    assert "FITBOT_MCP_TOKEN is not set" in capsys.readouterr().err
