"""The exceptions the library raises. Every one is a :class:`SettleflowError`.

None of them ever holds the API key: messages that come from the server are
redacted before they are stored, and the exceptions keep no reference to the
client or to the request headers.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, cast

__all__ = [
    "SettleflowError",
    "APIError",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "PaymentError",
    "InsufficientFundsError",
    "NotFoundError",
    "ConflictError",
    "IdempotencyError",
    "RateLimitError",
    "APIConnectionError",
    "APITimeoutError",
    "SignatureVerificationError",
    "ConfigurationError",
    "Headers",
]


class Headers(Mapping[str, str]):
    """Response headers: a read-only mapping with case-insensitive names.

    A header sent more than once keeps its values joined with ", " (as HTTP
    allows); names are stored in lower case.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Any = ()) -> None:
        merged: Dict[str, str] = {}
        pairs: Iterable[Tuple[Any, Any]] = cast(Mapping[Any, Any], items).items() if isinstance(items, Mapping) else items
        for name, value in pairs:
            key = str(name).lower()
            merged[key] = merged[key] + ", " + str(value) if key in merged else str(value)
        self._items = merged

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


class SettleflowError(Exception):
    """The base of every error this library raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class APIError(SettleflowError):
    """The API answered with an error status (4xx or 5xx).

    Attributes mirror the error body ``{"error": {"type", "code", "message",
    "param", "requestId"}}``: ``status`` is the HTTP status, ``param`` the
    request parameter at fault (for example ``"payload"``), ``request_id``
    the ``Request-Id`` to quote to support, ``headers`` the response headers.
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        type: Optional[str] = None,
        code: Optional[str] = None,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        headers: Optional[Headers] = None,
        body: Optional[Any] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.request_id = request_id
        self.headers: Headers = headers if headers is not None else Headers()
        self.body = body
        #: How many attempts the client made before giving up (1 if it did not retry).
        self.attempts = 1

    def __str__(self) -> str:
        parts: List[str] = []
        if self.status is not None:
            parts.append(str(self.status))
        if self.type:
            parts.append(self.type)
        if self.code:
            parts.append(self.code)
        head = " ".join(parts)
        text = f"{head}: {self.message}" if head else self.message
        if self.param:
            text += f" (param: {self.param})"
        if self.request_id:
            text += f" [request {self.request_id}]"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, type={self.type!r}, code={self.code!r}, "
            f"param={self.param!r}, message={self.message!r}, request_id={self.request_id!r})"
        )


class InvalidRequestError(APIError):
    """400 (and other invalid_request_error answers): a missing, unknown or invalid parameter; ``param`` names it.

    Also raised before any request is sent when an argument of a request cannot
    be sent at all (a ``payload`` that is not a dict of JSON values, an empty
    ``id``, an ``idempotency_key`` a header cannot carry): then ``status`` and
    ``request_id`` are None, ``type`` is ``invalid_request_error``, ``code``
    ``parameter_invalid`` and ``param`` the argument's name.
    """


def invalid_argument(param: str, message: str) -> InvalidRequestError:
    """The :class:`InvalidRequestError` for a request argument refused before sending."""
    return InvalidRequestError(message, type="invalid_request_error", code="parameter_invalid", param=param)


class AuthenticationError(APIError):
    """401: the API key is missing, malformed, unknown, revoked or expired."""


class PermissionDeniedError(APIError):
    """403: the key may not do this (for example ``livemode_not_configured``)."""


class PaymentError(APIError):
    """402 ``payment_error``: the customer cannot pay for what was asked; ``code``
    says why (``insufficient_funds`` is an :class:`InsufficientFundsError`)."""


class InsufficientFundsError(PaymentError):
    """402 ``insufficient_funds``: the customer's available balance does not
    cover the quote; nothing was created.

    ``available`` is the customer's available balance and ``amount`` what the
    request needed (the quote), both integers of minor units of ``currency``;
    ``customer_id`` is the customer. Each is None if the answer did not carry it.
    """

    def __init__(
        self,
        message: str,
        *,
        available: Optional[int] = None,
        amount: Optional[int] = None,
        currency: Optional[str] = None,
        customer_id: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.available = available
        self.amount = amount
        self.currency = currency
        self.customer_id = customer_id

    def __repr__(self) -> str:
        return (
            f"InsufficientFundsError(status={self.status!r}, code={self.code!r}, available={self.available!r}, "
            f"amount={self.amount!r}, currency={self.currency!r}, customer_id={self.customer_id!r}, "
            f"message={self.message!r}, request_id={self.request_id!r})"
        )


class NotFoundError(InvalidRequestError):
    """404 ``resource_missing``: no such workflow, refund, product or event."""


class ConflictError(APIError):
    """409: the request conflicts with the resource's state: a cancel of a
    workflow that is no longer Pending (``code`` names its status:
    ``workflow_running``, …), a refund of a workflow that is not Settled
    (``workflow_not_settled``), a refund or test funding where charges are not
    paid from customer balances (``refunds_not_supported``)."""


class IdempotencyError(ConflictError):
    """409 ``idempotency_key_reused``: the Idempotency-Key was used with another body."""


class RateLimitError(APIError):
    """429: a rate limit is exceeded.

    ``retry_after`` is the number of seconds the server asked to wait (from
    ``Retry-After``, or ``X-RateLimit-Reset`` when that is absent), or None;
    ``headers`` carries ``X-RateLimit-Limit``, ``-Remaining`` and ``-Reset``.
    """

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class APIConnectionError(SettleflowError):
    """The request did not get an answer: connection refused or reset, TLS
    failure, or the connection closed before a response arrived.

    A create that fails this way may or may not have taken effect; retrying
    it with the same ``idempotency_key`` is safe (the client already did, up
    to ``max_retries`` times). The underlying exception is ``__cause__``
    (without its traceback).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.attempts = 1


class APITimeoutError(APIConnectionError):
    """The request did not complete within the client's ``timeout``."""


class SignatureVerificationError(SettleflowError):
    """A webhook delivery did not verify. A receiver answers 400 whatever the reason.

    ``reason`` is one of the constants below (the same strings in every
    settleflow library and in the shared test vectors); ``detail`` adds
    context and never contains the secret.
    """

    MISSING_HEADER = "missing_header"
    MALFORMED_HEADER = "malformed_header"
    NO_V1_SIGNATURE = "no_v1_signature"
    TIMESTAMP_OUTSIDE_TOLERANCE = "timestamp_outside_tolerance"
    NO_MATCHING_SIGNATURE = "no_matching_signature"
    INVALID_PAYLOAD = "invalid_payload"
    BAD_SECRET = "bad_secret"
    #: raw_body was not a str or bytes: the body was parsed before verification.
    BODY_NOT_RAW = "body_not_raw"

    def __init__(self, reason: str, detail: str = "") -> None:
        message = "webhook signature verification failed: " + reason
        if detail:
            message += ": " + detail
        super().__init__(message)
        self.reason = reason
        self.detail = detail

    def __repr__(self) -> str:
        return f"SignatureVerificationError(reason={self.reason!r}, detail={self.detail!r})"


class ConfigurationError(SettleflowError, ValueError):
    """The client or a webhook helper was given a setting it cannot use:
    ``api_key``, ``base_url``, ``timeout``, ``max_retries``, ``ca``, or a webhook
    helper's ``tolerance``, ``now``, ``timestamp`` or ``msg_id``. Raised where
    the setting is passed, before anything is sent. ``param`` names the setting.
    Also a :class:`ValueError`.
    """

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param

    def __repr__(self) -> str:
        return f"ConfigurationError(param={self.param!r}, message={self.message!r})"
