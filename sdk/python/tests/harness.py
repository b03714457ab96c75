"""Test harness: the real reference server, a webhook receiver, proxies and a scripted fake.

``server()`` builds ``./examples/server`` from this repository once per test
run (or uses ``SETTLEFLOW_SERVER_BIN``), creates its keys and a webhook
endpoint pointing at a local receiver, starts it on a loopback port and stops
it when the interpreter exits.
"""

from __future__ import annotations

import atexit
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SDK_DIR = os.path.dirname(HERE)


def repo_root() -> str:
    d = SDK_DIR
    while not os.path.exists(os.path.join(d, "go.mod")):
        parent = os.path.dirname(d)
        if parent == d:
            raise RuntimeError("cannot find the repository root (go.mod) above " + SDK_DIR)
        d = parent
    return d


# ---------------------------------------------------------------- quiet HTTP servers


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: D401 - connection noise is expected
        pass


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, status: int, body: bytes, headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if not headers or "Content-Type" not in headers:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(server: http.server.HTTPServer) -> threading.Thread:
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    return t


# ---------------------------------------------------------------- webhook receiver


class Delivery:
    def __init__(self, path: str, headers: Dict[str, str], body: bytes) -> None:
        self.path = path
        self.headers = headers  # lower-case names
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """Records every webhook delivery and answers 200 {"received": true}."""

    def __init__(self) -> None:
        self.deliveries: List[Delivery] = []
        self.cond = threading.Condition()
        outer = self

        class Handler(_QuietHandler):
            def do_POST(self) -> None:
                body = self.read_body()
                d = Delivery(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with outer.cond:
                    outer.deliveries.append(d)
                    outer.cond.notify_all()
                self.send(200, b'{"received":true}')

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        self.thread = _serve(self.httpd)

    def wait_for(self, pred: Callable[[Delivery], bool], timeout: float = 30.0) -> Delivery:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for d in self.deliveries:
                    if pred(d):
                        return d
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching webhook delivery within {timeout} s ({len(self.deliveries)} received)")
                self.cond.wait(left)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


# ---------------------------------------------------------------- the reference server


_bin: Optional[str] = None
_bin_lock = threading.Lock()


def server_binary() -> str:
    """``SETTLEFLOW_SERVER_BIN``, or ``./examples/server`` built once per test run
    (every :class:`Server` of the run uses it)."""
    global _bin
    with _bin_lock:
        if _bin is None:
            path = os.environ.get("SETTLEFLOW_SERVER_BIN") or ""
            if not path:
                d = tempfile.mkdtemp(prefix="settleflow-python-server-")
                atexit.register(shutil.rmtree, d, True)
                path = os.path.join(d, "server")
                r = subprocess.run(
                    ["go", "build", "-o", path, "./examples/server"],
                    cwd=repo_root(), capture_output=True, text=True, timeout=600,
                )
                if r.returncode != 0:
                    raise RuntimeError("go build ./examples/server failed:\n" + r.stderr)
            _bin = path
        return _bin


class Server:
    """The reference server; ``args`` are more flags for it (``-remote NAMES``)."""

    def __init__(self, args: Tuple[str, ...] = ()) -> None:
        self.args = tuple(args)
        self.tmp = tempfile.mkdtemp(prefix="settleflow-python-test-")
        self.data = os.path.join(self.tmp, "data")
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.receiver: Optional[Receiver] = None
        self._out: Any = None
        self._err: Any = None
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _cli(self, *args: str) -> str:
        r = subprocess.run([self.bin, "-data", self.data, *args], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"server {' '.join(args)} failed: {r.stderr}")
        return r.stdout

    def _start(self) -> None:
        self.bin = server_binary()
        lines = self._cli("keys", "create", "--env", "test", "--name", "python-sdk").split()
        self.key = next(x for x in lines if x.startswith("sk_test_"))
        lines = self._cli(
            "keys", "create", "--env", "test", "--name", "tiny", "--plan", "enterprise", "--per-minute", "2", "--per-day", "1000"
        ).split()
        self.tiny_key = next(x for x in lines if x.startswith("sk_test_"))
        lines = self._cli("keys", "create", "--env", "live", "--name", "live").split()
        self.live_key = next(x for x in lines if x.startswith("sk_live_"))
        self.receiver = Receiver()
        out = self._cli("webhooks", "add", "--env", "test", "--url", self.receiver.url)
        m = re.search(r"(whsec_\S+)", out)
        if not m:
            raise RuntimeError("webhooks add printed no secret: " + out)
        self.webhook_secret = m.group(1)
        self._out = open(os.path.join(self.tmp, "stdout"), "wb")
        self._err = open(os.path.join(self.tmp, "stderr"), "wb")
        # One worker: workflows execute one after the other (50 ms each), so a
        # cancel right after a create finds the workflow still Pending.
        self.proc = subprocess.Popen(
            [
                self.bin, "-data", self.data, "-https", "127.0.0.1:0", "-http", "", "-log-level", "warn",
                "-auth-failures-per-minute", "0", "-workers", "1", *self.args,
            ],
            stdout=self._out, stderr=self._err, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        pat = re.compile(rb"listening on https://127\.0\.0\.1:(\d+) \(certificate (.+?)\)")
        while True:
            with open(os.path.join(self.tmp, "stdout"), "rb") as f:
                m2 = pat.search(f.read())
            if m2:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                with open(os.path.join(self.tmp, "stderr"), "rb") as f:
                    raise RuntimeError("the server did not start: " + f.read().decode("utf-8", "replace"))
            time.sleep(0.05)
        self.port = int(m2.group(1))
        self.ca = m2.group(2).decode()
        self.cert = os.path.join(self.data, "tls", "cert.pem")
        self.tls_key = os.path.join(self.data, "tls", "key.pem")
        self.base_url = f"https://127.0.0.1:{self.port}"

    def worker_key(self, *args: str) -> str:
        """A new test worker key (``keys create -kind worker``), with more flags such as ``--products a,b``."""
        lines = self._cli("keys", "create", "--env", "test", "--name", "worker", "--kind", "worker", *args).split()
        return next(x for x in lines if x.startswith("rk_test_"))

    def client(self, key: Optional[str] = None, **kw: Any) -> Any:
        import settleflow

        kw.setdefault("base_url", self.base_url)
        kw.setdefault("ca", self.ca)
        return settleflow.Settleflow(api_key=key or self.key, **kw)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(15)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5)
            self.proc = None
        for f in (self._out, self._err):
            if f is not None:
                f.close()
        self._out = self._err = None
        if self.receiver is not None:
            self.receiver.close()
            self.receiver = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def log(self) -> str:
        with open(os.path.join(self.tmp, "stderr"), "rb") as f:
            return f.read().decode("utf-8", "replace")


_server: Optional[Server] = None
_lock = threading.Lock()


def server() -> Server:
    global _server
    with _lock:
        if _server is None:
            _server = Server()
            atexit.register(_server.stop)
        return _server


def client(key: Optional[str] = None, **kw: Any) -> Any:
    import settleflow

    s = server()
    kw.setdefault("base_url", s.base_url)
    kw.setdefault("ca", s.ca)
    return settleflow.Settleflow(api_key=key or s.key, **kw)


def unique(prefix: str) -> str:
    return f"{prefix}_{os.getpid()}_{int(time.time() * 1000) % 10**9}_{threading.get_ident() % 1000}"


# ---------------------------------------------------------------- a TLS proxy in front of the server


class Seen:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.client_port = 0
        self.upstream_status: Optional[int] = None
        self.upstream_headers: Dict[str, str] = {}
        self.upstream_body = b""


#: A plan gets (number of the request, starting at 0, and the request) and
#: returns what the proxy does: ("forward",), ("answer", status, headers, body),
#: ("drop_after_forward",): forward, read the answer, close without replying,
#: or ("answer_after_forward", status, headers, body): forward, read the
#: answer, reply with this one instead.
Plan = Callable[[int, Seen], Tuple[Any, ...]]


class Proxy:
    """HTTPS on loopback with the server's own certificate, forwarding to the real server."""

    def __init__(self, srv: Server, plan: Plan) -> None:
        self.seen: List[Seen] = []
        self._lock = threading.Lock()
        up_ctx = ssl.create_default_context(cafile=srv.ca)
        server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_ctx.load_cert_chain(srv.cert, srv.tls_key)
        outer = self

        class Handler(_QuietHandler):
            def _any(self) -> None:
                body = self.read_body()
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with outer._lock:
                    n = len(outer.seen)
                    outer.seen.append(seen)
                action = plan(n, seen)
                if action[0] == "answer":
                    self.send(action[1], action[3], action[2])
                    return
                conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=up_ctx, timeout=30)
                try:
                    hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
                    conn.request(self.command, self.path, body=body if body else None, headers=hdrs)
                    resp = conn.getresponse()
                    data = resp.read()
                    seen.upstream_status = resp.status
                    seen.upstream_headers = {k.lower(): v for k, v in resp.getheaders()}
                    seen.upstream_body = data
                finally:
                    conn.close()
                if action[0] == "drop_after_forward":
                    self.close_connection = True
                    return  # the server committed; the client never hears of it
                if action[0] == "answer_after_forward":
                    self.send(action[1], action[3], action[2])
                    return  # the server committed; the client hears otherwise
                out = {k: v for k, v in resp.getheaders() if k.lower() not in ("connection", "content-length", "transfer-encoding", "content-type")}
                out["Content-Type"] = resp.getheader("Content-Type") or "application/json"
                self.send(resp.status, data, out)

            do_GET = _any
            do_POST = _any

        class TLSServer(_QuietServer):
            def finish_request(self, request: Any, client_address: Any) -> None:
                conn = server_ctx.wrap_socket(request, server_side=True)
                try:
                    self.RequestHandlerClass(conn, client_address, self)
                finally:
                    conn.close()

        self.httpd = TLSServer(("127.0.0.1", 0), Handler)
        self.base_url = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = _serve(self.httpd)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


