#!/usr/bin/env python3
"""Load clients and reports for scripts/scale-out.sh (Python 3 standard library only).

Subcommands:

  render   renders nginx.conf.template for a set of instances
  caller   checks that a handler sees the client's address in X-Forwarded-For
           as nginx set it, not as the client wrote it
  oversized posts a body over the instances' cap through nginx, once per
           instance: each must answer 413 (not 502: the instance read the
           body it refused instead of resetting the connection), and the
           normal requests that follow must still reach that instance (nginx
           did not count it as failed)
  phase    runs JSON-RPC-over-HTTP and MCP session load through nginx until a
           stop file appears, checking every answer, and writes a JSON tally
  report   prints the summary table from the phases' tallies and the
           WebSocket runs of the `load` example; exits 1 on a failure

Every request a client sends is counted exactly once, in one of these:

  HTTP JSON-RPC: ok (200, the right id and result), http_<status> (an answer
  from nginx other than 200: 502 when the request reached an instance that
  closed the connection without answering), conn_error (nginx itself could
  not be reached or dropped the connection), bad_answer (200 with a wrong id
  or result, or a JSON-RPC error). Everything but `ok` is a lost request.

  MCP: every request of a session goes to the instance that made it. A
  failure on a session of the instance being drained, after the drain began,
  is `ended_by_drain` (a session lives in one process: its client starts a
  new one): a 404 (the session is gone), a 502 (nginx could not connect to
  the instance, so nothing was sent), or a -32001 answer (the session ended
  before the request was run). A 404 on any other session is
  `surviving_404`. Any other failure is `lost`, and so is, on any session, a
  stream that ended without the request's answer, a broken connection or a
  wrong answer. An `initialize` refused with 503 by a draining instance (a
  connection it took from its backlog) is retried and counted in
  `init_refused_503`.
"""

import argparse
import http.client
import json
import os
import random
import re
import socket
import sys
import threading
import time

MCP_VERSION = "2025-06-18"


# ---------------------------------------------------------------------------
# render


def render(args):
    """Fills the template's @NAME@ placeholders; a placeholder alone on its line
    becomes several lines at its indentation."""
    http_servers = args.http.split(",")
    ws_servers = args.ws.split(",")
    mcp = [entry.split("=", 1) for entry in args.mcp.split(",")]
    upstreams = []
    for tag, addr in mcp:
        upstreams += [
            f"upstream mcp_{tag} {{",
            f"    server {addr};",
            "    keepalive 8;",
            "    keepalive_timeout 20s;",
            "}",
        ]
    lines = {
        "HTTP_SERVERS": [f"server {addr};" for addr in http_servers],
        "WS_SERVERS": [f"server {addr};" for addr in ws_servers],
        "MCP_SERVERS": [f"server {addr};" for _, addr in mcp],
        "MCP_INSTANCE_UPSTREAMS": upstreams,
        "MCP_MAP": [f'"~^{re.escape(tag)}\\."  mcp_{tag};' for tag, _ in mcp],
    }
    words = {"PREFIX": args.prefix, "LISTEN": args.listen}
    with open(args.template, encoding="utf-8") as f:
        template = f.read()
    out = []
    for line in template.splitlines():
        alone = re.fullmatch(r"(\s*)@([A-Z_]+)@\s*", line)
        if alone and alone.group(2) in lines:
            indent = alone.group(1)
            out += [indent + item if item else "" for item in lines[alone.group(2)]]
            continue
        for name, value in words.items():
            line = line.replace(f"@{name}@", value)
        if "@" in line and re.search(r"@[A-Z_]+@", line):
            sys.exit(f"clients.py: unknown placeholder in: {line}")
        out.append(line)
    text = "\n".join(out) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


# ---------------------------------------------------------------------------
# caller


def caller(args):
    """`test/caller` through nginx with a forged X-Forwarded-For: the handler
    must see the address nginx saw (127.0.0.1), not the forged one."""
    conn = http.client.HTTPConnection(args.host, args.port, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "test/caller"})
    conn.request(
        "POST",
        "/",
        body,
        {"Content-Type": "application/json", "X-Forwarded-For": "203.0.113.66"},
    )
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        sys.exit(f"caller: HTTP {response.status}: {data!r}")
    result = json.loads(data).get("result") or {}
    seen = result.get("forwardedFor")
    print(
        f"caller: the client sent X-Forwarded-For: 203.0.113.66; the handler read "
        f"{seen!r} (from {result.get('addr')}, the balancer)"
    )
    if seen != "127.0.0.1":
        sys.exit("caller: the handler did not get the address nginx saw")


