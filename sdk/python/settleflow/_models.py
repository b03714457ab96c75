"""The API's objects as typed, immutable dataclasses.

Attributes are snake_case over the camelCase wire (``customerId`` is
``customer_id``). What the client sent or the product returned — ``payload``,
``result``, a product's ``payload_schema`` and ``example`` — is kept exactly as
it came (keys untouched, plain ``json`` values). Timestamps are aware UTC
:class:`datetime.datetime` objects.

Margins and other ratios (``margin.target``, ``margin.achieved``,
``Product.target_margin``, ``margin_floor``, ``Pricing.markup``,
``Pricing.base_share``) are :class:`decimal.Decimal`: the wire carries a ratio with at most four decimals
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
    "Pricing",
    "Cost",
    "CostItem",
    "Outcome",
    "OutcomeStep",
    "Margin",
    "QuoteMargin",
    "Settlement",
    "Failure",
    "Workflow",
    "Quote",
    "Task",
    "TASK_STATUSES",
    "Product",
    "Event",
    "EventData",
    "Refund",
    "Customer",
    "Balance",
    "DepositInfo",
    "Deposit",
    "Page",
    "MarginRow",
    "MarginReport",
    "MARGIN_GROUPINGS",
    "WORKFLOW_STATUSES",
    "REFUND_STATUSES",
    "EVENT_TYPES",
    "PRICING_MODELS",
    "COST_CATEGORIES",
]

#: Every workflow status, in the order a workflow goes through them.
WORKFLOW_STATUSES = ("Pending", "Running", "Settling", "Settled", "Failed", "Canceled")
#: Every refund status: Pending until the chain confirms it (Succeeded) or refuses it for good (Failed).
REFUND_STATUSES = ("Pending", "Succeeded", "Failed")
#: What a margins report groups Settled workflows by (``day``: the UTC day a workflow was created).
MARGIN_GROUPINGS = ("product", "customer", "day")
#: Every event type. ``workflow.margin_below_floor``: a workflow finished
#: having spent more than its margin floor's budget (it goes on to be charged as usual).
EVENT_TYPES = (
    "workflow.completed",
    "workflow.failed",
    "workflow.canceled",
    "workflow.margin_below_floor",
    "refund.succeeded",
    "refund.failed",
    "customer.funded",
    "customer.owner_set",
    "customer.withdrawal_requested",
)
#: The pricing models: ``fixed`` charges the quote; ``capped`` cost plus markup,
#: at least the minimum charge, at most the quote; ``success_fee`` the quote when
#: the result meets the success criteria, else nothing; ``hybrid`` a base share
#: of the quote always and the rest on success.
PRICING_MODELS = ("fixed", "capped", "success_fee", "hybrid")
#: The categories of a cost item.
COST_CATEGORIES = ("model", "tools", "compute", "human", "other")

#: A task's ``status``: ``claimed`` while a worker holds it, then ``completed`` or ``failed``.
TASK_STATUSES = ("claimed", "completed", "failed")
_WORKFLOW_EVENTS = frozenset(t for t in EVENT_TYPES if t.startswith("workflow."))
_REFUND_EVENTS = frozenset(t for t in EVENT_TYPES if t.startswith("refund."))

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


def _opt_str(d: Mapping[str, Any], key: str, path: str) -> Optional[str]:
    """A string that may be absent or null (None then)."""
    return None if d.get(key) is None else _str(d, key, path)


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


def _absent_ratio(d: Mapping[str, Any], key: str, path: str) -> Optional[Decimal]:
    """A ratio that may be absent or null (None then)."""
    v = d.get(key)
    return None if v is None else _ratio(v, f"{path}.{key}")


def _list(d: Mapping[str, Any], key: str, path: str, build: Callable[[Mapping[str, Any], str], T]) -> List[T]:
    v = _field(d, key, path)
    if not isinstance(v, list):
        raise DecodeError(f"{path}.{key} is not an array")
    out: List[T] = []
    for i, x in enumerate(cast(List[Any], v)):
        if not isinstance(x, dict):
            raise DecodeError(f"{path}.{key}[{i}] is not an object")
        out.append(build(cast(Dict[str, Any], x), f"{path}.{key}[{i}]"))
    return out


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
class Pricing:
    """A pricing model (``model`` one of :data:`PRICING_MODELS`): how much of the quote is charged.

    ``markup`` (a ratio: ``Decimal("0.2")`` is cost + 20 %) and
    ``minimum_charge`` are set for ``capped`` pricing, ``base_share`` (the
    part of the quote charged whatever the outcome) for ``hybrid``; None
    otherwise.
    """

    model: str
    markup: Optional[Decimal] = None
    minimum_charge: Optional[Money] = None
    base_share: Optional[Decimal] = None

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Pricing:
        return cls(
            model=_str(d, "model", path),
            markup=_absent_ratio(d, "markup", path),
            minimum_charge=_opt(d, "minimumCharge", path, Money.from_wire, may_be_absent=True),
            base_share=_absent_ratio(d, "baseShare", path),
        )


#: The pricing of an object from a server that predates pricing models.
_FIXED = Pricing(model="fixed")


def _pricing(d: Mapping[str, Any], path: str) -> Pricing:
    p = _opt(d, "pricing", path, Pricing.from_wire, may_be_absent=True)
    return _FIXED if p is None else p


def _criteria(d: Mapping[str, Any], path: str) -> Optional[Dict[str, Any]]:
    o = _opt_obj(d, "successCriteria", path, may_be_absent=True)
    return None if o is None else plain(o)


@dataclasses.dataclass(frozen=True)
class CostItem:
    """One line of a workflow's cost: what was spent in one ``category`` (one of
    :data:`COST_CATEGORIES`) at one ``provider`` (may be ``""``). ``units`` is how
    much was used in the provider's unit (informational); ``amount`` is in minor
    units of the cost's currency."""

    category: str
    provider: str
    units: int
    amount: int

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> CostItem:
        return cls(
            category=_str(d, "category", path),
            provider=_str(d, "provider", path),
            units=_int(d, "units", path),
            amount=_int(d, "amount", path),
        )


