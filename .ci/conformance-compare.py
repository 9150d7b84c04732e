#!/usr/bin/env python3
"""Compares two runs of the official MCP conformance suite saved with `-o DIR`: one directly against
a server, one through vmcp in front of it. Every check that succeeds directly must succeed through
the gateway, except the listed ones (each with its reason; docs/spec-differences.md repeats them).

    conformance-compare.py DIRECT_DIR GATEWAY_DIR

Exits 1, naming each check, when one passes directly but not through the gateway.
"""

import json
import pathlib
import re
import sys
from collections import Counter

# (scenario, check id) -> why it cannot succeed through the gateway. None of these is a MUST.
# Empty: the SSE checks once listed here (server-sse-polling's priming, retry and disconnect-resume,
# server-sse-multiple-streams' SSE half) pass through vmcp since its streams are resumable.
EXCEPTIONS: dict = {}


# A check that passes directly only because the server answered "tool not found" as a tool result
# (the TypeScript SDK does; the suite's tools-call-* checks accept any content) is not a capability
# the gateway can lose: through vmcp an unknown tool gets the spec's protocol error, -32602
# (2025-11-25 server/tools, "Error Handling": unknown tools are protocol errors).
VACUOUS = re.compile(r"^(MCP error -32602: Tool \S+ not found|Unknown tool: \S+)$")

# A check the suite itself reports untestable through vmcp because the server does not list the
# tool it drives ("server does not list the diagnostic tool 'X' in tools/list"), while directly the
# same check passed on the server's "Unknown tool" result (the Python SDK answers an unknown tool
# that way; its details do not show it). Set aside only when the direct run's own tools/list lacks
# X too: a tool the server lists and vmcp does not would be a real loss.
UNLISTED = re.compile(r"does not list the diagnostic tool '([^']+)'")


def vacuous(details) -> bool:
    """Whether a direct SUCCESS carried only the server's "tool not found" as an isError result."""
    result = (details or {}).get("result") or {}
    texts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict)]
    return result.get("isError") is True and len(texts) == 1 and bool(VACUOUS.match(texts[0]))


def listed_tools(root: pathlib.Path):
    """The tool names the tools-list check saw in this run (None when it did not record them)."""
    for checks in root.glob("*-tools-list-*/checks.json"):
        for c in json.loads(checks.read_text()):
            tools = (c.get("details") or {}).get("tools")
            if c["id"] == "tools-list" and isinstance(tools, list):
                return set(tools)
    return None


def load(root: pathlib.Path, unlisted_ok=None) -> dict:
    """(scenario, id, name, occurrence) -> status, for every check of every scenario; a vacuous
    SUCCESS (see VACUOUS) reads "VACUOUS"; with `unlisted_ok` (the server's own tool names), a
    check untestable for want of a tool outside them reads "UNLISTED" (see UNLISTED)."""
    out = {}
    for checks in sorted(root.glob("*/checks.json")):
        # Directories are named <mode>-<scenario>-<timestamp>.
        scenario = re.sub(r"^(server|client)-", "", checks.parent.name)
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", scenario)
        seen = Counter()
        listed = json.loads(checks.read_text())
        # A scenario driven by one tool call (server-sse-polling calls test_reconnection and
        # checks the stream that answers it) proves nothing when the answer was "tool not found".
        hollow = any(vacuous((c.get("details") or {}).get("body")) for c in listed)
        for c in listed:
            key = (c["id"], c.get("name", ""))
            seen[key] += 1
            status = c["status"]
            if status == "SUCCESS" and (hollow or vacuous(c.get("details"))):
                status = "VACUOUS"
            missing = UNLISTED.search(c.get("errorMessage") or "")
            if (status != "SUCCESS" and unlisted_ok is not None and missing
                    and (c.get("details") or {}).get("untestable") is True
                    and missing.group(1) not in unlisted_ok):
                status = "UNLISTED"
            out[(scenario, c["id"], c.get("name", ""), seen[key])] = status
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    direct = load(pathlib.Path(sys.argv[1]))
    gateway = load(pathlib.Path(sys.argv[2]), listed_tools(pathlib.Path(sys.argv[1])))
    if not direct:
        print(f"no checks found in {sys.argv[1]}", file=sys.stderr)
        return 2
    lost, excused, unlisted = [], [], []
    for key, status in sorted(direct.items()):
        if status != "SUCCESS" or gateway.get(key) == "SUCCESS":
            continue
        if gateway.get(key) == "UNLISTED":
            unlisted.append(key)
            continue
        scenario, check, name, _ = key
        reason = EXCEPTIONS.get((scenario, check))
        row = f"{scenario} / {check} ({name}): direct SUCCESS, through vmcp {gateway.get(key, 'absent')}"
        (excused if reason else lost).append((row, reason))
    passed = sum(1 for s in direct.values() if s == "SUCCESS")
    hollow = sorted(k for k, s in direct.items() if s == "VACUOUS") + unlisted
    print(f"== {passed} checks pass directly; {passed - len(lost) - len(excused) - len(unlisted)} pass through vmcp too, "
          f"{len(excused)} listed exceptions, {len(lost)} lost; {len(hollow)} pass directly only on the "
          f"server's 'tool not found' answer (not counted)")
    for scenario, check, name, _ in hollow:
        print(f"   not counted: {scenario} / {check} ({name}): the server lacks the tool")
    for row, reason in excused:
        print(f"   exception: {row}\n              {reason}")
    for row, _ in lost:
        print(f"   LOST: {row}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