def oversized(args):
    """One POST over the cap per instance, then normal requests: see the
    module docs."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}'
    big = b" " * args.bytes
    failures = []
    refused_by = []
    for round_ in range(args.instances):
        conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
        conn.request("POST", "/", big, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        upstream = response.getheader("X-Upstream")
        conn.close()
        refused_by.append(upstream)
        if response.status != 413:
            failures.append(f"round {round_ + 1}: {args.bytes} bytes got {response.status} from {upstream}, not 413")
            continue
        # Round-robin: as many requests as instances reach each once, the
        # one that refused included, unless nginx took it out of rotation.
        seen = []
        conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
        for _ in range(args.instances):
            conn.request("POST", "/", body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            data = answer.read()
            seen.append(answer.getheader("X-Upstream"))
            if answer.status != 200 or json.loads(data).get("result") != 19:
                failures.append(f"round {round_ + 1}: a normal request got {answer.status}: {data!r}")
        conn.close()
        if upstream not in seen:
            failures.append(
                f"round {round_ + 1}: {upstream} refused the large body and then got none of "
                f"the {args.instances} requests that followed (they went to {seen}): nginx took it out"
            )
    print(
        f"oversized: {args.instances} POSTs of {args.bytes} bytes through nginx, answered 413 by "
        f"{', '.join(map(str, refused_by))}; each instance went on getting requests"
        if not failures
        else "oversized: FAILED"
    )
    for failure in failures:
        print(f"  {failure}")
    if failures:
        sys.exit(1)


# ---------------------------------------------------------------------------
# phase


class Tally:
    """Counters shared by the client threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.upstreams = {}
        self.examples = {}

    def add(self, key, n=1, example=None):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n
            if example is not None and key not in self.examples:
                self.examples[key] = example

    def upstream(self, kind, addr):
        with self.lock:
            per = self.upstreams.setdefault(kind, {})
            per[addr] = per.get(addr, 0) + 1

    def snapshot(self):
        with self.lock:
            return {
                "counts": dict(self.counts),
                "upstreams": {k: dict(v) for k, v in self.upstreams.items()},
                "examples": dict(self.examples),
            }


