#!/usr/bin/env python3
"""Record the tool-search evaluation corpus from real MCP servers.

Each server in SERVERS is started over stdio with the Python `mcp` SDK client,
initialized, and asked for `tools/list` (following `nextCursor` until the last
page). The `tools` arrays exactly as the server sent them on the wire (raw
JSON-RPC results, not re-serialized SDK models) are concatenated and written to
`corpus/<id>.json` with `json.dump(..., indent=1, sort_keys=True)`. The one
exception is desktop-commander, whose host-detected text is rewritten to its
plain-Linux form (see scrub_desktopcommander).
`corpus/SOURCES.md` is regenerated from the same run (package versions are read
from the installed packages, not from the registry).

No server needs network access or real credentials to list its tools: the
ones that insist on a token get a dummy one, postgres gets a loopback address
it never connects to during tools/list, and redis (which connects before it
serves) gets a throwaway `redis-server` on loopback that this script starts
(Debian package `redis-server`; only needed for that one server).

Install the servers outside the repository first (from the repository root):

    EVAL=$PWD/crates/bench/eval
    # one npm prefix per server, as `npx <pkg>` would resolve it: a shared
    # prefix hoists one zod for all and changes some servers' schemas
    python3 $EVAL/record.py --npm-packages | while read id specs; do
        mkdir -p /tmp/evalnpm/$id && (cd /tmp/evalnpm/$id && npm init -y >/dev/null &&
            PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
            npm install --no-audit --no-fund $specs)
    done
    # one venv per PyPI server (their pins conflict), named by server id
    python3 $EVAL/record.py --pypi-packages | while read id spec; do
        python3 -m venv /tmp/evalvenvs/$id && /tmp/evalvenvs/$id/bin/pip install "$spec"
    done
    apt-get install -y redis-server    # only for the redis server's listing

Then, from the repository root, record with any interpreter that has the
`mcp` SDK (written against the 2.x SDK in the project's CI venv; 1.x works too):

    .ci/.venv/bin/python crates/bench/eval/record.py
    .ci/.venv/bin/python crates/bench/eval/record.py --only git,time
    .ci/.venv/bin/python crates/bench/eval/record.py --check    # compare, write nothing

Environment:
    EVAL_NPM          folder of per-server npm prefixes, <id>/node_modules/... (default /tmp/evalnpm)
    EVAL_VENVS        folder of per-server venvs, <id>/bin/... (default /tmp/evalvenvs)
    EVAL_TIMEOUT      seconds allowed per server (default 90)

`--validate` starts no server: it checks that queries.json and slice.json are
well formed and that every expected "<server>/<tool>" is in the corpus.
`--make-slice` rewrites slice.json from queries.json (see make_slice).

`--npm-packages` and `--pypi-packages` print "<id> <spec> [<extra spec>...]"
lines (the exact versions the committed corpus was recorded from) and exit. Transitive
dependencies are not pinned; SOURCES.md names the MCP SDK (and zod) each
server resolved, the usual cause when a re-recording differs. `--check` starts the servers but writes nothing: each
recorded file is compared with the live listing.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
NPM = Path(os.environ.get("EVAL_NPM", "/tmp/evalnpm"))
VENVS = Path(os.environ.get("EVAL_VENVS", "/tmp/evalvenvs"))
TIMEOUT = float(os.environ.get("EVAL_TIMEOUT", "90"))

# Placeholders are expanded per server: {npm} -> its npm prefix's node_modules/.bin
# ($EVAL_NPM/<id>/node_modules/.bin),
# {venv} -> the server's own venv's bin/ ($EVAL_VENVS/<id>/bin), {scratch} -> an empty temporary directory that is
# also the server's cwd and HOME, {port} -> a free loopback port for "service".
SERVERS: list[dict[str, Any]] = [
    # --- npm -----------------------------------------------------------------
    {"id": "filesystem", "registry": "npm", "package": "@modelcontextprotocol/server-filesystem", "version": "2026.8.31",
     "command": "{npm}/mcp-server-filesystem", "args": ["{scratch}"], "env": {}},
    {"id": "memory", "registry": "npm", "package": "@modelcontextprotocol/server-memory", "version": "2026.8.31",
     "command": "{npm}/mcp-server-memory", "args": [], "env": {"MEMORY_FILE_PATH": "{scratch}/memory.jsonl"}},
    {"id": "everything", "registry": "npm", "package": "@modelcontextprotocol/server-everything", "version": "2026.8.31",
     "command": "{npm}/mcp-server-everything", "args": ["stdio"], "env": {}},
    {"id": "sequentialthinking", "registry": "npm", "package": "@modelcontextprotocol/server-sequential-thinking",
     "version": "2026.8.31", "command": "{npm}/mcp-server-sequential-thinking", "args": [], "env": {}},
    {"id": "github", "registry": "npm", "package": "@modelcontextprotocol/server-github", "version": "2025.4.8",
     "command": "{npm}/mcp-server-github", "args": [], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "dummy"}},
    {"id": "gitlab", "registry": "npm", "package": "@modelcontextprotocol/server-gitlab", "version": "2025.4.25",
     "command": "{npm}/mcp-server-gitlab", "args": [],
     # A fresh install resolves zod 4 beside zod-to-json-schema 3, and then
     # every inputSchema is just {"$schema": ...}: pin the zod it shipped with.
     "npm_extra": ["zod@3.25.76"],
     "note": "installed with `zod@3.25.76` beside it: with the zod 4 that a fresh install resolves today, "
             "every inputSchema comes out as `{\"$schema\": ...}` alone (no type, no properties) and the "
             "SDK client rejects the listing.",
     "env": {"GITLAB_PERSONAL_ACCESS_TOKEN": "dummy", "GITLAB_API_URL": "http://127.0.0.1:9/api/v4"}},
    {"id": "slack", "registry": "npm", "package": "@modelcontextprotocol/server-slack", "version": "2025.4.25",
     "command": "{npm}/mcp-server-slack", "args": [], "env": {"SLACK_BOT_TOKEN": "xoxb-dummy", "SLACK_TEAM_ID": "T00000000"}},
    {"id": "postgres", "registry": "npm", "package": "@modelcontextprotocol/server-postgres", "version": "0.6.2",
     "command": "{npm}/mcp-server-postgres", "args": ["postgresql://127.0.0.1:9/eval"], "env": {}},
    {"id": "bravesearch", "registry": "npm", "package": "@modelcontextprotocol/server-brave-search", "version": "0.6.2",
     "command": "{npm}/mcp-server-brave-search", "args": [], "env": {"BRAVE_API_KEY": "dummy"}},
    {"id": "googlemaps", "registry": "npm", "package": "@modelcontextprotocol/server-google-maps", "version": "0.6.2",
     "command": "{npm}/mcp-server-google-maps", "args": [], "env": {"GOOGLE_MAPS_API_KEY": "dummy"}},
    # server-redis connects before it serves, so a throwaway redis-server
    # (Debian's `redis-server` package) is started on loopback for it.
    {"id": "redis", "registry": "npm", "package": "@modelcontextprotocol/server-redis", "version": "2025.4.25",
     "command": "{npm}/mcp-server-redis", "args": ["redis://127.0.0.1:{port}"], "env": {},
     "note": "needs a live Redis before it serves; record.py starts a throwaway `redis-server` "
             "(Debian package) on loopback `{port}` for the listing.",
     "service": ["redis-server", "--bind", "127.0.0.1", "--port", "{port}", "--save", "", "--appendonly", "no",
                 "--dir", "{scratch}"]},
    {"id": "puppeteer", "registry": "npm", "package": "@modelcontextprotocol/server-puppeteer", "version": "2025.5.12",
     "command": "{npm}/mcp-server-puppeteer", "args": [], "env": {}},
    {"id": "playwright", "registry": "npm", "package": "@playwright/mcp", "version": "0.0.83",
     "command": "{npm}/playwright-mcp", "args": ["--headless", "--isolated"], "env": {}},
    {"id": "notion", "registry": "npm", "package": "@notionhq/notion-mcp-server", "version": "2.5.2",
     "command": "{npm}/notion-mcp-server", "args": [], "env": {"NOTION_TOKEN": "ntn_dummy"}},
    {"id": "kubernetes", "registry": "npm", "package": "mcp-server-kubernetes", "version": "4.1.7",
     "command": "{npm}/mcp-server-kubernetes", "args": [], "env": {}},
    {"id": "desktopcommander", "registry": "npm", "package": "@wonderwhy-er/desktop-commander", "version": "0.2.52",
     "command": "{npm}/desktop-commander", "args": [], "env": {},
     "scrub": "scrub_desktopcommander",
     "note": "its descriptions embed what it detects about the host (container type, hostname, mounted "
             "folders); record.py rewrites that text to what the server prints on a plain Linux host "
             "(`scrub_desktopcommander`), everything else is verbatim."},
    {"id": "firecrawl", "registry": "npm", "package": "firecrawl-mcp", "version": "3.22.2",
     "command": "{npm}/firecrawl-mcp", "args": [], "env": {"FIRECRAWL_API_KEY": "fc-dummy"}},
    {"id": "context7", "registry": "npm", "package": "@upstash/context7-mcp", "version": "4.1.1",
     "command": "{npm}/context7-mcp", "args": [], "env": {}},
    {"id": "supabase", "registry": "npm", "package": "@supabase/mcp-server-supabase", "version": "0.13.0",
     "command": "{npm}/mcp-server-supabase",
     "note": "all feature groups except `docs`: listing the docs tool downloads a GraphQL schema "
             "from supabase.com, which is unreachable offline.",
     "args": ["--access-token", "sbp_dummy",
              "--features", "account,database,debugging,development,functions,branching,storage"], "env": {}},
    # --- PyPI ----------------------------------------------------------------
    {"id": "git", "registry": "PyPI", "package": "mcp-server-git", "version": "2026.10.19",
     "command": "{venv}/mcp-server-git", "args": [], "env": {}},
    {"id": "fetch", "registry": "PyPI", "package": "mcp-server-fetch", "version": "2026.10.24",
     "command": "{venv}/mcp-server-fetch", "args": [], "env": {}},
    {"id": "time", "registry": "PyPI", "package": "mcp-server-time", "version": "2026.10.19",
     "command": "{venv}/mcp-server-time", "args": ["--local-timezone", "UTC"], "env": {}},
    {"id": "atlassian", "registry": "PyPI", "package": "mcp-atlassian", "version": "0.23.1",
     "command": "{venv}/mcp-atlassian", "args": [],
     "env": {"JIRA_URL": "https://example.atlassian.net", "JIRA_USERNAME": "eval@example.com", "JIRA_API_TOKEN": "dummy",
             "CONFLUENCE_URL": "https://example.atlassian.net/wiki", "CONFLUENCE_USERNAME": "eval@example.com",
             "CONFLUENCE_API_TOKEN": "dummy"}},
]

# Environment every server gets (on top of the SDK's minimal default env).
# PYTHONHASHSEED pins set iteration order: mcp-atlassian builds a schema
# default by joining a set, which otherwise changes from run to run.
COMMON_ENV = {"DO_NOT_TRACK": "1", "NO_COLOR": "1", "PUPPETEER_SKIP_DOWNLOAD": "1", "PYTHONHASHSEED": "0"}


def expand(value: str, scratch: str, server_id: str, port: int = 0) -> str:
    return value.format(npm=NPM / server_id / "node_modules" / ".bin", venv=VENVS / server_id / "bin",
                        scratch=scratch, port=port)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_service(argv: list[str]) -> subprocess.Popen[bytes]:
    """Start a helper process listening on loopback; wait until it accepts."""
    port = int(argv[argv.index("--port") + 1])
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError(f"{argv[0]} did not start on port {port}")


def installed_version(server: dict[str, Any]) -> str | None:
    """The version of the server's package installed under EVAL_NPM / EVAL_VENVS, if found."""
    return dependency_version(server, server["package"])


