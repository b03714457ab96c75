"""HTTPS transport: connections, retries, timeouts, errors (internal).

Retries: a request is retried on a connection error, a timeout, 408, 429 and
5xx, at most ``max_retries`` times, after a delay that is the server's
``Retry-After`` (on a 429 without it, the time until ``X-RateLimit-Reset``)
or, when the server names none, exponential backoff with full jitter. Every
POST carries an ``Idempotency-Key`` (generated when the caller gave none) that
is the same on each of its attempts, so a retried create never makes a second
workflow.

Several base URLs: each request goes to the next in turn (round-robin); one
that gave a connection error is passed over for ``DOWN_FOR`` seconds (unless
every one is), and a request that could not even be sent (the connection was
refused or its TLS handshake failed: nothing of it was written) goes to the
next URL at once, without counting as a retry. A request the server does not
treat as idempotent (``resend=False``: a claim, a heartbeat carrying spend)
is never sent a second time once it was written, whatever happens to its
answer.

The API key lives in a :class:`Secret`, whose repr is redacted; it is put on
the wire by ``putheader`` from an expression, never kept in a local variable
of a frame that can end up in a traceback, and connection errors are raised
outside the ``except`` block that caught them, with a cause stripped of its
traceback, so no frame of the request (whose locals include the headers)
hangs off the exception.
"""

from __future__ import annotations

import email.utils
import http.client
import ipaddress
import json
import logging
import random
import select
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
import weakref
from decimal import Decimal
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union, cast

from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    ConflictError,
    Headers,
    IdempotencyError,
    InsufficientFundsError,
    InvalidRequestError,
    NotFoundError,
    PaymentError,
    PermissionDeniedError,
    RateLimitError,
    invalid_argument,
)
from ._version import __version__

logger = logging.getLogger("settleflow")
logger.addHandler(logging.NullHandler())

USER_AGENT = f"settleflow-python/{__version__} python/{'.'.join(map(str, sys.version_info[:3]))}"

#: Statuses worth another attempt: the request timed out, was rate limited or hit a server-side failure.
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Backoff: the n-th retry waits a uniformly random time in [0, min(MAX_BACKOFF, INITIAL_BACKOFF * 2**n)).
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
#: A server that asks for a longer wait than this (a daily limit, say) is not waited for: the error is raised.
MAX_RETRY_AFTER = 60.0
#: Idle keep-alive connections kept per client.
MAX_IDLE_CONNECTIONS = 8
#: Seconds a base URL that gave a connection error is passed over, unless every one did.
DOWN_FOR = 5.0

Query = Mapping[str, Union[str, int, None]]


class Secret:
    """Holds the API key; its repr and str never show it, and it refuses to be pickled."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def display(self) -> str:
        """The form the server's key list shows: prefix and last four characters."""
        v = self._value
        prefix = v[: v.index("_", 3) + 1] if v.startswith("sk_") and "_" in v[3:] else ""
        return f"{prefix}…{v[-4:]}" if len(v) >= 12 else "…"

    def __repr__(self) -> str:
        return "<api key redacted>"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("the API key cannot be pickled")


class Response:
    __slots__ = ("status", "headers", "body", "attempts")

    def __init__(self, status: int, headers: Headers, body: bytes, attempts: int) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.attempts = attempts

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"), parse_float=Decimal)


#: How a request on a kept-alive connection that the server has since closed fails.
_STALE_ERRORS = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, ssl.SSLEOFError, ssl.SSLZeroReturnError)


class _Failed:
    """An attempt that got no response (internal); ``unsent`` when nothing of the request was written."""

    __slots__ = ("error", "retryable", "reused", "unsent")

    def __init__(self, error: APIConnectionError, retryable: bool, reused: bool, unsent: bool) -> None:
        self.error = error
        self.retryable = retryable
        self.reused = reused
        self.unsent = unsent


