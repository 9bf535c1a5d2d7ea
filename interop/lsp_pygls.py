"""Interop check: pygls's language client (`LanguageClient`, over stdio with
`start_io`, its typed `lsprotocol` messages) against the `lsp_server` example.
The client offers only UTF-32 positions, so every column below counts code
points, and the text has astral-plane characters (2 UTF-16 units, 4 bytes)
before the edits, the diagnostics and the completion.
Usage: python lsp_pygls.py PATH/TO/lsp_server"""
import asyncio
import importlib.metadata
import sys
import time

from lsprotocol import types
from pygls.exceptions import JsonRpcException

try:  # 2.x
    from pygls.lsp.client import LanguageClient
except ImportError:  # 1.x
    from pygls.lsp.client import BaseLanguageClient as LanguageClient

try:  # lsprotocol 2025 (pygls 2.x)
    from lsprotocol.types import ClientInfo
    from lsprotocol.types import TextDocumentContentChangePartial as RangeChange
except ImportError:  # lsprotocol 2023 (pygls 1.x)
    from lsprotocol.types import InitializeParamsClientInfoType as ClientInfo
    from lsprotocol.types import TextDocumentContentChangeEvent_Type1 as RangeChange

TIMEOUT = 15.0  # seconds, for anything that waits on the server

passed = []


def check(name: str) -> None:
    passed.append(name)
    print(f"ok   {name}", flush=True)


class Client(LanguageClient):
    """Records what the server sends; `exit_code` resolves when it exits."""

    def __init__(self):
        super().__init__("interop-pygls", "1.0.0")
        self.logs = []
        self.diagnostics = []  # PublishDiagnosticsParams, in arrival order
        self.progress = {}  # token -> [value, ...]
        self.created = []
        self.configuration_asked = []
        self.exit_code = asyncio.get_running_loop().create_future()

    async def server_exit(self, server):
        if not self.exit_code.done():
            self.exit_code.set_result(server.returncode)


async def until(what: str, predicate, seconds: float = TIMEOUT):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        await asyncio.sleep(0.01)


async def forward_stderr(stream):
    """The server's stderr (a pipe that start_io opens) copied to ours."""
    while line := await stream.readline():
        sys.stderr.write(line.decode(errors="replace"))


