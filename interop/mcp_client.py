"""Interop check: the official MCP Python SDK's ClientSession over stdio
against the `mcp_server` example. Usage: python mcp_client.py PATH/TO/mcp_server"""
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # the 1.x name
    from mcp.shared.exceptions import McpError
except ImportError:  # 2.x
    from mcp.shared.exceptions import MCPError as McpError


def field(obj, snake: str, camel: str):
    """A result field by its 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main(server: str) -> None:
    passed = []

    def check(name: str) -> None:
        passed.append(name)
        print(f"ok   {name}", flush=True)

    async with stdio_client(StdioServerParameters(command=server)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert field(init, "server_info", "serverInfo").name == "jsonrpc-runtime-mcp-example", init
            assert init.capabilities.tools is not None
            check(f"initialize (negotiated {field(init, 'protocol_version', 'protocolVersion')})")
            await session.send_ping()
            check("ping")
            tools = await session.list_tools()
            assert sorted(t.name for t in tools.tools) == ["add", "echo", "sleep"]
            check("tools/list")
            echo = await session.call_tool("echo", {"text": "héllo"})
            assert echo.content[0].text == "héllo" and not field(echo, "is_error", "isError")
            check("tools/call echo")
            add = await session.call_tool("add", {"a": 2, "b": 3})
            assert add.content[0].text == "5"
            check("tools/call add")
            unknown = await session.call_tool("nope", {})
            assert field(unknown, "is_error", "isError")
            check("unknown tool -> isError")
            try:
                await session.call_tool("add", {"a": "x", "b": 1})
                raise AssertionError("bad arguments were accepted")
            except McpError as e:
                assert e.error.code == -32602, e.error
            check("bad arguments -> -32602")
            reports = []

            async def on_progress(progress, total, message):
                reports.append(progress)

            slept = await session.call_tool("sleep", {"ms": 200}, progress_callback=on_progress)
            assert slept.content[0].text == "slept 200 ms"
            assert reports and reports == sorted(reports), reports
            check(f"tools/call sleep with progress {reports}")
    print(f"MCP (Python SDK) interop: {len(passed)} checks passed")


anyio.run(main, sys.argv[1])