class _Endpoint:
    """One base URL (internal)."""

    __slots__ = ("scheme", "host", "port", "prefix", "base_url", "down_until")

    def __init__(self, base_url: Any) -> None:
        if not isinstance(base_url, str):
            raise ConfigurationError("base_url", f"base_url must be a str, not a {type(base_url).__name__}")
        try:
            u = urllib.parse.urlsplit(base_url)
            port = u.port
        except ValueError as e:
            raise ConfigurationError("base_url", f"base_url is not a URL: {e}") from None
        if u.scheme not in ("https", "http") or not u.hostname:
            raise ConfigurationError("base_url", "base_url must be an absolute https:// URL, for example https://127.0.0.1:8443")
        if u.scheme == "http" and not _is_loopback(u.hostname):
            raise ConfigurationError("base_url", "base_url must use https (plain http is allowed only to a loopback address)")
        if u.query or u.fragment or u.username or u.password:
            raise ConfigurationError("base_url", "base_url must not carry a query, fragment or credentials")
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = port or (443 if u.scheme == "https" else 80)
        self.prefix = u.path.rstrip("/")
        self.base_url = urllib.parse.urlunsplit((u.scheme, u.netloc, self.prefix, "", ""))
        #: time.monotonic() until which the URL is passed over after a connection error.
        self.down_until = 0.0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _close_all(conns: List[Tuple[int, http.client.HTTPConnection]], lock: threading.Lock) -> None:
    with lock:
        idle = conns[:]
        del conns[:]
    for _, c in idle:
        c.close()


def _encode_body(body: Any) -> bytes:
    """The JSON of a request body; an argument that is not JSON is an InvalidRequestError naming it."""
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:
        param = "body"
        if isinstance(body, Mapping):
            for k, v in cast(Mapping[str, Any], body).items():
                try:
                    json.dumps(v, allow_nan=False)
                except (TypeError, ValueError, RecursionError):
                    param = k
                    break
        raise invalid_argument(param, f"{param} is not JSON: {e}") from None


