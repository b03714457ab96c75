"""Webhook signature verification: ``settleflow.webhooks`` (also ``client.webhooks``).

Each delivery is a POST of a JSON event with two signatures over the exact
bytes sent, made with the endpoint's secret (``whsec_`` + base64 of the HMAC
key):

* ``service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, t + "." + body)>``
  (one ``v1=`` per secret while a secret is being rotated), checked by
  :meth:`Webhooks.construct`;
* the Standard Webhooks headers ``webhook-id``, ``webhook-timestamp`` and
  ``webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + t + "." + body)>``,
  checked by :meth:`Webhooks.verify_standard`.

Both compare in constant time and reject a timestamp more than ``tolerance``
seconds (default 300) from now, in the past or the future. A failure raises
:class:`SignatureVerificationError`, whose ``reason`` says why.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import hmac
import json
import math
import re
import time
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union, cast

from ._errors import ConfigurationError, SignatureVerificationError
from ._models import DecodeError, Event

__all__ = ["Webhooks", "webhooks", "DEFAULT_TOLERANCE", "SIGNATURE_HEADER"]

#: Seconds a signature's timestamp may lie from now, either way.
DEFAULT_TOLERANCE = 300
#: The signature header a delivery carries (the service's short name + "-signature").
SIGNATURE_HEADER = "service-signature"

_MAX_HEADER_LEN = 8 << 10
_MAX_SIGNATURES = 32
_INT = re.compile(r"^[+-]?[0-9]+$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")

RawBody = Union[bytes, bytearray, memoryview, str]
Now = Union[int, float, _dt.datetime, None]
Tolerance = Union[int, float, _dt.timedelta]


def _fail(reason: str, detail: str = "") -> SignatureVerificationError:
    return SignatureVerificationError(reason, detail)


def _body_bytes(raw_body: Any) -> bytes:
    if isinstance(raw_body, (bytes, bytearray, memoryview)):
        return bytes(cast(Union[bytes, bytearray, "memoryview[int]"], raw_body))
    if isinstance(raw_body, str):
        return raw_body.encode("utf-8")
    kind = type(raw_body).__name__
    raise _fail(
        SignatureVerificationError.BODY_NOT_RAW,
        f"raw_body is a {kind}, not the raw request body: the body was parsed before verification. "
        "Pass the bytes exactly as received (for http.server: self.rfile.read(int(self.headers['Content-Length']))); "
        "a parsed and re-serialized body does not match its signature.",
    )


def _key(secret: Any) -> bytes:
    if not isinstance(secret, str):
        raise _fail(SignatureVerificationError.BAD_SECRET, "the secret must be a str (whsec_...)")
    s = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        key = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise _fail(SignatureVerificationError.BAD_SECRET, "the secret is not whsec_ followed by base64")
    return key


def _now_seconds(now: Now) -> int:
    if now is None:
        return math.floor(time.time())
    if isinstance(now, _dt.datetime):
        if now.tzinfo is None:
            raise ConfigurationError("now", "now must be an aware datetime")
        return math.floor(now.timestamp())
    if isinstance(now, bool) or not isinstance(now, (int, float)) or not math.isfinite(now):
        raise ConfigurationError("now", "now must be Unix seconds or an aware datetime")
    return math.floor(now)


def _tolerance_seconds(tolerance: Tolerance) -> int:
    t = tolerance.total_seconds() if isinstance(tolerance, _dt.timedelta) else tolerance
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < math.inf:
        raise ConfigurationError("tolerance", "tolerance must be a positive number of seconds (or a timedelta)")
    return math.floor(t)


def _check_timestamp(t: int, now: Now, tolerance: Tolerance) -> None:
    n = _now_seconds(now)
    tol = _tolerance_seconds(tolerance)
    if t < n - tol or t > n + tol:
        raise _fail(SignatureVerificationError.TIMESTAMP_OUTSIDE_TOLERANCE, f"timestamp {t}, now {n}, tolerance {tol} s")


def _timestamp(timestamp: Any) -> int:
    if timestamp is None:
        return math.floor(time.time())
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)) or not math.isfinite(timestamp):
        raise ConfigurationError("timestamp", "timestamp must be Unix seconds")
    return math.floor(timestamp)


def _parse_int64(s: str) -> Optional[int]:
    if not _INT.match(s):
        return None
    n = int(s)
    return n if -(2 ** 63) <= n < 2 ** 63 else None


def _mac(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b".".join(parts), hashlib.sha256).digest()


def _header_str(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("latin-1")
    return str(v)


def _lower_headers(headers: Any) -> Dict[str, str]:
    if headers is None:
        return {}
    items = headers.items() if hasattr(headers, "items") else headers
    out: Dict[str, str] = {}
    for k, v in items:
        name = _header_str(k)
        value = _header_str(v)
        if name is not None and value is not None:
            out[name.lower()] = value
    return out


def _event(body: bytes) -> Event:
    invalid = SignatureVerificationError.INVALID_PAYLOAD
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(invalid, "the body is not UTF-8") from None
    try:
        obj = json.loads(text, parse_float=Decimal)
    except ValueError as e:
        raise _fail(invalid, f"the body is not JSON: {e}") from None
    if not isinstance(obj, dict):
        raise _fail(invalid, "the body is not a JSON object")
    fields = cast(Dict[str, Any], obj)
    if not isinstance(fields.get("id"), str) or not fields["id"] or not isinstance(fields.get("type"), str) or not fields["type"]:
        raise _fail(invalid, "the body is not an event (no id or type)")
    try:
        return Event.from_wire(fields)
    except DecodeError as e:
        raise _fail(invalid, str(e)) from None


class Webhooks:
    """Verifies webhook deliveries. Use the shared instance ``settleflow.webhooks``."""

    SIGNATURE_HEADER = SIGNATURE_HEADER
    DEFAULT_TOLERANCE = DEFAULT_TOLERANCE

    def construct(
        self,
        raw_body: RawBody,
        header: Optional[str],
        secret: str,
        tolerance: Tolerance = DEFAULT_TOLERANCE,
        *,
        now: Now = None,
    ) -> Event:
        """Verifies a delivery's ``service-signature`` header and returns its event.

        ``raw_body`` is the request body exactly as received (bytes, or str for
        text decoded as UTF-8), ``header`` the value of the ``service-signature``
        header (None when absent), ``secret`` the endpoint's ``whsec_…`` secret.
        ``now`` (Unix seconds or an aware datetime) replaces the clock, for tests.
        Raises :class:`SignatureVerificationError`.
        """
        body = _body_bytes(raw_body)
        self.verify(body, header, secret, tolerance, now=now)
        return _event(body)

    def verify(
        self,
        raw_body: RawBody,
        header: Optional[str],
        secret: str,
        tolerance: Tolerance = DEFAULT_TOLERANCE,
        *,
        now: Now = None,
    ) -> None:
        """Checks the ``service-signature`` header as :meth:`construct` does, without parsing the body."""
        body = _body_bytes(raw_body)
        h = _header_str(header)
        if not h:
            raise _fail(SignatureVerificationError.MISSING_HEADER, f"no {SIGNATURE_HEADER} header")
        t, sigs = self._parse(h)
        key = _key(secret)
        _check_timestamp(t, now, tolerance)
        want = _mac(key, str(t).encode("ascii"), body)
        # Compare with every signature (no early exit), each in constant time.
        ok = False
        for s in sigs:
            ok = hmac.compare_digest(s, want) or ok
        if not ok:
            raise _fail(
                SignatureVerificationError.NO_MATCHING_SIGNATURE,
                "no signature matches the body and secret (is raw_body exactly the bytes received, and the secret this endpoint's?)",
            )

    @staticmethod
    def _parse(header: str) -> Tuple[int, List[bytes]]:
        if len(header) > _MAX_HEADER_LEN:
            raise _fail(SignatureVerificationError.MALFORMED_HEADER, f"header longer than {_MAX_HEADER_LEN} bytes")
        t: Optional[int] = None
        sigs: List[bytes] = []
        for part in header.split(","):
            k, sep, v = part.strip().partition("=")
            if not sep:
                continue
            if k == "t":
                if t is not None:
                    raise _fail(SignatureVerificationError.MALFORMED_HEADER, "more than one timestamp")
                n = _parse_int64(v)
                if n is None:
                    raise _fail(SignatureVerificationError.MALFORMED_HEADER, "timestamp is not an integer")
                t = n
            elif k == "v1":
                if len(sigs) < _MAX_SIGNATURES and _HEX64.match(v):
                    sigs.append(bytes.fromhex(v))
        if t is None:
            raise _fail(SignatureVerificationError.MALFORMED_HEADER, "no timestamp")
        if not sigs:
            raise _fail(SignatureVerificationError.NO_V1_SIGNATURE)
        return t, sigs

    def verify_standard(
        self,
        raw_body: RawBody,
        headers: Mapping[str, str],
        secret: str,
        tolerance: Tolerance = DEFAULT_TOLERANCE,
        *,
        now: Now = None,
    ) -> None:
        """Verifies the Standard Webhooks headers of a delivery.

        ``headers`` is any mapping of the request's headers (a dict, or
        ``BaseHTTPRequestHandler.headers``); names are matched case-insensitively.
        Raises :class:`SignatureVerificationError`.
        """
        body = _body_bytes(raw_body)
        h = _lower_headers(headers)
        msg_id = h.get("webhook-id", "")
        ts = h.get("webhook-timestamp", "")
        sig_header = h.get("webhook-signature", "")
        if not msg_id or not ts or not sig_header:
            raise _fail(
                SignatureVerificationError.MISSING_HEADER,
                "webhook-id, webhook-timestamp and webhook-signature are required",
            )
        if len(sig_header) > _MAX_HEADER_LEN or len(msg_id) > _MAX_HEADER_LEN:
            raise _fail(SignatureVerificationError.MALFORMED_HEADER, "header too long")
        t = _parse_int64(ts)
        if t is None:
            raise _fail(SignatureVerificationError.MALFORMED_HEADER, "webhook-timestamp is not an integer")
        key = _key(secret)
        _check_timestamp(t, now, tolerance)
        sigs: List[bytes] = []
        for f in sig_header.split():
            if len(sigs) == _MAX_SIGNATURES:
                break
            version, sep, sig = f.partition(",")
            if not sep or version != "v1":
                continue
            try:
                sigs.append(base64.b64decode(sig, validate=True))
            except (binascii.Error, ValueError):
                continue
        if not sigs:
            raise _fail(SignatureVerificationError.NO_V1_SIGNATURE)
        want = _mac(key, msg_id.encode("utf-8"), ts.encode("utf-8"), body)
        ok = False
        for s in sigs:
            ok = hmac.compare_digest(s, want) or ok
        if not ok:
            raise _fail(
                SignatureVerificationError.NO_MATCHING_SIGNATURE,
                "no signature matches the id, timestamp, body and secret",
            )

    def construct_standard(
        self,
        raw_body: RawBody,
        headers: Mapping[str, str],
        secret: str,
        tolerance: Tolerance = DEFAULT_TOLERANCE,
        *,
        now: Now = None,
    ) -> Event:
        """:meth:`verify_standard`, then the event, as :meth:`construct` returns it."""
        body = _body_bytes(raw_body)
        self.verify_standard(body, headers, secret, tolerance, now=now)
        return _event(body)

    def sign(self, raw_body: RawBody, secret: str, *, timestamp: Optional[int] = None) -> str:
        """The ``service-signature`` header value for ``raw_body`` signed with ``secret``
        at ``timestamp`` (now by default): for testing your receiver."""
        body = _body_bytes(raw_body)
        t = _timestamp(timestamp)
        return f"t={t},v1={_mac(_key(secret), str(t).encode('ascii'), body).hex()}"

    def sign_standard(
        self, raw_body: RawBody, secret: str, *, msg_id: str, timestamp: Optional[int] = None
    ) -> Dict[str, str]:
        """The Standard Webhooks headers for ``raw_body`` as the server sends them: for testing."""
        body = _body_bytes(raw_body)
        if not isinstance(msg_id, str) or not msg_id:
            raise ConfigurationError("msg_id", "msg_id must be a non-empty string (the event's id)")
        t = str(_timestamp(timestamp))
        sig = base64.b64encode(_mac(_key(secret), msg_id.encode("utf-8"), t.encode("ascii"), body)).decode("ascii")
        return {"webhook-id": msg_id, "webhook-timestamp": t, "webhook-signature": "v1," + sig}

    def __repr__(self) -> str:
        return "settleflow.webhooks"


#: The shared verifier: ``settleflow.webhooks.construct(...)``.
webhooks = Webhooks()
