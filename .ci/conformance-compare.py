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
EXCEPTIONS = {
    ("server-sse-polling", "server-sse-priming-event"):
        "vmcp answers a call with plain JSON when the backend relays nothing mid-call; SSE priming "
        "and polling (SEP-1699) are a server MAY, and the suite marks them not applicable",
    ("server-sse-polling", "server-sse-retry-field"): "same: a JSON answer has no SSE retry field",
    ("server-sse-polling", "server-sse-disconnect-resume"): "same: nothing to resume in a JSON answer",
    ("server-sse-multiple-streams", "server-sse-streams-functional"):
        "the optional SSE half of the check: vmcp answers JSON when nothing is relayed",
}


def load(root: pathlib.Path) -> dict:
    """(scenario, id, name, occurrence) -> status, for every check of every scenario."""
    out = {}
    for checks in sorted(root.glob("*/checks.json")):
        # Directories are named <mode>-<scenario>-<timestamp>.
        scenario = re.sub(r"^(server|client)-", "", checks.parent.name)
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", scenario)
        seen = Counter()
        for c in json.loads(checks.read_text()):
            key = (c["id"], c.get("name", ""))
            seen[key] += 1
            out[(scenario, c["id"], c.get("name", ""), seen[key])] = c["status"]
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    direct = load(pathlib.Path(sys.argv[1]))
    gateway = load(pathlib.Path(sys.argv[2]))
    if not direct:
        print(f"no checks found in {sys.argv[1]}", file=sys.stderr)
        return 2
    lost, excused = [], []
    for key, status in sorted(direct.items()):
        if status != "SUCCESS" or gateway.get(key) == "SUCCESS":
            continue
        scenario, check, name, _ = key
        reason = EXCEPTIONS.get((scenario, check))
        row = f"{scenario} / {check} ({name}): direct SUCCESS, through vmcp {gateway.get(key, 'absent')}"
        (excused if reason else lost).append((row, reason))
    passed = sum(1 for s in direct.values() if s == "SUCCESS")
    print(f"== {passed} checks pass directly; {passed - len(lost) - len(excused)} pass through vmcp too, "
          f"{len(excused)} listed exceptions, {len(lost)} lost")
    for row, reason in excused:
        print(f"   exception: {row}\n              {reason}")
    for row, _ in lost:
        print(f"   LOST: {row}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
