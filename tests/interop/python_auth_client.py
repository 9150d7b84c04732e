"""Interop check: the Python `mcp` SDK client with a bearer token, through an authenticating vmcp.

Usage: python_auth_client.py <gateway-url> <mode> <token> <tool-to-see> <tool-to-call> <expected-text>
(mode: legacy | auto). Lists tools (the caller's own tool must be there), calls one, and checks
that the same call without the token is refused. Prints one line per check and exits non-zero on
any failure."""

import sys

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL, MODE, TOKEN, SEE, CALL, EXPECT = sys.argv[1:7]
failures = 0


def check(name: str, ok: bool, detail: str = "") -> None:
    global failures
    failures += 0 if ok else 1
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}", flush=True)


def describe(e: BaseException) -> str:
    """The exception and everything it wraps, as text."""
    parts = [repr(e)]
    for inner in getattr(e, "exceptions", ()):
        parts.append(describe(inner))
    if e.__cause__ is not None:
        parts.append(describe(e.__cause__))
    return " ".join(parts)


async def main() -> None:
    auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
    async with Client(streamable_http_client(URL, http_client=auth), mode=MODE) as client:
        check("negotiated", bool(client.protocol_version), client.protocol_version)
        tools = {t.name for t in (await client.list_tools()).tools}
        check(f"sees {SEE}", SEE in tools, "")
        r = await client.call_tool(CALL, {})
        text = "".join(c.text for c in r.content if isinstance(c, types.TextContent))
        check(f"calls {CALL}", text == EXPECT, text)
    try:
        async with Client(URL, mode=MODE) as client:
            await client.list_tools()
        check("refused without a token", False, "connected")
    except Exception as e:  # the SDK surfaces the 401 as an error response, in a task group
        text = describe(e)
        check("the SDK client is refused without a token", "error response" in text or "401" in text, text[:120])
    # ... because the gateway answered 401 with its challenge (the SDK hides the status).
    async with httpx2.AsyncClient() as bare:
        r = await bare.post(URL, json={"jsonrpc": "2.0", "id": 1, "method": "initialize"},
                            headers={"Accept": "application/json, text/event-stream"})
        check("401 with a Bearer challenge", r.status_code == 401 and r.headers.get("www-authenticate", "").startswith("Bearer "), str(r.status_code))


anyio.run(main)
sys.exit(1 if failures else 0)
