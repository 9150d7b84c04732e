"""A stdio MCP backend written with the Python `mcp` SDK (an independent implementation) whose
tools return structured content, as the backends of ToolHive's composite-tool tests do. The
composite-tool tests run workflows over it through the gateway.

Every call is appended to the file named by COMPOSITE_CALLS (one JSON line: tool and
arguments), so a test can see what each step sent."""

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("data")
CALLS = os.environ.get("COMPOSITE_CALLS")
seen: dict[str, int] = {}


def record(tool: str, **arguments) -> int:
    """Logs the call and returns how many times `tool` was called with these arguments."""
    key = tool + json.dumps(arguments, sort_keys=True)
    seen[key] = seen.get(key, 0) + 1
    if CALLS:
        with open(CALLS, "a") as f:
            f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
    return seen[key]


@server.tool(structured_output=True)
def echo(input: str) -> dict[str, Any]:
    """Returns its input as `output`."""
    record("echo", input=input)
    return {"output": input}


@server.tool(structured_output=True)
def fetch(source: str) -> dict[str, Any]:
    """Returns typed values as strings (ToolHive's typed-output scenario)."""
    record("fetch", source=source)
    return {"text": "Data fetched successfully", "count": "42", "success": "true", "score": "95.5"}


@server.tool(structured_output=True)
def get_record() -> dict[str, Any]:
    """Returns only an id (ToolHive's output-defaults scenario)."""
    record("get_record")
    return {"id": "rec123"}


@server.tool(structured_output=True)
def get_json() -> dict[str, Any]:
    """Returns JSON documents as strings (ToolHive's deserialisation scenario)."""
    record("get_json")
    return {
        "metadata_json": '{"version": "1.0", "author": "system"}',
        "tags_json": '["important","reviewed","approved"]',
    }


@server.tool(structured_output=True)
def create_issue(title: str) -> dict[str, Any]:
    """Creates issue 456."""
    record("create_issue", title=title)
    return {"number": 456, "url": "https://github.com/org/repo/issues/456"}


@server.tool(structured_output=True)
def add_label(issue: int, label: str) -> dict[str, Any]:
    """Labels an issue; `issue` must arrive as an integer."""
    record("add_label", issue=issue, label=label)
    return {"success": "true", "issue": issue}


@server.tool(structured_output=True)
def flaky(key: str) -> dict[str, Any]:
    """Fails the first time it is called with a key, succeeds after."""
    if record("flaky", key=key) == 1:
        raise RuntimeError("temporarily unavailable")
    return {"data": "success_after_retry"}


@server.tool(structured_output=True)
def list_packages() -> dict[str, Any]:
    """Three packages."""
    record("list_packages")
    return {"packages": [{"name": "openssl", "version": "3.0"}, {"name": "curl", "version": "8.4"}, {"name": "zlib", "version": "1.3"}]}


@server.tool(structured_output=True)
def query_vulnerability(package_name: str) -> dict[str, Any]:
    """How many known vulnerabilities a package has (curl has one)."""
    record("query_vulnerability", package_name=package_name)
    return {"package": package_name, "vulnerabilities": 1 if package_name == "curl" else 0}


@server.tool(structured_output=True)
def deploy_tool(env: str) -> dict[str, Any]:
    """Deploys to an environment."""
    record("deploy_tool", env=env)
    return {"deployed": env}


if __name__ == "__main__":
    server.run("stdio")
