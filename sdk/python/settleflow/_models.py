"""The API's objects as typed, immutable dataclasses.

Attributes are snake_case over the camelCase wire (``customerId`` is
``customer_id``). What the client sent or the product returned — ``payload``,
``result``, a product's ``payload_schema`` and ``example`` — is kept exactly as
it came (keys untouched, plain ``json`` values). Timestamps are aware UTC
:class:`datetime.datetime` objects.

Margins (``margin.target``, ``margin.achieved``, ``Product.target_margin``) are
:class:`decimal.Decimal`: the wire carries a ratio with at most four decimals
(``0.2875``) and a Decimal keeps exactly those digits, so ``margin.achieved *
10000`` is the integer count of basis points the server computed, and sums or
comparisons never pick up binary floating-point noise. ``float(m)`` converts
when a float is wanted.

Every object keeps the whole wire object it was built from in ``raw`` (fields
this version does not know included), so a newer server never breaks an older
client.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from decimal import Decimal
from typing import Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, TypeVar, cast

__all__ = [
    "Money",
    "Margin",
    "QuoteMargin",
    "Settlement",
    "Failure",
    "Workflow",
    "Quote",
    "Product",
    "Event",
    "EventData",
    "Page",
    "WORKFLOW_STATUSES",
    "EVENT_TYPES",
]

#: Every workflow status, in the order a workflow goes through them.
WORKFLOW_STATUSES = ("Pending", "Running", "Settling", "Settled", "Failed", "Canceled")
#: Every event type.
EVENT_TYPES = ("workflow.completed", "workflow.failed", "workflow.canceled")

T = TypeVar("T")


class DecodeError(Exception):
    """A wire object does not have the shape this client expects (internal)."""


# ---------------------------------------------------------------- wire readers


def _field(d: Mapping[str, Any], key: str, path: str) -> Any:
    if key not in d:
        raise DecodeError(f"{path}.{key} is missing")
    return d[key]


def _str(d: Mapping[str, Any], key: str, path: str) -> str:
    v = _field(d, key, path)
    if not isinstance(v, str):
        raise DecodeError(f"{path}.{key} is not a string")
    return v


def _int(d: Mapping[str, Any], key: str, path: str) -> int:
    v = _field(d, key, path)
    if isinstance(v, bool) or not isinstance(v, int):
        raise DecodeError(f"{path}.{key} is not an integer")
    return v


def _bool(d: Mapping[str, Any], key: str, path: str) -> bool:
    v = _field(d, key, path)
    if not isinstance(v, bool):
        raise DecodeError(f"{path}.{key} is not a boolean")
    return v


def _ratio(v: Any, where: str) -> Decimal:
    if isinstance(v, bool) or not isinstance(v, (int, Decimal, float)):
        raise DecodeError(f"{where} is not a number")
    return v if isinstance(v, Decimal) else Decimal(str(v))


def _opt_ratio(d: Mapping[str, Any], key: str, path: str) -> Optional[Decimal]:
    v = _field(d, key, path)
    return None if v is None else _ratio(v, f"{path}.{key}")


def _obj(d: Mapping[str, Any], key: str, path: str) -> Dict[str, Any]:
    v = _field(d, key, path)
    if not isinstance(v, dict):
        raise DecodeError(f"{path}.{key} is not an object")
    return cast(Dict[str, Any], v)


def _opt_obj(d: Mapping[str, Any], key: str, path: str, *, may_be_absent: bool = False) -> Optional[Dict[str, Any]]:
    if may_be_absent and key not in d:
        return None
    v = _field(d, key, path)
    if v is None:
        return None
    if not isinstance(v, dict):
        raise DecodeError(f"{path}.{key} is not an object or null")
    return cast(Dict[str, Any], v)


def plain(v: Any) -> Any:
    """A decoded JSON value with every Decimal turned back into the float ``json.loads`` makes."""
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in cast(Dict[str, Any], v).items()}
    if isinstance(v, list):
        return [plain(x) for x in cast(List[Any], v)]
    return v


_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$"
)


def parse_time(s: str) -> _dt.datetime:
    """An RFC 3339 timestamp (any number of fractional digits, as Go writes them)
    as an aware UTC datetime. Digits past microseconds are dropped."""
    m = _TIME.match(s)
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {s!r}")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    if m.group(8):
        tz = _dt.timezone.utc
    else:
        offset = _dt.timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        tz = _dt.timezone(-offset if m.group(9) == "-" else offset)
    if second == 60:  # a leap second: the instant after :59.999999
        second = 59
        micro = 999999
    return _dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz).astimezone(_dt.timezone.utc)


def _time(d: Mapping[str, Any], key: str, path: str) -> _dt.datetime:
    s = _str(d, key, path)
    try:
        return parse_time(s)
    except ValueError as e:
        raise DecodeError(f"{path}.{key}: {e}") from None


def _opt_time(d: Mapping[str, Any], key: str, path: str) -> Optional[_dt.datetime]:
    """A timestamp that may be absent or null (None then); present, it must be RFC 3339."""
    if d.get(key) is None:
        return None
    return _time(d, key, path)


def format_time(t: _dt.datetime) -> str:
    """An aware datetime as RFC 3339 in UTC (a naive one is refused: its zone is unknown)."""
    if t.tzinfo is None or t.utcoffset() is None:
        raise ValueError("a naive datetime has no time zone; pass an aware one (for example datetime.now(timezone.utc))")
    return t.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")


def _empty() -> Dict[str, Any]:
    return {}


def _raw_field() -> Any:
    return dataclasses.field(default_factory=_empty, repr=False, compare=False)


# ---------------------------------------------------------------- objects


@dataclasses.dataclass(frozen=True)
class Money:
    """An amount in minor units: ``Money(amount=1250, currency="usd")`` is 12.50 USD."""

    amount: int
    currency: str

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Money:
        return cls(amount=_int(d, "amount", path), currency=_str(d, "currency", path))


@dataclasses.dataclass(frozen=True)
class Margin:
    """The product's target margin and the margin achieved, as ratios (``Decimal("0.3")`` is 30 %).

    ``achieved`` is ``(quoted - actual cost) / quoted`` with four decimals; None
    until execution reported its cost; it may be negative.
    """

    target: Decimal
    achieved: Optional[Decimal]

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Margin:
        return cls(target=_ratio(_field(d, "target", path), f"{path}.target"), achieved=_opt_ratio(d, "achieved", path))


@dataclasses.dataclass(frozen=True)
class QuoteMargin:
    """A quote's margin: the target only (nothing has run yet)."""

    target: Decimal

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> QuoteMargin:
        return cls(target=_ratio(_field(d, "target", path), f"{path}.target"))