class Transport:
    def __init__(
        self,
        *,
        api_key: Secret,
        base_url: Union[str, Sequence[str]],
        timeout: float,
        max_retries: int,
        ca: Optional[str],
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        urls: List[Any]
        if isinstance(base_url, (list, tuple)):
            urls = list(cast(Sequence[Any], base_url))
            if not urls:
                raise ConfigurationError("base_url", "base_url is an empty list: give at least one URL")
        else:
            urls = [base_url]
        self._endpoints = [_Endpoint(u) for u in urls]
        first = self._endpoints[0]
        # The first base URL's parts (as before several were allowed).
        self.scheme, self.host, self.port, self.prefix, self.base_url = first.scheme, first.host, first.port, first.prefix, first.base_url
        #: Every base URL, in the order given.
        self.base_urls = [e.base_url for e in self._endpoints]
        self._turn = 0
        self.timeout = timeout
        self.max_retries = max_retries
        self._key = api_key
        self._sleep = sleep
        self._rand = rand
        self._clock = clock
        self._ssl: Optional[ssl.SSLContext] = None
        if any(e.scheme == "https" for e in self._endpoints):
            try:
                ctx = ssl.create_default_context(cafile=ca) if ca is not None else ssl.create_default_context()
            except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
                raise ConfigurationError("ca", f"ca {ca!r} is not a readable PEM file of certificates: {e}") from None
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            self._ssl = ctx
        self._lock = threading.Lock()
        # Idle kept-alive connections, each with the index of its endpoint.
        self._idle: List[Tuple[int, http.client.HTTPConnection]] = []
        self._closed = False
        self._finalizer = weakref.finalize(self, _close_all, self._idle, self._lock)

    # ------------------------------------------------------------ connections

    def close(self) -> None:
        self._closed = True
        self._finalizer()

    def _pick(self, skip: Set[int]) -> int:
        """The index of the endpoint for the next attempt: the next in turn
        that is neither down nor in ``skip``, else the next not in ``skip``."""
        n = len(self._endpoints)
        with self._lock:
            start = self._turn
            self._turn = (self._turn + 1) % n
        now = time.monotonic()
        fallback = -1
        for k in range(n):
            i = (start + k) % n
            if i in skip:
                continue
            if self._endpoints[i].down_until <= now:
                return i
            if fallback < 0:
                fallback = i
        return fallback if fallback >= 0 else start

    def _take(self, i: int) -> Tuple[http.client.HTTPConnection, bool]:
        e = self._endpoints[i]
        while True:
            conn: Optional[http.client.HTTPConnection] = None
            with self._lock:
                for k in range(len(self._idle) - 1, -1, -1):
                    if self._idle[k][0] == i:
                        conn = self._idle.pop(k)[1]
                        break
            if conn is None:
                break
            sock = conn.sock
            try:
                # An idle connection with something to read has been closed by the server (or is out of step).
                stale = sock is None or bool(select.select([sock], [], [], 0)[0])
            except (OSError, ValueError):
                stale = True
            if not stale:
                return conn, True
            conn.close()
        if e.scheme == "https":
            return http.client.HTTPSConnection(e.host, e.port, timeout=self.timeout, context=self._ssl), False
        return http.client.HTTPConnection(e.host, e.port, timeout=self.timeout), False

    def _give_back(self, i: int, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append((i, conn))
                return
        conn.close()

    # ------------------------------------------------------------ requests

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Optional[Any] = None,
        idempotency_key: Optional[str] = None,
        authenticate: bool = True,
        max_retries: Optional[int] = None,
        timeout: Optional[float] = None,
        resend: bool = True,
    ) -> Response:
        """Sends the request, retrying as the module docstring says (at most
        ``max_retries`` times, default the client's), each attempt within
        ``timeout`` seconds (default the client's); returns a 2xx response or raises.
        Without ``resend``, a request once written is never written again."""
        retries = self.max_retries if max_retries is None else max_retries
        limit = self.timeout if timeout is None else timeout
        target = path
        if query:
            pairs = [(k, str(v)) for k, v in query.items() if v is not None]
            if pairs:
                target += "?" + urllib.parse.urlencode(pairs)
        data: Optional[bytes] = None
        if body is not None:
            data = _encode_body(body)
        if method == "POST" and idempotency_key is None:
            idempotency_key = str(uuid.uuid4())
        attempt = 0
        fresh_retry_used = False
        # The endpoints this attempt could not send the request to.
        unsent: Set[int] = set()
        i = -1
        while True:
            started = time.monotonic()
            if i < 0:
                i = self._pick(unsent)
            outcome = self._attempt(i, method, target, data, idempotency_key, authenticate, limit)
            if isinstance(outcome, _Failed):
                if outcome.reused and not fresh_retry_used and (resend or outcome.unsent):
                    # A kept-alive connection the server had closed: try once more on a new one, free of charge.
                    fresh_retry_used = True
                    logger.debug("settleflow: %s %s: reused connection failed (%s); retrying on a new one", method, path, outcome.error)
                    continue
                self._endpoints[i].down_until = time.monotonic() + DOWN_FOR
                if outcome.unsent and outcome.retryable:
                    # Nothing was written: the server cannot have acted on it. The next URL, at once.
                    unsent.add(i)
                    if len(unsent) < len(self._endpoints):
                        logger.info("settleflow: %s %s: %s; trying the next base URL", method, path, outcome.error)
                        i = -1
                        continue
                i = -1
                if outcome.retryable and attempt < retries and resend:
                    unsent.clear()
                    delay = self._backoff(attempt)
                    logger.info(
                        "settleflow: %s %s failed (%s); retry %d of %d in %.2fs",
                        method, path, outcome.error, attempt + 1, retries, delay,
                    )
                    self._sleep(delay)
                    attempt += 1
                    continue
                outcome.error.attempts = attempt + 1
                raise outcome.error
            i = -1
            unsent.clear()
            resp = outcome
            resp.attempts = attempt + 1
            logger.debug(
                "settleflow: %s %s -> %d (%s, %.0f ms, attempt %d)",
                method, path, resp.status, resp.headers.get("request-id", "no request id"),
                (time.monotonic() - started) * 1000, attempt + 1,
            )
            if 200 <= resp.status < 300:
                return resp
            err = self._error(resp)
            err.attempts = attempt + 1
            if resp.status in RETRYABLE_STATUSES and attempt < retries and resend:
                delay_or_none = self._retry_delay(resp, attempt)
                if delay_or_none is not None:
                    logger.info(
                        "settleflow: %s %s answered %d (%s); retry %d of %d in %.2fs",
                        method, path, resp.status, err.request_id or "no request id",
                        attempt + 1, retries, delay_or_none,
                    )
                    self._sleep(delay_or_none)
                    attempt += 1
                    continue
            raise err

    def _attempt(
        self, i: int, method: str, path: str, data: Optional[bytes], idempotency_key: Optional[str], authenticate: bool,
        timeout: float,
    ) -> Union[Response, _Failed]:
        conn, reused = self._take(i)
        target = self._endpoints[i].prefix + path
        deadline = time.monotonic() + timeout
        got_status = False
        sent = False
        failure: BaseException = Exception()
        try:
            if conn.sock is None:
                conn.connect()
            self._settimeout(conn, deadline)
            conn.putrequest(method, target)
            if authenticate:
                conn.putheader("Authorization", "Bearer " + self._key.reveal())
            conn.putheader("User-Agent", USER_AGENT)
            conn.putheader("Accept", "application/json")
            if idempotency_key is not None:
                conn.putheader("Idempotency-Key", idempotency_key)
            if data is not None:
                conn.putheader("Content-Type", "application/json")
            if method in ("POST", "PUT", "PATCH") or data is not None:
                conn.putheader("Content-Length", str(len(data or b"")))
            conn.endheaders(data)
            sent = True
            self._settimeout(conn, deadline)
            resp = conn.getresponse()
            got_status = True
            chunks: List[bytes] = []
            while True:
                self._settimeout(conn, deadline)
                chunk = resp.read1(65536)
                if not chunk:
                    break
                chunks.append(chunk)
            # read1 does not mark a fully read response closed (read does); the
            # connection takes no new request until it is.
            resp.close()
        except (OSError, http.client.HTTPException) as e:
            failure = e
        else:
            if resp.will_close:
                conn.close()
            else:
                self._give_back(i, conn)
            return Response(resp.status, Headers(resp.getheaders()), b"".join(chunks), 1)
        # Raised by the caller, outside this except block: no frame of this request hangs off the error.
        conn.close()
        return self._failed(failure, self._endpoints[i], reused=reused and not got_status, unsent=not sent, timeout=timeout)

    @staticmethod
    def _settimeout(conn: http.client.HTTPConnection, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out")
        if conn.sock is not None:
            conn.sock.settimeout(left)

    def _failed(self, e: BaseException, endpoint: _Endpoint, *, reused: bool, unsent: bool, timeout: float) -> _Failed:
        # The cause is kept without its traceback (whose frames hold the request's locals).
        e.__traceback__ = None
        e.__context__ = None
        e.__cause__ = None
        where = f"{endpoint.host}:{endpoint.port}"
        err: APIConnectionError
        if isinstance(e, (socket.timeout, TimeoutError)):
            err = APITimeoutError(f"the request to {where} did not complete within {timeout:g} s")
            retryable = True
        elif isinstance(e, ssl.SSLCertVerificationError):
            err = APIConnectionError(
                f"TLS certificate verification failed for {where}: {e.verify_message or e} "
                "(for the reference server's self-signed certificate, pass ca='settleflow-data/tls/cert.pem')"
            )
            retryable = False
        else:
            err = APIConnectionError(f"could not reach {where}: {type(e).__name__}: {e}")
            retryable = True
        err.__cause__ = e
        # Only the way a kept-alive connection the server closed fails is retried for free.
        stale = reused and isinstance(e, _STALE_ERRORS)
        return _Failed(err, retryable, stale, unsent)

    # ------------------------------------------------------------ errors and delays

    def _backoff(self, attempt: int) -> float:
        return self._rand() * min(MAX_BACKOFF, INITIAL_BACKOFF * (2 ** attempt))

    def retry_after(self, headers: Headers) -> Optional[float]:
        """Seconds the server asked to wait: Retry-After (seconds or an HTTP date), or None."""
        v = headers.get("retry-after")
        if v is None:
            return None
        v = v.strip()
        if v.isdigit():
            return float(v)
        try:
            when = email.utils.parsedate_to_datetime(v)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        return max(0.0, when.timestamp() - self._clock())

    def rate_limit_reset_in(self, headers: Headers) -> Optional[float]:
        v = headers.get("x-ratelimit-reset")
        if v is None or not v.strip().isdigit():
            return None
        return max(0.0, int(v.strip()) - self._clock())

    def _retry_delay(self, resp: Response, attempt: int) -> Optional[float]:
        """How long to wait before retrying resp, or None not to retry it."""
        wait = self.retry_after(resp.headers)
        if wait is None and resp.status == 429:
            wait = self.rate_limit_reset_in(resp.headers)
        if wait is None:
            return self._backoff(attempt)
        if wait > MAX_RETRY_AFTER:
            return None
        return wait

    def redact(self, text: str) -> str:
        key = self._key.reveal()
        return text.replace(key, "<api key redacted>") if key and key in text else text

    def _error(self, resp: Response) -> APIError:
        status = resp.status
        body: Any = None
        etype: Optional[str] = None
        code: Optional[str] = None
        param: Optional[str] = None
        fields: Dict[str, Any] = {}
        request_id = resp.headers.get("request-id")
        message = ""
        try:
            body = json.loads(resp.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            body = None
        e: Any = cast(Dict[str, Any], body).get("error") if isinstance(body, dict) else None
        if isinstance(e, dict):
            fields = cast(Dict[str, Any], e)

            def text(name: str) -> Optional[str]:
                v = fields.get(name)
                return v if isinstance(v, str) else None

            etype, code, param = text("type"), text("code"), text("param")
            message = text("message") or ""
            request_id = text("requestId") or request_id
        if not message:
            reason = http.client.responses.get(status, "")
            snippet = resp.body[:200].decode("utf-8", "replace").strip()
            message = f"HTTP {status} {reason}".strip() + (f": {snippet}" if snippet else "")
        message = self.redact(message)
        if isinstance(body, (dict, list)):
            body = json.loads(self.redact(json.dumps(body)))
        kwargs: Dict[str, Any] = dict(
            status=status, type=etype, code=code, param=param, request_id=request_id, headers=resp.headers, body=body
        )
        if status == 429:
            wait = self.retry_after(resp.headers)
            if wait is None:
                wait = self.rate_limit_reset_in(resp.headers)
            return RateLimitError(message, retry_after=wait, **kwargs)
        if status == 402:
            if code != "insufficient_funds":
                return PaymentError(message, **kwargs)

            # The amounts of the 402 body, when they have the types the API documents.
            def integer(name: str) -> Optional[int]:
                v = fields.get(name)
                return v if isinstance(v, int) and not isinstance(v, bool) else None

            def string(name: str) -> Optional[str]:
                v = fields.get(name)
                return self.redact(v) if isinstance(v, str) else None

            return InsufficientFundsError(
                message, available=integer("available"), amount=integer("amount"),
                currency=string("currency"), customer_id=string("customerId"), **kwargs,
            )
        cls: type = APIError
        if status == 401:
            cls = AuthenticationError
        elif status == 403:
            cls = PermissionDeniedError
        elif status == 404:
            cls = NotFoundError
        elif status == 409:
            cls = IdempotencyError if etype == "idempotency_error" else ConflictError
        elif 400 <= status < 500 and (etype == "invalid_request_error" or etype is None):
            cls = InvalidRequestError
        err: APIError = cls(message, **kwargs)
        return err