# ---------------------------------------------------------------- a scripted plain-HTTP fake (loopback)


class Fake:
    """Answers each request with the next scripted reply: (status, headers, body[, delay seconds[, "then_close"]]),
    or ("close", ...) to close the connection without answering.
    Past the script it answers the last reply again. Records every request."""

    def __init__(self, script: List[Tuple[Any, ...]]) -> None:
        self.script = list(script)
        self.seen: List[Seen] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(_QuietHandler):
            def _any(self) -> None:
                body = self.read_body()
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                seen.client_port = self.client_address[1]
                with outer._lock:
                    n = len(outer.seen)
                    outer.seen.append(seen)
                    reply = outer.script[min(n, len(outer.script) - 1)]
                if len(reply) > 3 and reply[3]:
                    outer._stop.wait(reply[3])
                if reply[0] == "close":
                    self.close_connection = True
                    return
                body_out = reply[2] if isinstance(reply[2], bytes) else json.dumps(reply[2]).encode()
                self.send(reply[0], body_out, reply[1])
                if len(reply) > 4 and reply[4] == "then_close":
                    self.close_connection = True  # after a keep-alive answer: the client's pooled connection goes stale

            do_GET = _any
            do_POST = _any

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = _serve(self.httpd)

    def close(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


WORKFLOW_JSON: Dict[str, Any] = {
    "id": "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J",
    "object": "workflow",
    "livemode": False,
    "product": "ticket-triage",
    "customerId": "cus_123",
    "payload": {"ticketId": "T-42", "subject": "Refund", "attachments": 1},
    "quoted": {"amount": 358, "currency": "usd"},
    "margin": {"target": 0.3, "achieved": None},
    "status": "Pending",
    "result": None,
    "settlement": None,
    "failure": None,
    "createdAt": "2026-11-24T00:00:00.123456789Z",
    "updatedAt": "2026-11-24T00:00:00Z",
}


def error_json(status_type: str, code: str, message: str, param: Optional[str] = None) -> Dict[str, Any]:
    e: Dict[str, Any] = {"type": status_type, "code": code, "message": message, "requestId": "req_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J"}
    if param:
        e["param"] = param
    return {"error": e}


if __name__ == "__main__":  # manual check: python3 -m tests.harness
    s = server()
    print(s.base_url, s.ca, file=sys.stderr)