@dataclasses.dataclass(frozen=True)
class Cost:
    """What a workflow's execution cost, in minor units of ``currency``: the sum of
    its ``items`` (empty when the product reported only a total)."""

    amount: int
    currency: str
    items: List[CostItem]

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Cost:
        return cls(
            amount=_int(d, "amount", path),
            currency=_str(d, "currency", path),
            items=_list(d, "items", path, CostItem.from_wire),
        )


@dataclasses.dataclass(frozen=True)
class OutcomeStep:
    """One criterion's verdict, in tree order (a combinator before its children).

    ``node`` is the criterion's place in the tree (``""`` for the root,
    ``"criteria[1]"``), ``path`` the JSON Pointer a leaf tested (``""`` for the
    whole result and for combinators), ``type`` the criterion's type and
    ``reason`` why, for people."""

    node: str
    path: str
    type: str
    matched: bool
    reason: str

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> OutcomeStep:
        return cls(
            node=_str(d, "node", path),
            path=_str(d, "path", path),
            type=_str(d, "type", path),
            matched=_bool(d, "matched", path),
            reason=_str(d, "reason", path),
        )


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The verdict of a workflow's success criteria on its result, with every criterion's step."""

    success: bool
    trace: List[OutcomeStep]

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Outcome:
        return cls(success=_bool(d, "success", path), trace=_list(d, "trace", path, OutcomeStep.from_wire))


@dataclasses.dataclass(frozen=True)
class Workflow:
    """A workflow: a product run for a customer, quoted at creation and settled on chain.

    ``status`` is one of :data:`WORKFLOW_STATUSES`. ``payload`` is the input
    exactly as sent; ``result`` the product's output once it ran (else None).

    Outcome pricing: ``pricing`` is the model the workflow was created under,
    ``success_criteria`` the criteria tree its result is judged by (the
    request's, else the product's; None if none) and ``margin_floor`` the floor
    in force (None if none). Once it ran, ``charged`` is what it is charged (at
    most ``quoted``; 0 for an outcome that earns nothing; None before, and when
    it failed), ``cost`` what the execution cost with its items, and
    ``outcome`` the criteria's verdict (None without criteria).
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
    #: The sum of the workflow's Succeeded refunds (amount 0 when none, and
    #: from a server that predates refunds).
    refunded: Money = Money(amount=0, currency="usd")
    #: Absent from a server that predates pricing models: fixed, no criteria, no floor.
    pricing: Pricing = _FIXED
    success_criteria: Optional[Dict[str, Any]] = None
    margin_floor: Optional[Decimal] = None
    charged: Optional[Money] = None
    cost: Optional[Cost] = None
    outcome: Optional[Outcome] = None
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "workflow") -> Workflow:
        result = _opt_obj(d, "result", path)
        quoted = Money.from_wire(_obj(d, "quoted", path), f"{path}.quoted")
        refunded = _opt(d, "refunded", path, Money.from_wire, may_be_absent=True)
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            product=_str(d, "product", path),
            customer_id=_str(d, "customerId", path),
            payload=plain(_obj(d, "payload", path)),
            quoted=quoted,
            margin=Margin.from_wire(_obj(d, "margin", path), f"{path}.margin"),
            status=_str(d, "status", path),
            result=None if result is None else plain(result),
            settlement=_opt(d, "settlement", path, Settlement.from_wire),
            failure=_opt(d, "failure", path, Failure.from_wire),
            created_at=_time(d, "createdAt", path),
            updated_at=_time(d, "updatedAt", path),
            refunded=refunded if refunded is not None else Money(amount=0, currency=quoted.currency),
            pricing=_pricing(d, path),
            success_criteria=_criteria(d, path),
            margin_floor=_absent_ratio(d, "marginFloor", path),
            charged=_opt(d, "charged", path, Money.from_wire, may_be_absent=True),
            cost=_opt(d, "cost", path, Cost.from_wire, may_be_absent=True),
            outcome=_opt(d, "outcome", path, Outcome.from_wire, may_be_absent=True),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Refund:
    """A refund of part or all of a Settled workflow's charge, back to its customer's balance.

    ``amount`` is what is given back, in minor units of ``currency``;
    ``status`` is one of :data:`REFUND_STATUSES`; ``settlement`` is the
    refund's transaction once there is one (it may be set while Pending),
    ``failure`` why it Failed (nothing was given back).
    """

    id: str
    object: str
    livemode: bool
    workflow_id: str
    amount: int
    currency: str
    #: As given at creation; "" if none.
    reason: str
    status: str
    settlement: Optional[Settlement]
    failure: Optional[Failure]
    created_at: _dt.datetime
    updated_at: _dt.datetime
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "refund") -> Refund:
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            workflow_id=_str(d, "workflowId", path),
            amount=_int(d, "amount", path),
            currency=_str(d, "currency", path),
            reason=_opt_str(d, "reason", path) or "",
            status=_str(d, "status", path),
            settlement=_opt(d, "settlement", path, Settlement.from_wire, may_be_absent=True),
            failure=_opt(d, "failure", path, Failure.from_wire, may_be_absent=True),
            created_at=_time(d, "createdAt", path),
            updated_at=_time(d, "updatedAt", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Balance:
    """A customer's funds in minor units of ``currency``.

    ``available = on_chain - reserved - pending_withdrawal`` is what new
    workflows may reserve; it is negative when charges admitted before a
    withdrawal request exceed what the request left.
    """

    #: Deposits less withdrawals less charges plus refunds, as confirmed on chain.
    on_chain: int
    #: The quotes of the customer's workflows not yet Settled, Failed or Canceled.
    reserved: int
    #: Balance under withdrawal notice.
    pending_withdrawal: int
    available: int
    currency: str

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Balance:
        return cls(
            on_chain=_int(d, "onChain", path),
            reserved=_int(d, "reserved", path),
            pending_withdrawal=_int(d, "pendingWithdrawal", path),
            available=_int(d, "available", path),
            currency=_str(d, "currency", path),
        )


@dataclasses.dataclass(frozen=True)
class DepositInfo:
    """Where to deposit for a customer: the settlement contract on ``network`` and the customer's key in it."""

    chain_id: int
    network: str
    #: The settlement contract's address (``0x…``).
    contract: str
    #: The token deposited (``0x…``).
    token: str
    #: The customer's key in the contract: ``0x`` and 64 hex digits.
    customer_ref: str

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> DepositInfo:
        return cls(
            chain_id=_int(d, "chainId", path),
            network=_str(d, "network", path),
            contract=_str(d, "contract", path),
            token=_str(d, "token", path),
            customer_ref=_str(d, "customerRef", path),
        )


@dataclasses.dataclass(frozen=True)
class Customer:
    """A customer's prepaid funds in the key's environment.

    ``deposit`` says where to deposit for the customer; it is None where
    charges are not paid from customer balances. ``owner`` is the address
    that owns the balance in the contract (it alone can withdraw), or None
    while it has none.
    """

    id: str
    object: str
    livemode: bool
    balance: Balance
    deposit: Optional[DepositInfo]
    owner: Optional[str] = None
    #: The change of owner proposed on chain (the address takes the balance
    #: at ``effective_at`` unless the owner cancels first), or None.
    owner_change: Optional[OwnerChange] = None
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "customer") -> Customer:
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            balance=Balance.from_wire(_obj(d, "balance", path), f"{path}.balance"),
            deposit=_opt(d, "deposit", path, DepositInfo.from_wire, may_be_absent=True),
            owner=_opt_str(d, "owner", path),
            owner_change=_opt(d, "ownerChange", path, OwnerChange.from_wire, may_be_absent=True),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class OwnerChange:
    """A change of a balance's owner proposed on chain (``Customer.owner_change``),
    or one a ``customer.owner_change_proposed`` / ``customer.owner_change_canceled``
    event reports: ``address``, checksummed hex, and ``effective_at`` (None on a
    cancel); ``tx_hash`` and ``block_number`` are the event's (None on a customer)."""

    address: str
    effective_at: Optional[_dt.datetime] = None
    tx_hash: Optional[str] = None
    block_number: Optional[int] = None

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> OwnerChange:
        bn = d.get("blockNumber")
        return cls(
            address=_str(d, "address", path),
            effective_at=_opt_time(d, "effectiveAt", path),
            tx_hash=_opt_str(d, "txHash", path),
            block_number=None if bn is None else _int(d, "blockNumber", path),
        )