@dataclasses.dataclass(frozen=True)
class Settlement:
    """Where the charge settled on chain."""

    chain_id: int
    network: str
    tx_hash: str
    block_number: int
    confirmations: int
    #: The workflow's share of its batch transaction's gas (``None`` if unknown).
    gas_used: int | None = None
    #: The same share of the fee, in the chain's native unit, as a decimal string.
    fee: str | None = None

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Settlement:
        return cls(
            chain_id=_int(d, "chainId", path),
            network=_str(d, "network", path),
            tx_hash=_str(d, "txHash", path),
            block_number=_int(d, "blockNumber", path),
            confirmations=_int(d, "confirmations", path),
            gas_used=_int(d, "gasUsed", path) if "gasUsed" in d else None,
            fee=_str(d, "fee", path) if "fee" in d else None,
        )


@dataclasses.dataclass(frozen=True)
class Failure:
    """Why a workflow failed: a machine-readable ``code`` and a message."""

    code: str
    message: str

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Failure:
        return cls(code=_str(d, "code", path), message=_str(d, "message", path))


def _opt(d: Mapping[str, Any], key: str, path: str, build: Callable[[Mapping[str, Any], str], T], *, may_be_absent: bool = False) -> Optional[T]:
    o = _opt_obj(d, key, path, may_be_absent=may_be_absent)
    return None if o is None else build(o, f"{path}.{key}")