def dependency_version(server: dict[str, Any], package: str) -> str | None:
    """The installed version of `package` as the server resolves it, if found."""
    if server["registry"] == "npm":
        modules = NPM / server["id"] / "node_modules"
        for pj in (modules / server["package"] / "node_modules" / package / "package.json",
                   modules / package / "package.json"):
            if pj.is_file():
                return json.loads(pj.read_text())["version"]
        return None
    norm = package.lower().replace("-", "_").replace(".", "_")
    for meta in (VENVS / server["id"]).glob("lib/python*/site-packages/*.dist-info/METADATA"):
        name = meta.parent.name.split("-", 1)[0].lower().replace("-", "_").replace(".", "_")
        if name == norm:
            for line in meta.read_text(errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    return None


async def list_tools(server: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Start one server, return (raw tools, raw serverInfo)."""
    import anyio

    try:
        import mcp_types as types  # mcp 2.x
    except ImportError:  # mcp 1.x
        from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    pages: list[dict[str, Any]] = []
    init: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix=f"eval-{server['id']}-") as scratch:
        port = free_port() if "service" in server else 0
        sid = server["id"]
        env = {**COMMON_ENV, "HOME": scratch}
        env.update({k: expand(v, scratch, sid, port) for k, v in server["env"].items()})
        params = StdioServerParameters(
            command=expand(server["command"], scratch, sid, port),
            args=[expand(a, scratch, sid, port) for a in server["args"]],
            env=env,
            cwd=scratch,
        )
        service = start_service([expand(a, scratch, sid, port) for a in server["service"]]) if port else None
        errlog = open(Path(scratch) / "stderr.log", "w+")
        try:
            with anyio.fail_after(TIMEOUT):
                async with stdio_client(params, errlog=errlog) as (raw_read, write):
                    # Tee the server's messages so the raw JSON results are kept.
                    send, read = anyio.create_memory_object_stream(0)

                    async def tee() -> None:
                        async with send:
                            async for item in raw_read:
                                msg = getattr(getattr(item, "message", None), "root", None)
                                msg = msg if msg is not None else getattr(item, "message", None)
                                result = getattr(msg, "result", None)
                                if isinstance(result, dict):
                                    if isinstance(result.get("tools"), list):
                                        pages.append(result)
                                    elif "serverInfo" in result:
                                        init.update(result)
                                await send.send(item)

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(tee)
                        async with ClientSession(read, write) as session:
                            await session.initialize()
                            cursor = None
                            while True:
                                p = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                                await session.list_tools(params=p)
                                cursor = pages[-1].get("nextCursor") if pages else None
                                if not cursor:
                                    break
                        tg.cancel_scope.cancel()
        except BaseException:
            errlog.seek(0)
            tail = errlog.read()[-2000:]
            if tail:
                print(f"--- {server['id']} stderr (tail) ---\n{tail}", file=sys.stderr)
            raise
        finally:
            errlog.close()
            if service is not None:
                service.terminate()
                service.wait(10)
    tools = [t for page in pages for t in page["tools"]]
    if server.get("scrub"):
        tools = globals()[server["scrub"]](tools)
    return tools, init.get("serverInfo", {})


def scrub_desktopcommander(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rewrite desktop-commander's host-detected text to its plain-Linux form.

    desktop-commander builds parts of its descriptions from the machine it runs
    on: inside a container it names the container, its hostname and the folders
    mounted into it. That text describes the recording machine, not the tool, and
    differs from machine to machine, so it is rewritten to exactly what the
    server prints on a Linux host that is not a container (see its
    dist/utils/system-info.js: getOSSpecificGuidance, getPathGuidance).
    """
    import re

    out = []
    for tool in tools:
        tool = dict(tool)
        d = tool.get("description")
        if isinstance(d, str):
            d = re.sub(r"Running on (\w+) \([^)]*\)\.", r"Running on \1.", d)
            d = re.sub(r"\n\n🐳 [A-Z -]+ DETECTED:\n.*?\nContainer: [^\n]*", "", d, flags=re.S)
            d = re.sub(r" \n\n🐳 [A-Z]+: Prefer paths within mounted directories: [^\n]*\n"
                       r"When users ask about file locations, check these mounted paths first\.", "", d)
            tool["description"] = d
        out.append(tool)
    return out


def dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_sources(rows: list[tuple[dict[str, Any], str, int]]) -> None:
    lines = [
        "# Sources of the tool-search corpus",
        "",
        "Each `<id>.json` is the `tools` array that the server returned from `tools/list`",
        "(all pages), recorded over stdio by `../record.py`. Placeholders in the command:",
        "`{npm}` = `$EVAL_NPM/<id>/node_modules/.bin`, `{venv}` = `$EVAL_VENVS/<id>/bin`,",
        "`{scratch}` = an empty temporary directory (also the server's cwd and HOME),",
        "`{port}` = a free loopback port.",
        "Dummy credentials only: listing tools needs no network and no real account.",
        "",
        "The `sdk` column is the resolved MCP SDK (and zod, for npm) the server ran with;",
        "those are not pinned by the package and are the usual cause of a drifting re-recording.",
        "",
        "| id | package | version | registry | command | env | sdk | tools |",
        "| --- | --- | --- | --- | --- | --- | --- | ---: |",
    ]
    total = 0
    for server, version, count in rows:
        cmd = " ".join([server["command"], *server["args"]])
        env = " ".join(f"`{k}={v}`" for k, v in server["env"].items()) or "-"
        deps = (("@modelcontextprotocol/sdk", "@modelcontextprotocol/server", "playwright-core", "zod")
                if server["registry"] == "npm" else ("mcp", "fastmcp"))
        sdk = ", ".join(f"{d} {v}" for d in deps if (v := dependency_version(server, d))) or "-"
        lines.append(
            f"| {server['id']} | `{server['package']}` | {version} | {server['registry']} | `{cmd}` | {env} "
            f"| {sdk} | {count} |"
        )
        total += count
    lines += ["", f"**Total: {len(rows)} servers, {total} tools.**", ""]
    notes = [(server["id"], server["note"]) for server, _, _ in rows if server.get("note")]
    if notes:
        lines += ["Notes:", ""] + [f"- {sid}: {note}" for sid, note in notes] + [""]
    lines += [
        "Every server ran with `" + " ".join(f"{k}={v}" for k, v in COMMON_ENV.items()) + "` added to its env",
        "(PYTHONHASHSEED keeps set-derived schema defaults stable from run to run).",
        "",
    ]
    (CORPUS / "SOURCES.md").write_text("\n".join(lines))


SLICE_SIZE = 40


def corpus_tools() -> set[str]:
    names = set()
    for f in sorted(CORPUS.glob("*.json")):
        names |= {f"{f.stem}/{t['name']}" for t in json.loads(f.read_text())}
    return names


def validate() -> int:
    """Check queries.json and slice.json against the recorded corpus."""
    tools = corpus_tools()
    problems: list[str] = []
    for name in ("queries.json", "slice.json"):
        path = HERE / name
        items = json.loads(path.read_text())
        seen: set[str] = set()
        servers: set[str] = set()
        for i, item in enumerate(items):
            if set(item) != {"query", "expected"} or not isinstance(item["query"], str) or not item["query"].strip():
                problems.append(f"{name}[{i}]: want {{query, expected}} with a non-empty query")
                continue
            if item["query"] in seen:
                problems.append(f"{name}[{i}]: duplicate query {item['query']!r}")
            seen.add(item["query"])
            if not item["expected"] or len(set(item["expected"])) != len(item["expected"]):
                problems.append(f"{name}[{i}]: expected must be non-empty, without repeats")
            for e in item["expected"]:
                if e not in tools:
                    problems.append(f"{name}[{i}]: {e} is not in the corpus")
                servers.add(e.split("/", 1)[0])
        print(f"{name}: {len(items)} queries over {len(servers)} servers")
    if json.loads((HERE / "slice.json").read_text()) != make_slice(json.loads((HERE / "queries.json").read_text())):
        problems.append("slice.json is not make_slice(queries.json): run --make-slice")
    print(f"corpus: {len(tools)} tools")
    for p in problems:
        print("  " + p, file=sys.stderr)
    return 1 if problems else 0


def make_slice(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The CI smoke subset: round-robin over servers (sorted by id), each turn
    taking that server's next query in file order (a query belongs to the
    server of its first expected tool), until SLICE_SIZE; kept in file order."""
    by_server: dict[str, list[int]] = {}
    for i, item in enumerate(queries):
        by_server.setdefault(item["expected"][0].split("/", 1)[0], []).append(i)
    picked: list[int] = []
    turn = 0
    while len(picked) < min(SLICE_SIZE, len(queries)):
        for sid in sorted(by_server):
            if turn < len(by_server[sid]) and len(picked) < SLICE_SIZE:
                picked.append(by_server[sid][turn])
        turn += 1
    return [queries[i] for i in sorted(picked)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated server ids to record")
    ap.add_argument("--check", action="store_true", help="compare with the recorded files, write nothing")
    ap.add_argument("--validate", action="store_true", help="check queries.json and slice.json, start nothing")
    ap.add_argument("--make-slice", action="store_true", help="rewrite slice.json from queries.json")
    ap.add_argument("--npm-packages", action="store_true", help="print pinned npm specs and exit")
    ap.add_argument("--pypi-packages", action="store_true", help="print pinned PyPI specs and exit")
    args = ap.parse_args()

    if args.make_slice:
        sliced = make_slice(json.loads((HERE / "queries.json").read_text()))
        (HERE / "slice.json").write_text(json.dumps(sliced, indent=1, ensure_ascii=False) + "\n")
        print(f"slice.json: {len(sliced)} queries")
        return 0
    if args.validate:
        return validate()
    if args.npm_packages or args.pypi_packages:
        for s in SERVERS:
            if args.npm_packages and s["registry"] == "npm":
                print(" ".join([s["id"], f"{s['package']}@{s['version']}", *s.get("npm_extra", [])]))
            elif args.pypi_packages and s["registry"] == "PyPI":
                print(f"{s['id']} {s['package']}=={s['version']}")
        return 0

    import anyio

    only = set(args.only.split(",")) if args.only else None
    CORPUS.mkdir(exist_ok=True)
    failed: list[str] = []
    for server in SERVERS:
        if only and server["id"] not in only:
            continue
        have = installed_version(server)
        if have != server["version"]:
            print(f"warning: {server['id']}: installed {server['package']} is {have}, pinned {server['version']}",
                  file=sys.stderr)
        try:
            tools, info = anyio.run(list_tools, server)
        except BaseException as exc:  # noqa: BLE001 - report and go on to the next server
            if isinstance(exc, KeyboardInterrupt):
                raise
            while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]
            print(f"FAILED {server['id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed.append(server["id"])
            continue
        out = CORPUS / f"{server['id']}.json"
        text = dump(tools)
        if args.check:
            same = out.is_file() and out.read_text() == text
            print(f"{'same' if same else 'DIFFERS'} {server['id']}: {len(tools)} tools")
            if not same:
                failed.append(server["id"])
        else:
            out.write_text(text)
            print(f"{server['id']}: {len(tools)} tools ({info.get('name')} {info.get('version')})")

    if not args.check:
        # SOURCES.md always describes every corpus file present, whatever --only was.
        rows = []
        for server in SERVERS:
            f = CORPUS / f"{server['id']}.json"
            if f.is_file():
                rows.append((server, installed_version(server) or server["version"], len(json.loads(f.read_text()))))
        write_sources(rows)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