@dataclasses.dataclass(frozen=True)
class OwnerGrant:
    """An unsigned owner grant, for the customer's wallet to sign:
    ``typed_data`` is the EIP-712 typed data (pass ``json.dumps(typed_data)``
    to ``eth_signTypedData_v4``)."""

    object: str
    livemode: bool
    customer_id: str
    #: ``0x`` and lowercase hex.
    address: str
    #: 32 random bytes, ``0x``-hex: the grant's one-time key.
    nonce: str
    origin: str
    #: Unix seconds.
    deadline: int
    typed_data: Dict[str, Any]
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "owner_grant") -> OwnerGrant:
        return cls(
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            customer_id=_str(d, "customerId", path),
            address=_str(d, "address", path),
            nonce=_str(d, "nonce", path),
            origin=_str(d, "origin", path),
            deadline=_int(d, "deadline", path),
            typed_data=_obj(d, "typedData", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class OwnerChange:
    """An owner grant the operator sent to the chain. ``status`` is
    ``"sent"``; ``effective`` is ``"now"`` (the customer had no owner) or
    ``"after_notice"`` (it had one: the new address owns the balance after
    the withdrawal notice unless the current owner cancels)."""

    object: str
    livemode: bool
    customer_id: str
    address: str
    status: str
    tx_hash: str
    effective: str
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "owner_change") -> OwnerChange:
        return cls(
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            customer_id=_str(d, "customerId", path),
            address=_str(d, "address", path),
            status=_str(d, "status", path),
            tx_hash=_str(d, "txHash", path),
            effective=_str(d, "effective", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Deposit:
    """The confirmed deposit a ``customer.funded`` event reports."""

    amount: Money
    tx_hash: str
    block_number: int

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> Deposit:
        return cls(
            amount=Money.from_wire(_obj(d, "amount", path), f"{path}.amount"),
            tx_hash=_str(d, "txHash", path),
            block_number=_int(d, "blockNumber", path),
        )


@dataclasses.dataclass(frozen=True)
class OwnerSet:
    """The owner a ``customer.owner_set`` event reports: ``address``, checksummed
    hex, is the one address that can withdraw the balance."""

    address: str
    tx_hash: str
    block_number: int

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> OwnerSet:
        return cls(
            address=_str(d, "address", path),
            tx_hash=_str(d, "txHash", path),
            block_number=_int(d, "blockNumber", path),
        )


@dataclasses.dataclass(frozen=True)
class WithdrawalRequest:
    """The request a ``customer.withdrawal_requested`` event reports: the
    ``amount`` put under notice (it replaces any earlier request) and
    ``available_at``, when the owner can withdraw it (None if not said)."""

    amount: Money
    tx_hash: str
    block_number: int
    available_at: Optional[_dt.datetime] = None

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str) -> WithdrawalRequest:
        return cls(
            amount=Money.from_wire(_obj(d, "amount", path), f"{path}.amount"),
            tx_hash=_str(d, "txHash", path),
            block_number=_int(d, "blockNumber", path),
            available_at=_opt_time(d, "availableAt", path),
        )


@dataclasses.dataclass(frozen=True)
class PortalSession:
    """A one-time link to the customer portal: send the customer to ``url``
    before ``expires_at``. The link is in this answer only (the server keeps a
    hash of it): do not log it. ``id`` (``ps_…``) names it and is no secret."""

    object: str
    id: str
    customer_id: str
    livemode: bool
    url: str
    expires_at: _dt.datetime
    raw: Dict[str, Any] = _raw_field()

    def __repr__(self) -> str:
        return f"PortalSession(id={self.id!r}, customer_id={self.customer_id!r}, livemode={self.livemode!r}, expires_at={self.expires_at!r})"

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "portal_session") -> PortalSession:
        return cls(
            object=_str(d, "object", path),
            id=_str(d, "id", path),
            customer_id=_str(d, "customerId", path),
            livemode=_bool(d, "livemode", path),
            url=_str(d, "url", path),
            expires_at=_time(d, "expiresAt", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Quote:
    """What a create with the same body would quote now; nothing was stored.

    ``quoted`` is the price, the most the workflow can be charged; ``pricing``
    the product's model; ``success_criteria`` and ``margin_floor`` those in
    force (the request's, else the product's; None if none); ``budget`` the
    most the execution may spend and keep the floor at ``quoted``,
    ``floor(quoted × (1 − margin_floor))`` (None without a floor).
    """

    object: str
    livemode: bool
    product: str
    customer_id: str
    payload: Dict[str, Any]
    quoted: Money
    margin: QuoteMargin
    pricing: Pricing = _FIXED
    success_criteria: Optional[Dict[str, Any]] = None
    margin_floor: Optional[Decimal] = None
    budget: Optional[Money] = None
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
            pricing=_pricing(d, path),
            success_criteria=_criteria(d, path),
            margin_floor=_absent_ratio(d, "marginFloor", path),
            budget=_opt(d, "budget", path, Money.from_wire, may_be_absent=True),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Product:
    """A catalogue entry: how it is priced and the JSON Schema (2020-12) of its payload.

    ``pricing`` is its pricing model, ``success_criteria`` the criteria its
    workflows are judged by unless a create passes its own (None if none) and
    ``margin_floor`` the least margin a workflow must keep at the price quoted
    (None if none).
    """

    object: str
    name: str
    description: str
    target_margin: Decimal
    minimum_charge: Money
    pricing_summary: str
    payload_schema: Dict[str, Any]
    example: Optional[Dict[str, Any]]
    pricing: Pricing = _FIXED
    success_criteria: Optional[Dict[str, Any]] = None
    margin_floor: Optional[Decimal] = None
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
            pricing=_pricing(d, path),
            success_criteria=_criteria(d, path),
            margin_floor=_absent_ratio(d, "marginFloor", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class EventData:
    """The ``data`` of an event; which fields are set depends on the event's type.

    * ``workflow.*``: the workflow as it was when the event was written:
      ``workflow_id``, ``customer_id`` (absent from events recorded before
      it was added), ``status``, ``quoted``, ``margin``, and ``result``,
      ``settlement`` (on ``workflow.completed``) or ``failure`` (on
      ``workflow.failed``); ``pricing``, ``charged``, ``cost`` and ``outcome``
      when known.
    * ``refund.succeeded`` and ``refund.failed``: ``workflow_id`` and ``refund``.
    * ``customer.funded``: ``customer_id``, ``deposit`` (the confirmed deposit)
      and ``balance`` (the customer's balance after it).
    * ``customer.owner_set``: ``customer_id``, ``owner`` (the owner set on
      chain) and ``balance``.
    * ``customer.withdrawal_requested``: ``customer_id``, ``withdrawal`` (the
      amount put under notice, and when it can be withdrawn) and ``balance``
      (after it: ``pending_withdrawal`` is the amount).

    The others are None. ``raw`` is the whole ``data`` object as sent.
    """

    workflow_id: Optional[str]
    status: Optional[str]
    quoted: Optional[Money]
    margin: Optional[Margin]
    result: Optional[Dict[str, Any]]
    settlement: Optional[Settlement]
    failure: Optional[Failure]
    refund: Optional[Refund] = None
    customer_id: Optional[str] = None
    deposit: Optional[Deposit] = None
    balance: Optional[Balance] = None
    pricing: Optional[Pricing] = None
    charged: Optional[Money] = None
    cost: Optional[Cost] = None
    outcome: Optional[Outcome] = None
    owner: Optional[OwnerSet] = None
    withdrawal: Optional[WithdrawalRequest] = None
    #: ``customer.owner_change_proposed`` / ``customer.owner_change_canceled``'s.
    owner_change: Optional[OwnerChange] = None
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "event.data", type: Optional[str] = None) -> EventData:
        """Decodes the data of an event of ``type``: the fields that type
        carries are required, any other is read if present (so an event type
        newer than this library still decodes)."""
        wf = type in _WORKFLOW_EVENTS
        rf = type in _REFUND_EVENTS
        cf = type == "customer.funded"
        co = type == "customer.owner_set"
        cw = type == "customer.withdrawal_requested"
        customer = cf or co or cw

        def obj(key: str, required: bool, build: Callable[[Mapping[str, Any], str], T]) -> Optional[T]:
            if required:
                return build(_obj(d, key, path), f"{path}.{key}")
            return _opt(d, key, path, build, may_be_absent=True)

        result = _opt_obj(d, "result", path, may_be_absent=True)
        return cls(
            workflow_id=_str(d, "workflowId", path) if wf or rf else _opt_str(d, "workflowId", path),
            status=_str(d, "status", path) if wf else _opt_str(d, "status", path),
            quoted=obj("quoted", wf, Money.from_wire),
            margin=obj("margin", wf, Margin.from_wire),
            result=None if result is None else plain(result),
            settlement=_opt(d, "settlement", path, Settlement.from_wire, may_be_absent=True),
            failure=_opt(d, "failure", path, Failure.from_wire, may_be_absent=True),
            refund=obj("refund", rf, Refund.from_wire),
            customer_id=_str(d, "customerId", path) if customer else _opt_str(d, "customerId", path),
            deposit=obj("deposit", cf, Deposit.from_wire),
            balance=obj("balance", customer, Balance.from_wire),
            owner=obj("owner", co, OwnerSet.from_wire),
            withdrawal=obj("withdrawal", cw, WithdrawalRequest.from_wire),
            owner_change=obj("ownerChange", False, OwnerChange.from_wire),
            pricing=_opt(d, "pricing", path, Pricing.from_wire, may_be_absent=True),
            charged=_opt(d, "charged", path, Money.from_wire, may_be_absent=True),
            cost=_opt(d, "cost", path, Cost.from_wire, may_be_absent=True),
            outcome=_opt(d, "outcome", path, Outcome.from_wire, may_be_absent=True),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Event:
    """An event: the body of a webhook delivery, or read back with
    ``events.fetch``/``events.list``. ``type`` is one of :data:`EVENT_TYPES`:
    ``workflow.completed`` (the workflow is Settled), ``workflow.failed``,
    ``workflow.canceled``, ``workflow.margin_below_floor`` (it finished having
    spent more than its margin floor's budget), ``refund.succeeded``,
    ``refund.failed``, ``customer.funded``, ``customer.owner_set`` or
    ``customer.withdrawal_requested``; it says which fields of ``data``
    are set."""

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
        type = _str(d, "type", path)
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            type=type,
            livemode=_bool(d, "livemode", path),
            created_at=_opt_time(d, "createdAt", path),
            data=EventData.from_wire(_obj(d, "data", path), f"{path}.data", type),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class MarginRow:
    """One group of a margins report, or its total: the group's Settled workflows.

    ``key`` is the product's name, the customer's id or the day (``YYYY-MM-DD``,
    UTC); ``""`` in the total. ``charged``, ``refunded`` (their Succeeded
    refunds) and ``cost`` are in minor units. ``margin`` is
    ``(charged - refunded - cost) / (charged - refunded)`` as a Decimal with at
    most four decimals, rounded toward zero; None when nothing was kept.
    """

    key: str
    workflows: int
    charged: Money
    refunded: Money
    cost: Money
    margin: Optional[Decimal]
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "margin_report.total") -> MarginRow:
        return cls(
            key=_str(d, "key", path),
            workflows=_int(d, "workflows", path),
            charged=Money.from_wire(_obj(d, "charged", path), f"{path}.charged"),
            refunded=Money.from_wire(_obj(d, "refunded", path), f"{path}.refunded"),
            cost=Money.from_wire(_obj(d, "cost", path), f"{path}.cost"),
            margin=_opt_ratio(d, "margin", path),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class MarginReport:
    """A margins report (``margins.report``): the Settled workflows of the key's
    environment grouped by ``group_by`` (one of :data:`MARGIN_GROUPINGS`),
    ``data`` ordered by key and ``total`` summing them. ``created_after`` and
    ``created_before`` are the range asked for (None: unbounded); ``product``
    the one product counted (``""``: all)."""

    object: str
    livemode: bool
    group_by: str
    created_after: Optional[_dt.datetime]
    created_before: Optional[_dt.datetime]
    product: str
    currency: str
    data: List[MarginRow]
    total: MarginRow
    raw: Dict[str, Any] = _raw_field()

    def __iter__(self) -> Iterator[MarginRow]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "margin_report") -> MarginReport:
        rows = _field(d, "data", path)
        if not isinstance(rows, list):
            raise DecodeError(f"{path}.data is not an array")
        data: List[MarginRow] = []
        for i, x in enumerate(cast(List[Any], rows)):
            if not isinstance(x, dict):
                raise DecodeError(f"{path}.data[{i}] is not an object")
            data.append(MarginRow.from_wire(cast(Dict[str, Any], x), f"{path}.data[{i}]"))
        return cls(
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            group_by=_str(d, "groupBy", path),
            created_after=_opt_time(d, "createdAfter", path),
            created_before=_opt_time(d, "createdBefore", path),
            product=_opt_str(d, "product", path) or "",
            currency=_str(d, "currency", path),
            data=data,
            total=MarginRow.from_wire(_obj(d, "total", path), f"{path}.total"),
            raw=plain(dict(d)),
        )


@dataclasses.dataclass(frozen=True)
class Task:
    """One attempt of a remote product's execution, leased to the worker that
    claimed it (docs/api.md §16).

    ``payload`` is the workflow's payload as priced; ``attempt`` counts the
    workflow's attempts from 1; ``lease_expires_at`` is when the server takes
    the task back unless a heartbeat extends it; ``budget`` the most the task
    may spend and keep the margin floor (None when no floor applies);
    ``spent`` what its heartbeats reported so far; ``status`` one of
    :data:`TASK_STATUSES`.
    """

    id: str
    object: str
    livemode: bool
    workflow_id: str
    product: str
    payload: Dict[str, Any]
    customer_id: str
    attempt: int
    status: str
    lease_expires_at: _dt.datetime
    budget: Optional[Money]
    spent: Money
    raw: Dict[str, Any] = _raw_field()

    @classmethod
    def from_wire(cls, d: Mapping[str, Any], path: str = "task") -> Task:
        return cls(
            id=_str(d, "id", path),
            object=_str(d, "object", path),
            livemode=_bool(d, "livemode", path),
            workflow_id=_str(d, "workflowId", path),
            product=_str(d, "product", path),
            payload=plain(_obj(d, "payload", path)),
            customer_id=_str(d, "customerId", path),
            attempt=_int(d, "attempt", path),
            status=_str(d, "status", path),
            lease_expires_at=_time(d, "leaseExpiresAt", path),
            budget=_opt(d, "budget", path, Money.from_wire),
            spent=Money.from_wire(_obj(d, "spent", path), f"{path}.spent"),
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