def plain(value):
    """pygls hands untyped results (a method of the server's own) over as
    namedtuples; this makes them dicts again."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def rng(a: tuple, b: tuple) -> types.Range:
    return types.Range(start=pos(*a), end=pos(*b))


async def main(server: str) -> None:
    client = Client()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(params: types.ConfigurationParams):
        client.configuration_asked.append([item.section for item in params.items])
        return [{"greeting": "hello from pygls"} for _ in params.items]

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def log_message(params: types.LogMessageParams):
        client.logs.append(params)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish_diagnostics(params: types.PublishDiagnosticsParams):
        client.diagnostics.append(params)

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def create_progress(params: types.WorkDoneProgressCreateParams):
        client.created.append(params.token)

    @client.feature(types.PROGRESS)
    def progress(params: types.ProgressParams):
        client.progress.setdefault(params.token, []).append(plain(params.value))

    await client.start_io(server)
    stderr = asyncio.create_task(forward_stderr(client._server.stderr))

    # initialize, offering UTF-32 only ---------------------------------------------
    init = await asyncio.wait_for(
        client.initialize_async(
            types.InitializeParams(
                process_id=None,
                root_uri=None,
                client_info=ClientInfo(name="interop-pygls", version="1.0.0"),
                capabilities=types.ClientCapabilities(
                    general=types.GeneralClientCapabilities(
                        position_encodings=[types.PositionEncodingKind.Utf32]
                    ),
                    workspace=types.WorkspaceClientCapabilities(configuration=True),
                ),
            )
        ),
        TIMEOUT,
    )
    caps = init.capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf32, caps.position_encoding
    assert caps.hover_provider is True, caps.hover_provider
    assert caps.completion_provider is not None
    sync = caps.text_document_sync
    assert sync.change == types.TextDocumentSyncKind.Incremental and sync.open_close, sync
    check(
        f"initialize: {init.server_info.name} {init.server_info.version}, positionEncoding utf-32 "
        "(offered: utf-32), hover, completion, incremental sync"
    )

    client.initialized(types.InitializedParams())
    await until("window/logMessage", lambda: client.logs)
    assert client.configuration_asked == [["example"]], client.configuration_asked
    assert "hello from pygls" in client.logs[0].message, client.logs
    check(f'initialized: the server asked workspace/configuration, logged "{client.logs[0].message}"')

    def hover(line=0, character=0):
        return client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos(line, character))
        )

    async def diagnostics(version: int, count: int):
        await until(
            f"publishDiagnostics for version {version}",
            lambda: client.diagnostics and client.diagnostics[-1].version == version,
        )
        last = client.diagnostics[-1]
        assert last.uri == uri, last.uri
        assert len(last.diagnostics) == count, last.diagnostics
        for d in last.diagnostics:
            assert d.severity == types.DiagnosticSeverity.Warning, d
            assert d.source == "lsp_server" and d.message == "a TODO is left", d
        return [(d.range.start.line, d.range.start.character, d.range.end.character) for d in last.diagnostics]

    # didOpen ------------------------------------------------------------------------
    # 'ï' is 1 code point (2 bytes), '🦀' 1 code point (2 UTF-16 units, 4 bytes).
    uri = "file:///interop/pygls.txt"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="plaintext", version=1, text="naïve 🦀 TODO crab\n🦀🦀 two"
            )
        )
    )
    got = await diagnostics(1, 1)
    assert got == [(0, 8, 12)], got
    check("didOpen -> publishDiagnostics (version 1): 1 Warning on the TODO at UTF-32 0:8..0:12")
    answer = await asyncio.wait_for(hover(), TIMEOUT)
    assert answer.contents.kind == types.MarkupKind.PlainText and answer.contents.value == "6 words", answer
    check('hover -> "6 words" (plaintext)')

    # Incremental didChange after the emoji, two edits in one notification ---------------
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                # "rusty " right after "🦀 " ...
                RangeChange(range=rng((0, 8), (0, 8)), text="rusty "),
                # ... then "crab", now at 0:19..0:23, becomes "crustacean".
                RangeChange(range=rng((0, 19), (0, 23)), text="crustacean"),
            ],
        )
    )
    got = await diagnostics(2, 1)
    assert got == [(0, 14, 18)], got
    answer = await asyncio.wait_for(hover(), TIMEOUT)
    assert answer.contents.value == "7 words", answer
    check('incremental didChange after the emoji (UTF-32 0:8, then 0:19..0:23) -> TODO at 0:14, hover "7 words"')

    # A prefix typed after two emoji, then completion --------------------------------
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[RangeChange(range=rng((1, 6), (1, 6)), text=" cru")],
        )
    )
    await diagnostics(3, 1)
    completion = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos(1, 10))
        ),
        TIMEOUT,
    )
    items = completion if isinstance(completion, list) else completion.items
    assert [(i.label, i.kind) for i in items] == [("crustacean", types.CompletionItemKind.Text)], items
    check('completion after "🦀🦀 two cru" (UTF-32 1:10) -> [crustacean] (kind Text)')

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=4),
            content_changes=[RangeChange(range=rng((1, 3), (1, 3)), text="TODO ")],
        )
    )
    got = await diagnostics(4, 2)
    assert got == [(0, 14, 18), (1, 3, 7)], got
    answer = await asyncio.wait_for(hover(), TIMEOUT)
    assert answer.contents.value == "9 words", answer
    check('a second TODO after "🦀🦀 " -> 2 diagnostics (0:14, 1:3) for version 4, hover "9 words"')

    # example/slow with the request's workDoneToken ------------------------------------
    slow = await asyncio.wait_for(
        client.protocol.send_request_async("example/slow", {"ms": 300, "workDoneToken": "pygls-1"}), TIMEOUT
    )
    assert plain(slow) == {"sleptMs": 300}, slow
    values = client.progress.get("pygls-1", [])
    kinds = [v["kind"] for v in values]
    assert kinds == ["begin"] + ["report"] * 9 + ["end"], values
    assert values[0]["title"] == "Sleeping" and values[-1].get("message") == "done", values
    percentages = [v["percentage"] for v in values[1:-1]]
    assert percentages == sorted(percentages), percentages
    assert client.created == [], client.created  # no window.workDoneProgress offered
    check(f"example/slow with workDoneToken -> sleptMs 300; $/progress: begin, 9 reports {percentages[0]}..{percentages[-1]}%, end")

    # example/slow cancelled ---------------------------------------------------------
    pending = client.protocol.send_request_async(
        "example/slow", {"ms": 60000, "workDoneToken": "pygls-2"}, msg_id="slow-cancelled"
    )
    await until("progress begin on pygls-2", lambda: client.progress.get("pygls-2"))
    started = time.monotonic()
    client.cancel_request(types.CancelParams(id="slow-cancelled"))
    try:
        await asyncio.wait_for(pending, 10)
        raise AssertionError("the cancelled example/slow succeeded")
    except JsonRpcException as e:
        assert e.code == -32800, (e.code, e)
    elapsed = (time.monotonic() - started) * 1000
    assert elapsed < 5000, elapsed
    await until("progress end on pygls-2", lambda: client.progress["pygls-2"][-1]["kind"] == "end")
    assert client.progress["pygls-2"][-1].get("message") == "cancelled", client.progress["pygls-2"]
    check(f'example/slow cancelled ($/cancelRequest) -> -32800 after {elapsed:.0f} ms, progress end "cancelled"')

    # shutdown + exit ----------------------------------------------------------------
    warnings = [log.message for log in client.logs if log.type in (types.MessageType.Error, types.MessageType.Warning)]
    assert warnings == [], warnings
    assert await asyncio.wait_for(client.shutdown_async(None), TIMEOUT) is None
    check("shutdown -> null")
    client.exit(None)
    code = await asyncio.wait_for(client.exit_code, TIMEOUT)
    assert code == 0, code
    check("exit -> process exit code 0")
    await asyncio.wait_for(client.stop(), TIMEOUT)
    await stderr


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python lsp_pygls.py PATH/TO/lsp_server")
    asyncio.run(main(sys.argv[1]))
    version = importlib.metadata.version("pygls")
    print(f"pygls {version} interop: {len(passed)} checks passed")
