"""Interop check: the Python `mcp` SDK as the client of a vmcp with the optimizer on. It must
see only find_tool and call_tool, find a tool by describing the task, and call it.

Usage: python_optimizer_client.py <gateway-url> <mode>   (mode: legacy | auto)
Prints one line per check and a closing "N passed, M failed"; exits non-zero on any failure."""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client

URL, MODE = sys.argv[1], sys.argv[2]
results: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    results.append((name, ok, detail))
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}", flush=True)


def text(result) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def main() -> None:
    async with Client(URL, mode=MODE) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        check("lists only the meta-tools", names == ["call_tool", "find_tool"], repr(names))
        r = await client.call_tool("find_tool", {"tool_description": "add two numbers"})
        found = [t["name"] for t in (r.structured_content or {}).get("tools") or []]
        check("find_tool ranks the adding tool first", found[:1] == ["booking_add"], repr(found))
        metrics = (r.structured_content or {}).get("token_metrics", {})
        check("find_tool reports token savings", metrics.get("savings_percent", 0) > 0, json.dumps(metrics))
        # The gateway runs the hybrid tier with the local model: a task sharing no word with the
        # tool's description is found by meaning.
        r = await client.call_tool("find_tool", {"tool_description": "compute the sum of 7 and 35"})
        found = [t["name"] for t in (r.structured_content or {}).get("tools") or []]
        check("find_tool finds by meaning (semantic tier)", found[:1] == ["booking_add"], repr(found))
        r = await client.call_tool("call_tool", {"tool_name": "booking_add", "parameters": {"a": 2, "b": 40}})
        check("call_tool runs the found tool", text(r) == "42", text(r))
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


anyio.run(main)