class Phase:
    def __init__(self, args):
        self.args = args
        self.tally = Tally()
        self.stop = threading.Event()
        self.drain_file = args.drain_file

    def drain_started(self):
        return self.drain_file is not None and os.path.exists(self.drain_file)

    def connection(self):
        return http.client.HTTPConnection(self.args.host, self.args.port, timeout=self.args.timeout)

    # -- JSON-RPC over HTTP ------------------------------------------------

    def http_client(self, n):
        rng = random.Random(n)
        conn = self.connection()
        seq = 0
        while not self.stop.is_set():
            seq += 1
            a, b = rng.randrange(-10**9, 10**9), rng.randrange(-10**9, 10**9)
            request_id = f"c{n}-{seq}"
            body = json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "subtract", "params": [a, b]}
            )
            self.tally.add("http.sent")
            try:
                conn.request("POST", "/", body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as e:
                self.tally.add("http.conn_error", example=f"{request_id}: {e!r}")
                conn.close()
                conn = self.connection()
                continue
            upstream = response.getheader("X-Upstream") or "-"
            if "," in upstream:
                # nginx tried more than one instance: a refused connect.
                self.tally.add("http.retried_connect")
            self.tally.upstream("http", upstream.split(",")[-1].strip())
            if response.status != 200:
                self.tally.add(
                    f"http.http_{response.status}",
                    example=f"{request_id} via {upstream}: {data[:200]!r}",
                )
                continue
            try:
                answer = json.loads(data)
                good = answer.get("id") == request_id and answer.get("result") == a - b
            except ValueError:
                good = False
            if good:
                self.tally.add("http.ok")
            else:
                self.tally.add("http.bad_answer", example=f"{request_id}: {data[:200]!r}")
        conn.close()

    # -- MCP sessions ------------------------------------------------------

    def mcp_post(self, conn, message, session=None):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if session is not None:
            headers["Mcp-Session-Id"] = session
            headers["MCP-Protocol-Version"] = MCP_VERSION
        conn.request("POST", "/mcp", json.dumps(message), headers)
        response = conn.getresponse()
        return response, response.read()

    @staticmethod
    def sse_answer(body, request_id):
        """The JSON-RPC answer with `request_id` in an SSE body (or a JSON one)."""
        text = body.decode("utf-8", "replace")
        candidates = []
        if text.lstrip().startswith("{"):
            candidates.append(text)
        data = []
        for line in text.splitlines() + [""]:
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line == "" and data:
                candidates.append("\n".join(data))
                data = []
        for candidate in candidates:
            try:
                message = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
        return None

    def mcp_client(self, n):
        rng = random.Random(1000 + n)
        conn = self.connection()
        calls = self.args.mcp_calls
        while not self.stop.is_set():
            # initialize: no session id yet, so nginx picks any instance.
            self.tally.add("mcp.requests")
            try:
                response, body = self.mcp_post(
                    conn,
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": MCP_VERSION,
                            "capabilities": {},
                            "clientInfo": {"name": "scale-out", "version": "0"},
                        },
                    },
                )
            except (OSError, http.client.HTTPException) as e:
                self.tally.add("mcp.lost", example=f"initialize: {e!r}")
                conn.close()
                conn = self.connection()
                continue
            session = response.getheader("Mcp-Session-Id")
            if response.status == 503 and self.drain_started():
                self.tally.add("mcp.init_refused_503")
                continue
            answer = self.sse_answer(body, 1)
            if response.status != 200 or not session or not answer or "result" not in answer:
                self.tally.add(
                    "mcp.lost", example=f"initialize: HTTP {response.status}: {body[:200]!r}"
                )
                continue
            tag = session.split(".", 1)[0]
            self.tally.add("mcp.ok")
            self.tally.add("mcp.sessions")
            self.tally.upstream("mcp_sessions", tag)
            steps = [("initialized", None)] + [("call", i) for i in range(calls)] + [("delete", None)]
            for step, i in steps:
                if self.stop.is_set():
                    break
                try:
                    ok, what = self.mcp_step(conn, session, step, i, rng)
                except (OSError, http.client.HTTPException) as e:
                    conn.close()
                    conn = self.connection()
                    ok, what = False, f"connection: {e!r}"
                self.tally.add("mcp.requests")
                if ok:
                    self.tally.add("mcp.ok")
                    continue
                if what.startswith(("no answer", "connection", "bad answer")):
                    # A request that reached its instance gets an answer,
                    # even from a session that is ending (-32001).
                    self.tally.add("mcp.lost", example=f"{session} {step}: {what}")
                elif tag == self.args.drained_tag and self.drain_started():
                    self.tally.add("mcp.ended_by_drain", example=f"{session} {step}: {what}")
                    self.tally.add("mcp.ended_by_drain." + what.split(":")[0])
                elif what.startswith("HTTP 404"):
                    self.tally.add("mcp.surviving_404", example=f"{session} {step}: {what}")
                else:
                    self.tally.add("mcp.lost", example=f"{session} {step}: {what}")
                break
            else:
                if not self.stop.is_set():
                    self.tally.add("mcp.sessions_completed")
        conn.close()

    def mcp_step(self, conn, session, step, i, rng):
        """One request of a session: (answered as expected, what went wrong)."""
        if step == "initialized":
            response, body = self.mcp_post(
                conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session
            )
            return response.status == 202, f"HTTP {response.status}: {body[:120]!r}"
        if step == "delete":
            conn.request(
                "DELETE", "/mcp", headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": MCP_VERSION}
            )
            response = conn.getresponse()
            body = response.read()
            return response.status in (200, 204), f"HTTP {response.status}: {body[:120]!r}"
        a, b = rng.randrange(10**6), rng.randrange(10**6)
        request_id = 2 + i
        response, body = self.mcp_post(
            conn,
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": a, "b": b}},
            },
            session,
        )
        if response.status != 200:
            return False, f"HTTP {response.status}: {body[:120]!r}"
        answer = self.sse_answer(body, request_id)
        if answer is None:
            return False, f"no answer: {body[:120]!r}"
        if "error" in answer:
            return False, f"JSON-RPC error {answer['error'].get('code')}: {answer['error'].get('message')}"
        try:
            text = answer["result"]["content"][0]["text"]
        except (KeyError, IndexError, TypeError):
            return False, f"bad answer: {answer!r}"[:160]
        return text == str(a + b), f"bad answer: {text!r} for {a}+{b}"

    # -- the run -----------------------------------------------------------

    def run(self):
        threads = [
            threading.Thread(target=self.http_client, args=(n,), daemon=True)
            for n in range(self.args.http_clients)
        ] + [
            threading.Thread(target=self.mcp_client, args=(n,), daemon=True)
            for n in range(self.args.mcp_sessions)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        ready = False
        deadline = started + self.args.max_seconds
        while time.monotonic() < deadline:
            if not ready and self.args.ready_file:
                counts = self.tally.snapshot()["counts"]
                if counts.get("http.ok", 0) + counts.get("mcp.ok", 0) > 0:
                    open(self.args.ready_file, "w").close()
                    ready = True
            if self.args.stop_file and os.path.exists(self.args.stop_file):
                break
            if self.args.seconds and time.monotonic() - started >= self.args.seconds:
                break
            time.sleep(0.05)
        timed_out = time.monotonic() >= deadline
        self.stop.set()
        for thread in threads:
            thread.join(self.args.timeout + 5)
        result = self.tally.snapshot()
        result["seconds"] = round(time.monotonic() - started, 2)
        result["timed_out"] = timed_out
        result["stuck_threads"] = sum(thread.is_alive() for thread in threads)
        with open(self.args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, sort_keys=True)


def phase(args):
    Phase(args).run()


# ---------------------------------------------------------------------------
# report


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def report(args):
    """The summary table; returns the exit code."""
    failures = []
    rows = []

    def row(what, steady, drain, note=""):
        rows.append((what, steady, drain, note))

    steady = load_json(args.steady)
    drain = load_json(args.drain)
    s, d = steady["counts"], drain["counts"]

    def c(counts, key):
        return counts.get(key, 0)

    def lost_http(counts):
        return sum(v for k, v in counts.items() if k.startswith("http.") and k.split(".", 1)[1] not in ("sent", "ok", "retried_connect"))

    print()
    print(f"{'':44} | {'steady':>9} | {'drain':>9} |")
    print(f"{'-' * 44}-+-{'-' * 9}-+-{'-' * 9}-+")

    def line(label, a, b, note=""):
        print(f"{label:44} | {a:>9} | {b:>9} | {note}".rstrip())

    line("seconds of load", steady["seconds"], drain["seconds"])
    line("JSON-RPC over HTTP: requests sent", c(s, "http.sent"), c(d, "http.sent"))
    line("  answered OK (id and result checked)", c(s, "http.ok"), c(d, "http.ok"))
    line("  requests per second", rate(s, steady), rate(d, drain))
    line(
        "  retried by nginx after a refused connect",
        c(s, "http.retried_connect"),
        c(d, "http.retried_connect"),
        "(not lost: nginx sent them to another instance)",
    )
    statuses = sorted({k for k in list(s) + list(d) if k.startswith("http.http_")})
    for key in statuses:
        line(f"  HTTP {key.rsplit('_', 1)[1]} from nginx", c(s, key), c(d, key), "LOST")
    line("  connection errors", c(s, "http.conn_error"), c(d, "http.conn_error"), "LOST" if c(s, "http.conn_error") + c(d, "http.conn_error") else "")
    line("  wrong answers", c(s, "http.bad_answer"), c(d, "http.bad_answer"), "LOST" if c(s, "http.bad_answer") + c(d, "http.bad_answer") else "")
    line("  lost (sent, not answered OK)", lost_http(s), lost_http(d))
    for name, counts in (("steady", s), ("drain", d)):
        if lost_http(counts):
            failures.append(f"{name}: {lost_http(counts)} JSON-RPC-over-HTTP requests lost")
        if counts.get("http.sent", 0) == 0:
            failures.append(f"{name}: no JSON-RPC-over-HTTP request was sent")
    for name, result in (("steady", steady), ("drain", drain)):
        per = result["upstreams"].get("http", {})
        print(f"  {name}: answered per instance: " + ", ".join(f"{k} {v}" for k, v in sorted(per.items())))

    line("MCP: sessions started (initialize)", c(s, "mcp.sessions"), c(d, "mcp.sessions"))
    line("  sessions run to DELETE", c(s, "mcp.sessions_completed"), c(d, "mcp.sessions_completed"))
    line("  requests sent (every kind)", c(s, "mcp.requests"), c(d, "mcp.requests"))
    line("  answered as expected", c(s, "mcp.ok"), c(d, "mcp.ok"))
    line(
        "  sessions of the drained instance ended",
        c(s, "mcp.ended_by_drain"),
        c(d, "mcp.ended_by_drain"),
        "(expected: a session lives in one process)",
    )
    for key in sorted(k for k in d if k.startswith("mcp.ended_by_drain.")):
        line(f"    ... by {key.split('.', 2)[2]}", c(s, key), c(d, key))
    line(
        "  initialize refused 503 while draining",
        c(s, "mcp.init_refused_503"),
        c(d, "mcp.init_refused_503"),
        "(retried by the client)",
    )
    line("  404 on a session of a surviving instance", c(s, "mcp.surviving_404"), c(d, "mcp.surviving_404"), "must be 0")
    line("  other failures", c(s, "mcp.lost"), c(d, "mcp.lost"), "must be 0")
    for name, counts in (("steady", s), ("drain", d)):
        if counts.get("mcp.surviving_404", 0):
            failures.append(f"{name}: {counts['mcp.surviving_404']} MCP requests of surviving instances got 404")
        if counts.get("mcp.lost", 0):
            failures.append(f"{name}: {counts['mcp.lost']} MCP requests failed")
        if counts.get("mcp.sessions", 0) == 0:
            failures.append(f"{name}: no MCP session was started")
    if c(s, "mcp.ended_by_drain"):
        failures.append("steady: MCP sessions ended without a drain")
    for name, result in (("steady", steady), ("drain", drain)):
        per = result["upstreams"].get("mcp_sessions", {})
        print(f"  {name}: sessions per instance tag: " + ", ".join(f"{k} {v}" for k, v in sorted(per.items())))
        if result.get("timed_out") or result.get("stuck_threads"):
            failures.append(f"{name}: the load clients did not stop in time")

    for label, paths in (("WebSocket", args.ws), ("HTTP", args.load_http or [])):
        calls = ok = lost = dup = 0
        for path in paths:
            try:
                summary = load_json(path)
            except (OSError, ValueError) as e:
                failures.append(f"{label}: no summary in {path}: {e}")
                continue
            calls += summary.get("sent", 0)
            ok += summary.get("answered", 0) - summary.get("error_answers", 0)
            lost += summary.get("lost", 0)
            dup += summary.get("duplicated", 0)
            if not summary.get("ok") or summary.get("error_answers"):
                failures.append(
                    f"{label}: {path}: {summary.get('error_answers')} error answers, "
                    f"{summary.get('first_error_answer')}, problems {summary.get('problems')}"
                )
        if not paths:
            continue
        unit = "connections" if label == "WebSocket" else "clients"
        line(f"{label} (the `load` example): calls", calls, "-", f"{len(paths)} {unit}")
        line("  answered OK", ok, "-")
        line("  lost or duplicated", lost + dup, "-")

    for name, result in (("steady", steady), ("drain", drain)):
        for key, example in sorted(result.get("examples", {}).items()):
            print(f"  {name} example of {key}: {example}")
    for extra in args.note or []:
        print(extra)
    if failures:
        print("\nFAILED:")
        for failure in failures:
            print(f"  - {failure}")
        return 1
    print("\nPASSED: no accepted request was lost; every MCP session of a surviving instance was served")
    return 0


def rate(counts, result):
    seconds = result.get("seconds") or 0
    return int(counts.get("http.ok", 0) / seconds) if seconds else 0


# ---------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("render", help="render the nginx config")
    p.add_argument("--template", required=True)
    p.add_argument("--out", default="-")
    p.add_argument("--prefix", required=True)
    p.add_argument("--listen", required=True)
    p.add_argument("--http", required=True, help="ADDR,ADDR,...")
    p.add_argument("--ws", required=True, help="ADDR,ADDR,...")
    p.add_argument("--mcp", required=True, help="TAG=ADDR,TAG=ADDR,...")

    p = sub.add_parser("caller", help="check X-Forwarded-For")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)

    p = sub.add_parser("oversized", help="check that a body over the cap is a 413 through nginx")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--instances", type=int, required=True)
    p.add_argument("--bytes", type=int, required=True)

    p = sub.add_parser("phase", help="run HTTP and MCP load")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--http-clients", type=int, default=32)
    p.add_argument("--mcp-sessions", type=int, default=24)
    p.add_argument("--mcp-calls", type=int, default=5, help="tools/call per session")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: at the stop file)")
    p.add_argument("--max-seconds", type=float, default=120)
    p.add_argument("--timeout", type=float, default=15, help="per request")
    p.add_argument("--ready-file")
    p.add_argument("--stop-file")
    p.add_argument("--drain-file", help="exists once the drain has begun")
    p.add_argument("--drained-tag", help="the instance tag of the MCP server drained")
    p.add_argument("--out", required=True)

    p = sub.add_parser("report", help="print the summary")
    p.add_argument("--steady", required=True)
    p.add_argument("--drain", required=True)
    p.add_argument("--ws", nargs="*", default=[], help="`load --ws --json` summaries")
    p.add_argument("--load-http", nargs="*", default=[], help="`load --http --json` summaries")
    p.add_argument("--note", action="append")

    args = parser.parse_args()
    if args.command == "render":
        render(args)
    elif args.command == "caller":
        caller(args)
    elif args.command == "oversized":
        oversized(args)
    elif args.command == "phase":
        phase(args)
    elif args.command == "report":
        sys.exit(report(args))


if __name__ == "__main__":
    socket.setdefaulttimeout(30)
    main()
