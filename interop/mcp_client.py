"""Interop check: the official MCP Python SDK's ClientSession against the
`mcp_server` example, over stdio (stdio_client) and over Streamable HTTP
(streamable_http_client against `mcp_server --http 127.0.0.1:0`).
Usage: python mcp_client.py PATH/TO/mcp_server"""
import re
import signal
import subprocess
import sys
import threading
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.types import PromptReference
from mcp.client.stdio import stdio_client

try:  # 2.x
    from mcp.client.streamable_http import streamable_http_client
except ImportError:  # 1.x
    from mcp.client.streamable_http import streamablehttp_client as streamable_http_client

try:  # the 1.x name
    from mcp.shared.exceptions import McpError
except ImportError:  # 2.x
    from mcp.shared.exceptions import MCPError as McpError

try:  # 2.x
    from mcp_types import ListRootsResult, Root
except ImportError:  # 1.x
    from mcp.types import ListRootsResult, Root


def field(obj, snake: str, camel: str):
    """A result field by its 2.x (snake_case) or 1.x (camelCase) name."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


passed = []


def check(name: str) -> None:
    passed.append(name)
    print(f"ok   {name}", flush=True)


async def list_roots(_context):
    return ListRootsResult(roots=[Root(uri="file:///interop", name="interop")])


async def logged(logs: list, pattern: str, seconds: float = 5.0) -> str:
    """Waits until a line of the server's stderr matches `pattern`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for line in list(logs):
            if re.search(pattern, line):
                return line
        await anyio.sleep(0.02)
    raise AssertionError(f"no server log line matches {pattern!r}:\n" + "\n".join(logs))


async def suite(label: str, read, write, logs=None) -> None:
    async with ClientSession(read, write, list_roots_callback=list_roots) as session:
        init = await session.initialize()
        assert field(init, "server_info", "serverInfo").name == "jsonrpc-runtime-mcp-example", init
        assert init.capabilities.tools is not None
        check(f"{label}: initialize (negotiated {field(init, 'protocol_version', 'protocolVersion')})")
        await session.send_ping()
        check(f"{label}: ping")
        tools = await session.list_tools()
        assert sorted(t.name for t in tools.tools) == ["add", "echo", "roots", "sleep"]
        check(f"{label}: tools/list")
        echo = await session.call_tool("echo", {"text": "héllo"})
        assert echo.content[0].text == "héllo" and not field(echo, "is_error", "isError")
        check(f"{label}: tools/call echo")
        add = await session.call_tool("add", {"a": 2, "b": 3})
        assert add.content[0].text == "5"
        check(f"{label}: tools/call add")
        try:
            await session.call_tool("nope", {})
            raise AssertionError("an unknown tool was called")
        except McpError as e:
            assert e.error.code == -32602, e.error
        check(f"{label}: unknown tool -> -32602")
        negotiated = field(init, "protocol_version", "protocolVersion")
        if negotiated >= "2025-11-25":
            # Arguments that do not fit are a tool error the model can correct.
            bad = await session.call_tool("add", {"a": "x", "b": 1})
            assert field(bad, "is_error", "isError"), bad
            assert "invalid arguments for `add`" in bad.content[0].text, bad
            check(f"{label}: bad arguments -> isError ({negotiated})")
        else:
            try:
                await session.call_tool("add", {"a": "x", "b": 1})
                raise AssertionError("bad arguments were accepted")
            except McpError as e:
                assert e.error.code == -32602, e.error
            check(f"{label}: bad arguments -> -32602 ({negotiated})")
        roots = await session.call_tool("roots", {})
        assert roots.content[0].text == "file:///interop (interop)", roots
        check(f"{label}: tools/call roots: the server called roots/list on the client")
        resources = await session.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["example://readme"], resources
        readme = await session.read_resource("example://readme")
        assert "jsonrpc-mcp" in readme.contents[0].text, readme
        templates = await session.list_resource_templates()
        assert [field(t, "uri_template", "uriTemplate") for t in field(templates, "resource_templates", "resourceTemplates")] == ["example://echo/{text}"]
        echoed = await session.read_resource("example://echo/hi")
        assert echoed.contents[0].text == "hi", echoed
        try:
            await session.read_resource("example://nope")
            raise AssertionError("an unknown resource was read")
        except McpError as e:
            assert e.error.code == -32002, e.error
        check(f"{label}: resources: list, read, templates, -32002 for an unknown URI")
        prompts = await session.list_prompts()
        assert [(p.name, [(a.name, a.required) for a in p.arguments]) for p in prompts.prompts] == [
            ("review", [("code", True), ("focus", False)])
        ], prompts
        review = await session.get_prompt("review", {"code": "x = 1", "focus": "typos"})
        assert review.messages[0].role == "user"
        assert review.messages[0].content.text == "Review this code, looking for typos:\n\nx = 1", review
        check(f"{label}: prompts: list with arguments, get")
        completed = await session.complete(
            PromptReference(type="ref/prompt", name="review"), {"name": "focus", "value": "b"}
        )
        assert completed.completion.values == ["bugs", "bounds checks"], completed
        check(f"{label}: completion/complete for a prompt argument")
        reports = []

        async def on_progress(progress, total, message):
            reports.append(progress)

        slept = await session.call_tool("sleep", {"ms": 200}, progress_callback=on_progress)
        assert slept.content[0].text == "slept 200 ms"
        assert reports and reports == sorted(reports), reports
        check(f"{label}: tools/call sleep with progress {reports}")
        if logs is not None:
            # Giving up on a call: the SDK tells the server with
            # notifications/cancelled, and the server stops the handler.
            with anyio.move_on_after(0.3):
                await session.call_tool("sleep", {"ms": 60000})
                raise AssertionError("a 60 s sleep answered")
            line = await logged(logs, r"sleep \(request \S+\) stopped after")
            check(f"{label}: sleep abandoned after 300 ms; the server stopped it ({line[12:]})")
            again = await session.call_tool("echo", {"text": "still here"})
            assert again.content[0].text == "still here"
            check(f"{label}: session usable after the cancellation")


async def main(server: str) -> None:
    async with stdio_client(StdioServerParameters(command=server)) as (read, write):
        await suite("stdio", read, write)

    child = subprocess.Popen(
        [server, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    logs: list = []
    listening = threading.Event()
    url = []

    def read_stderr() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            line = line.rstrip("\n")
            print(line, file=sys.stderr, flush=True)
            logs.append(line)
            found = re.match(r"mcp_server: listening on (\S+)$", line)
            if found:
                url.append(found.group(1))
                listening.set()
        listening.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    assert listening.wait(10) and url, "mcp_server --http says where it listens"
    try:
        async with streamable_http_client(url[0]) as streams:
            read, write = streams[0], streams[1]
            await suite("http", read, write, logs)
        # Leaving the client sends DELETE.
        line = await logged(logs, r"session \S+ ended: the client deleted it")
        check(f"http: session terminated on close ({line[12:]})")
        child.send_signal(signal.SIGTERM)
        assert child.wait(10) == 0, "mcp_server exits 0 after SIGTERM"
        check("http: SIGTERM: the server drained and exited 0")
    finally:
        if child.poll() is None:
            child.kill()
    print(f"MCP (Python SDK) interop: {len(passed)} checks passed")


anyio.run(main, sys.argv[1])