@dataclasses.dataclass(frozen=True)
class Workflow:
    """A workflow: a product run for a customer, quoted at creation and settled on chain.

    ``status`` is one of :data:`WORKFLOW_STATUSES`. ``payload`` is the input
    exactly as sent; ``result`` the product's output once it ran (else None).
    """

    id: str
    object: str
    livemode: bool
    product: str
    customer_id: str
    payload: Dict[str, Any]
    quoted: Money
    margin: Margin
    status: str
    result: Optional[Dict[str, Any]]
    settlement: Optional[Settlement]
    failure: Optional[Failure]
    created_at: _dt.datetime
    updated_at: _dt.datetime
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "workflow") -> Workflow:
        result = _opt_obj(d, "result", path)
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            product=_str(d, "product", path),
            customer_id=_str(d, "customerId", path),
            payload=plain(_obj(d, "payload", path)),
            quoted=Money.from_wire(_obj(d, "quoted", path), f"{path}.quoted"),
            margin=Margin.from_wire(_obj(d, "margin", path), f"{path}.margin"),
            status=_str(d, "status", path),
            result=None if result is None else plain(result),
            settlement=_opt(d, "settlement", path, Settlement.from_wire),
            failure=_opt(d, "failure", path, Failure.from_wire),
            created_at=_time(d, "createdAt", path),
            updated_at=_time(d, "updatedAt", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Quote:
    """What a create with the same body would quote now; nothing was stored."""

    object: str
    livemode: bool
    product: str
    customer_id: str
    payload: Dict[str, Any]
    quoted: Money
    margin: QuoteMargin
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "quote") -> Quote:
        return cls(
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            product=_str(d, "product", path),
            customer_id=_str(d, "customerId", path),
            payload=plain(_obj(d, "payload", path)),
            quoted=Money.from_wire(_obj(d, "quoted", path), f"{path}.quoted"),
            margin=QuoteMargin.from_wire(_obj(d, "margin", path), f"{path}.margin"),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Product:
    """A catalogue entry: how it is priced and the JSON Schema (2020-12) of its payload."""

    object: str
    name: str
    description: str
    target_margin: Decimal
    minimum_charge: Money
    pricing_summary: str
    payload_schema: Dict[str, Any]
    example: Optional[Dict[str, Any]]
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "product") -> Product:
        example = _opt_obj(d, "example", path)
        return cls(
            object=_str(d, "object", path),
            name=_str(d, "name", path),
            description=_str(d, "description", path),
            target_margin=_ratio(_field(d, "targetMargin", path), f"{path}.targetMargin"),
            minimum_charge=Money.from_wire(_obj(d, "minimumCharge", path), f"{path}.minimumCharge"),
            pricing_summary=_str(d, "pricingSummary", path),
            payload_schema=plain(_obj(d, "payloadSchema", path)),
            example=None if example is None else plain(example),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class EventData:
    """The workflow an event is about, as it was when the event was written.

    ``settlement`` is set on ``workflow.completed``, ``failure`` on
    ``workflow.failed``; each is None otherwise.
    """

    workflow_id: str
    status: str
    quoted: Money
    margin: Margin
    result: Optional[Dict[str, Any]]
    settlement: Optional[Settlement]
    failure: Optional[Failure]
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "event.data") -> EventData:
        result = _opt_obj(d, "result", path, may_be_absent=True)
        return cls(
            workflow_id=_str(d, "workflowId", path),
            status=_str(d, "status", path),
            quoted=Money.from_wire(_obj(d, "quoted", path), f"{path}.quoted"),
            margin=Margin.from_wire(_obj(d, "margin", path), f"{path}.margin"),
            result=None if result is None else plain(result),
            settlement=_opt(d, "settlement", path, Settlement.from_wire, may_be_absent=True),
            failure=_opt(d, "failure", path, Failure.from_wire, may_be_absent=True),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Event:
    """An event: ``workflow.completed`` (the workflow is Settled), ``workflow.failed``
    or ``workflow.canceled``; the body of a webhook delivery, or read back with
    ``events.fetch``/``events.list``."""

    id: str
    object: str
    type: str
    livemode: bool
    #: When the event was written. The server always sends it; a webhook body
    #: without it (or with null) is still accepted, as in the Go and Node.js
    #: libraries, and then this is None. Order and dedupe on ``id``, not on it.
    created_at: Optional[_dt.datetime]
    data: EventData
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "event") -> Event:
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            type=_str(d, "type", path),
            livemode=_bool(d, "livemode", path),
            created_at=_opt_time(d, "createdAt", path),
            data=EventData.from_wire(_obj(d, "data", path), f"{path}.data"),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list, newest first. Iterating a page iterates ``data``.

    ``has_more`` says whether another page follows in the direction of the
    request; ``list_auto_paging`` follows them for you.
    """

    data: List[T]
    has_more: bool
    url: str
    object: str = "list"

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], item: Callable[[Mapping[str, Any], str], T]) -> Page[T]:
        raw_items = _field(d, "data", "list")
        if not isinstance(raw_items, list):
            raise DecodeError("list.data is not an array")
        items: List[T] = []
        for i, x in enumerate(cast(List[Any], raw_items)):
            if not isinstance(x, dict):
                raise DecodeError(f"list.data[{i}] is not an object")
            items.append(item(cast(Dict[str, Any], x), f"list.data[{i}]"))
        return cls(data=items, has_more=_bool(d, "hasMore", "list"), url=_str(d, "url", "list"), object=_str(d, "object", "list"))
