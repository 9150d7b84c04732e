"""A stdio MCP backend written with the Python `mcp` SDK (an independent implementation), with a
tool that asks the user a question mid-call through elicitation."""

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("booking")


class Confirm(BaseModel):
    confirm: bool
    name: str


@server.tool()
async def book_table(party_size: int, ctx: Context) -> str:
    """Book a table, asking the user to confirm first."""
    answer = await ctx.elicit(message=f"Book a table for {party_size}?", schema=Confirm)
    if answer.action == "accept" and answer.data.confirm:
        return f"booked {party_size} for {answer.data.name}"
    return f"not booked ({answer.action})"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    server.run("stdio")
