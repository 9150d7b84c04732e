"""Interop check: the Python `mcp` SDK as the client, through the vmcp gateway, calling tools on
two backends (the repository's fixture over HTTP, and a Python SDK server over stdio that elicits),
and a composite tool whose elicitation step the client answers on either revision.

Usage: python_client.py <gateway-url> <mode>   (mode: legacy | auto)
Prints one line per check and a closing "N passed, M failed"; exits non-zero on any failure."""

import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

URL, MODE = sys.argv[1], sys.argv[2]
results: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    results.append((name, ok, detail))
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}", flush=True)


def text(result) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def on_elicit(context, params):
    # The user says yes, and gives a name.
    return types.ElicitResult(action="accept", content={"confirm": True, "name": "Ada"})


async def main() -> None:
    async with Client(URL, mode=MODE, elicitation_callback=on_elicit) as client:
        info = client.server_info
        check("server names itself vmcp", info is not None and info.name == "vmcp", repr(info))
        check("negotiated a revision", bool(client.protocol_version), client.protocol_version)
        tools = {t.name for t in (await client.list_tools()).tools}
        for name in ("weather_whoami", "weather_echo", "booking_book_table", "booking_add"):
            check(f"lists {name}", name in tools)
        r = await client.call_tool("weather_whoami", {})
        check("calls the HTTP backend", text(r) == "weather", text(r))
        r = await client.call_tool("booking_add", {"a": 2, "b": 40})
        check("calls the stdio Python backend", text(r) == "42", text(r))
        # A composite tool whose first step asks the user: mid-call on a 2025-11-25 session,
        # input_required and a retry on 2026-07-28; either way the SDK's callback answers.
        r = await client.call_tool("greet_after_asking", {})
        check(
            "a composite tool's elicitation step is answered by the client",
            r.structured_content == {"greeting": "hello Ada"},
            repr(r.structured_content),
        )
        if MODE == "legacy":
            r = await client.call_tool("booking_book_table", {"party_size": 4})
            check("elicitation round-trips through the gateway", text(r) == "booked 4 for Ada", text(r))
        else:
            # Modern-first: the client speaks 2026-07-28 to the gateway, and the stdio backend
            # speaks 2025-11-25 and elicits mid-call; the gateway's documented answer is an explicit
            # error (the client declared elicitation, so -32603), never a hang.
            check("Modern-first client negotiated 2026-07-28", client.protocol_version == "2026-07-28", client.protocol_version)
            try:
                r = await client.call_tool("booking_book_table", {"party_size": 4})
                check("Legacy backend eliciting for a Modern client is refused", False, f"got a result: {text(r)}")
            except MCPError as e:
                check(
                    "Legacy backend eliciting for a Modern client is refused",
                    e.code == -32603 and "multi-round" in str(e),
                    f"{e.code}: {e}",
                )
        r = await client.call_tool("weather_echo", {"text": "héllo"})
        check("non-ASCII passes unchanged", text(r) == "héllo", text(r))


anyio.run(main)
passed = sum(1 for _, ok, _ in results if ok)
failed = len(results) - passed
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed or not results else 0)
