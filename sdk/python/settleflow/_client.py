"""The client: :class:`Settleflow` and its resources."""

from __future__ import annotations

import datetime as _dt
import math
import os
from decimal import Decimal
import urllib.parse
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, cast

from ._errors import APIError, ConfigurationError, ConflictError, invalid_argument
from ._http import Query, Response, Transport, Secret
from ._models import (
    CostItem, DecodeError, Customer, Event, MarginReport, OwnerChange, OwnerGrant, Page, PortalSession, Product, Quote, Refund, Task,
    Workflow,
    format_time, plain,
)
from ._webhooks import Webhooks, webhooks

__all__ = ["Settleflow", "OPERATIONS", "DEFAULT_BASE_URL"]

#: The reference server's address (``go run ./examples/server``); pass ``base_url`` for any other.
DEFAULT_BASE_URL = "https://127.0.0.1:8443"

#: Every operation of the API (its OpenAPI operationId) and the client method
#: that performs it, with the HTTP method and path. The test suite checks this
#: table against the OpenAPI document the server serves, and that each method
#: exists and sends that request.
OPERATIONS: Dict[str, Tuple[str, str, str]] = {
    "createWorkflow": ("workflows.create", "POST", "/v1/workflows"),
    "listWorkflows": ("workflows.list", "GET", "/v1/workflows"),
    "fetchWorkflow": ("workflows.fetch", "GET", "/v1/workflows/{id}"),
    "cancelWorkflow": ("workflows.cancel", "POST", "/v1/workflows/{id}/cancel"),
    "createQuote": ("quotes.create", "POST", "/v1/quotes"),
    "listProducts": ("products.list", "GET", "/v1/products"),
    "fetchProduct": ("products.fetch", "GET", "/v1/products/{name}"),
    "listEvents": ("events.list", "GET", "/v1/events"),
    "fetchEvent": ("events.fetch", "GET", "/v1/events/{id}"),
    "fetchCustomer": ("customers.fetch", "GET", "/v1/customers/{customerId}"),
    "createOwnerGrant": ("customers.create_owner_grant", "POST", "/v1/customers/{customerId}/owner_grants"),
    "setOwner": ("customers.set_owner", "POST", "/v1/customers/{customerId}/owner"),
    "createPortalSession": ("customers.create_portal_session", "POST", "/v1/customers/{customerId}/portal_sessions"),
    "createRefund": ("refunds.create", "POST", "/v1/workflows/{id}/refunds"),
    "fetchRefund": ("refunds.fetch", "GET", "/v1/refunds/{id}"),
    "listRefunds": ("refunds.list", "GET", "/v1/refunds"),
    "fundTestCustomer": ("test_helpers.fund_customer", "POST", "/v1/test_helpers/customers/{customerId}/fund"),
    "reportMargins": ("margins.report", "GET", "/v1/margins"),
    "openAPI": ("openapi", "GET", "/v1/openapi.json"),
    "claimTasks": ("tasks.claim", "POST", "/v1/tasks/claim"),
    "heartbeatTask": ("tasks.heartbeat", "POST", "/v1/tasks/{id}/heartbeat"),
    "completeTask": ("tasks.complete", "POST", "/v1/tasks/{id}/complete"),
    "failTask": ("tasks.fail", "POST", "/v1/tasks/{id}/fail"),
}

#: The longest a claim may wait for a task (``wait_seconds``), as the API allows.
MAX_CLAIM_WAIT = 30

#: A cost item as a :class:`CostItem` or a dict of its wire fields
#: (``{"category": "model", "provider": "openai", "units": 1200, "amount": 90}``).
CostItemLike = Union[CostItem, Mapping[str, Any]]

T = TypeVar("T")
builtins_max = max


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise invalid_argument(what, f"{what} must be a non-empty string, not {_kind(value)}")
    return urllib.parse.quote(value, safe="")


def _decode(resp: Response, build: Callable[[Any], T]) -> T:
    try:
        return build(resp.json())
    except (DecodeError, ValueError, TypeError, AttributeError) as e:
        raise APIError(
            f"unexpected response from the server: {e}",
            status=resp.status,
            request_id=resp.headers.get("request-id"),
            headers=resp.headers,
        ) from None


def _object(x: Any) -> Mapping[str, Any]:
    if not isinstance(x, dict):
        raise DecodeError("the body is not a JSON object")
    return cast(Dict[str, Any], x)


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, str) and not value:
        return "an empty string"
    return "a " + type(value).__name__


def _payload(payload: Mapping[str, Any]) -> Dict[str, Any]:
    if not isinstance(payload, Mapping):
        raise invalid_argument(
            "payload", f"payload must be a dict (the product's input, a JSON object), not {_kind(payload)}"
        )
    # A value JSON cannot carry is refused, naming payload, when the body is encoded.
    return dict(cast(Mapping[str, Any], payload))


def _outcome_terms(body: Dict[str, Any], success_criteria: Optional[Mapping[str, Any]], margin_floor: Any) -> Dict[str, Any]:
    """Adds ``successCriteria`` and ``marginFloor`` to a create's or a quote's body when given."""
    if success_criteria is not None:
        if not isinstance(success_criteria, Mapping):
            raise invalid_argument(
                "success_criteria",
                f"success_criteria must be a dict (a criteria tree, a JSON object), not {_kind(success_criteria)}",
            )
        body["successCriteria"] = dict(cast(Mapping[str, Any], success_criteria))
    if margin_floor is not None:
        if isinstance(margin_floor, bool) or not isinstance(margin_floor, (int, float, Decimal)):
            raise invalid_argument(
                "margin_floor", f"margin_floor must be a number (a ratio such as Decimal('0.25')), not {_kind(margin_floor)}"
            )
        if isinstance(margin_floor, Decimal):
            if not margin_floor.is_finite():
                raise invalid_argument("margin_floor", "margin_floor must be a finite number")
            # JSON has no Decimal: a ratio of at most four decimals is exactly
            # the shortest float that prints as it.
            margin_floor = int(margin_floor) if margin_floor == margin_floor.to_integral_value() else float(margin_floor)
        elif isinstance(margin_floor, float) and not math.isfinite(margin_floor):
            raise invalid_argument("margin_floor", "margin_floor must be a finite number")
        body["marginFloor"] = margin_floor
    return body


def _idempotency_key(key: Optional[str]) -> Optional[str]:
    if key is not None and not (
        isinstance(key, str)
        and 0 < len(key) <= 255
        and all(0x20 <= ord(c) <= 0x7E for c in key)
        and key.strip()
    ):
        raise invalid_argument("idempotency_key", "idempotency_key must be 1 to 255 printable ASCII characters")
    return key


def _time_param(value: Optional[Union[_dt.datetime, str]], what: str) -> Optional[str]:
    """An aware datetime as RFC 3339 in UTC; a string is sent as given (the server checks it)."""
    if not isinstance(value, _dt.datetime):
        return value
    try:
        return format_time(value)
    except ValueError as e:
        raise invalid_argument(what, f"{what}: {e}") from None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise invalid_argument(what, f"{what} must be a str, not {_kind(value)}")
    return value


def _unix(deadline: Any) -> int:
    if isinstance(deadline, bool) or not isinstance(deadline, int):
        raise invalid_argument("deadline", f"deadline must be an int of Unix seconds, not {_kind(deadline)}")
    return deadline


def _amount(amount: Any, *, optional: bool = False) -> Optional[int]:
    if amount is None and optional:
        return None
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise invalid_argument("amount", f"amount must be an int of minor units (500 is 5.00 USD), not {_kind(amount)}")
    return amount


def _auto_page(
    fetch: Callable[[Optional[str], Optional[str]], Page[Any]], starting_after: Optional[str], ending_before: Optional[str]
) -> Iterator[Any]:
    """Follows a list from page to page. Forwards (the default, or from
    starting_after) it yields newest first; backwards (from ending_before) it
    yields oldest first, each item once, moving toward the newest."""
    backwards = ending_before is not None
    after, before = starting_after, ending_before
    while True:
        page = fetch(after, before)
        yield from (reversed(page.data) if backwards else page.data)
        if not page.has_more or not page.data:
            return
        if backwards:
            before = page.data[0].id
        else:
            after = page.data[-1].id


class Workflows:
    """``client.workflows``: create, fetch, list and cancel workflows."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        *,
        product: str,
        customer_id: str,
        payload: Mapping[str, Any],
        idempotency_key: Optional[str] = None,
        success_criteria: Optional[Mapping[str, Any]] = None,
        margin_floor: Optional[Union[Decimal, float, int]] = None,
    ) -> Workflow:
        """Creates a workflow for ``product`` on behalf of ``customer_id`` (``cus_…``).

        Answered at once with status ``Pending`` and the quoted price; the product
        runs in the background. ``idempotency_key`` (at most 255 characters) makes
        the create safe to repeat: the same key with the same body within 24 h
        returns the first workflow instead of making another. Without one, the
        client generates a key for this call and reuses it on each retry.

        ``success_criteria``, optional, is a criteria tree (a dict such as
        ``{"type": "exact", "path": "/status", "value": "resolved"}``) that
        replaces the product's: the result is judged by it once the product ran
        (``Workflow.outcome``), and under ``success_fee`` and ``hybrid`` pricing
        the verdict decides the charge. A tree that does not parse raises
        :class:`InvalidRequestError` whose ``param`` names the node
        (``successCriteria.criteria[1].op``). ``margin_floor``, optional, is the
        least margin to keep at the price quoted, a ratio ``0 <= f < 1`` with at
        most four decimals (``Decimal("0.25")``); it may raise the product's floor,
        never lower it. A quote whose margin on the estimated cost is below it
        raises :class:`InvalidRequestError` with ``code`` ``margin_below_floor``
        (``param`` ``marginFloor``); an execution that spends past the budget it
        leaves fails with ``margin_floor_exceeded``.
        """
        _idempotency_key(idempotency_key)
        body = {"product": product, "customerId": customer_id, "payload": _payload(payload)}
        _outcome_terms(body, success_criteria, margin_floor)
        resp = self._t.request("POST", "/v1/workflows", body=body, idempotency_key=idempotency_key)
        return _decode(resp, lambda x: Workflow.from_wire(_object(x)))

    def fetch(self, id: str) -> Workflow:
        """Fetches the workflow ``id`` (``wf_…``); :class:`NotFoundError` if there is none."""
        resp = self._t.request("GET", "/v1/workflows/" + _segment(id, "id"))
        return _decode(resp, lambda x: Workflow.from_wire(_object(x)))

    def list(
        self,
        *,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        customer_id: Optional[str] = None,
        product: Optional[str] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
    ) -> Page[Workflow]:
        """One page of workflows, newest first (``limit`` 1–100, default 10).

        ``starting_after`` (a workflow id) gives the page of older workflows after
        it, ``ending_before`` the page of newer ones before it.
        """
        query: Query = {
            "status": status,
            "limit": limit,
            "customerId": customer_id,
            "product": product,
            "startingAfter": starting_after,
            "endingBefore": ending_before,
        }
        resp = self._t.request("GET", "/v1/workflows", query=query)
        return _decode(resp, lambda x: Page[Workflow].from_wire(_object(x), Workflow.from_wire))

    def list_auto_paging(
        self,
        *,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        customer_id: Optional[str] = None,
        product: Optional[str] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
    ) -> Iterator[Workflow]:
        """Every workflow matching the filters, fetching pages of ``limit`` as it goes.

        Newest first; with ``ending_before``, it walks toward newer workflows and
        yields oldest first. Pages are fetched lazily: stop iterating to stop fetching.
        """

        def fetch(after: Optional[str], before: Optional[str]) -> Page[Workflow]:
            return self.list(
                status=status, limit=limit, customer_id=customer_id, product=product,
                starting_after=after, ending_before=before,
            )

        return _auto_page(fetch, starting_after, ending_before)

    def cancel(self, id: str) -> Workflow:
        """Cancels a Pending workflow: it is never executed and nothing is charged.

        Any other status raises :class:`ConflictError` whose ``code`` names it
        (``workflow_running``, ``workflow_settled``, …). If the first attempt's
        answer was lost and a retry finds the workflow already canceled, the
        cancel took effect: the canceled workflow is returned.
        """
        path = "/v1/workflows/" + _segment(id, "id") + "/cancel"
        try:
            resp = self._t.request("POST", path)
        except ConflictError as e:
            if e.code == "workflow_canceled" and e.attempts > 1:
                return self.fetch(id)
            raise
        return _decode(resp, lambda x: Workflow.from_wire(_object(x)))


class Quotes:
    """``client.quotes``: what a create would quote, without creating anything."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        *,
        product: str,
        customer_id: str,
        payload: Mapping[str, Any],
        success_criteria: Optional[Mapping[str, Any]] = None,
        margin_floor: Optional[Union[Decimal, float, int]] = None,
    ) -> Quote:
        """Prices the body of ``workflows.create`` exactly as a create would now, with the
        same validation errors (``success_criteria`` and ``margin_floor`` as there),
        and stores nothing. The quote shows the ``pricing``, ``success_criteria`` and
        ``margin_floor`` in force and, with a floor, the ``budget`` it leaves."""
        body = {"product": product, "customerId": customer_id, "payload": _payload(payload)}
        _outcome_terms(body, success_criteria, margin_floor)
        resp = self._t.request("POST", "/v1/quotes", body=body)
        return _decode(resp, lambda x: Quote.from_wire(_object(x)))


class Products:
    """``client.products``: the catalogue, each product with its payload's JSON Schema."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(self) -> Page[Product]:
        """Every product (one page: ``has_more`` is False)."""
        resp = self._t.request("GET", "/v1/products")
        return _decode(resp, lambda x: Page[Product].from_wire(_object(x), Product.from_wire))

    def fetch(self, name: str) -> Product:
        """One product by name, for example ``"ticket-triage"``."""
        resp = self._t.request("GET", "/v1/products/" + _segment(name, "name"))
        return _decode(resp, lambda x: Product.from_wire(_object(x)))


class Events:
    """``client.events``: the events webhooks deliver, read back (kept at least 30 days)."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def fetch(self, id: str) -> Event:
        """The event ``id`` (``evt_…``), as its webhook deliveries carried it."""
        resp = self._t.request("GET", "/v1/events/" + _segment(id, "id"))
        return _decode(resp, lambda x: Event.from_wire(_object(x)))

    def list(
        self,
        *,
        type: Optional[str] = None,
        workflow_id: Optional[str] = None,
        created_after: Optional[Union[_dt.datetime, str]] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> Page[Event]:
        """One page of events, newest first. ``created_after`` (an aware datetime or an
        RFC 3339 string) keeps events created strictly after it, so a receiver that
        was down can catch up."""
        query: Query = {
            "type": type,
            "workflowId": workflow_id,
            "createdAfter": _time_param(created_after, "created_after"),
            "startingAfter": starting_after,
            "endingBefore": ending_before,
            "limit": limit,
        }
        resp = self._t.request("GET", "/v1/events", query=query)
        return _decode(resp, lambda x: Page[Event].from_wire(_object(x), Event.from_wire))

    def list_auto_paging(
        self,
        *,
        type: Optional[str] = None,
        workflow_id: Optional[str] = None,
        created_after: Optional[Union[_dt.datetime, str]] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> Iterator[Event]:
        """Every event matching the filters, page after page (see ``Workflows.list_auto_paging``)."""

        def fetch(after: Optional[str], before: Optional[str]) -> Page[Event]:
            return self.list(
                type=type, workflow_id=workflow_id, created_after=created_after,
                starting_after=after, ending_before=before, limit=limit,
            )

        return _auto_page(fetch, starting_after, ending_before)


class Customers:
    """``client.customers``: a customer's prepaid balance and where to deposit for it."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def fetch(self, customer_id: str) -> Customer:
        """The customer ``customer_id`` (``cus_…``) in the key's environment: its
        ``balance`` (``available`` is what new workflows may reserve) and
        ``deposit``, where to deposit for it (None where charges are not paid
        from customer balances). A customer never seen has a zero balance."""
        resp = self._t.request("GET", "/v1/customers/" + _segment(customer_id, "customer_id"))
        return _decode(resp, lambda x: Customer.from_wire(_object(x)))

    def create_owner_grant(
        self,
        customer_id: str,
        *,
        address: str,
        origin: Optional[str] = None,
        deadline: Optional[int] = None,
    ) -> OwnerGrant:
        """An unsigned grant of ``address`` (``0x…``, the customer's wallet) as the
        owner of the customer's balance: a fresh ``nonce``, the ``deadline`` (Unix
        seconds; 15 minutes ahead unless given, at most 24 hours), the ``origin``
        the wallet shows, and ``typed_data``, the EIP-712 typed data the wallet
        signs (``eth_signTypedData_v4``). Nothing is sent to the chain; send the
        signed grant with :meth:`set_owner`. A bad ``address``, ``origin`` or
        ``deadline`` raises :class:`InvalidRequestError` naming it."""
        path = "/v1/customers/" + _segment(customer_id, "customer_id") + "/owner_grants"
        body: Dict[str, Any] = {"address": _text(address, "address")}
        if origin is not None:
            body["origin"] = _text(origin, "origin")
        if deadline is not None:
            body["deadline"] = _unix(deadline)
        resp = self._t.request("POST", path, body=body)
        return _decode(resp, lambda x: OwnerGrant.from_wire(_object(x)))

    def set_owner(
        self,
        customer_id: str,
        *,
        address: str,
        nonce: str,
        origin: str,
        deadline: int,
        signature: str,
        idempotency_key: Optional[str] = None,
    ) -> OwnerChange:
        """Sends the customer's signed grant (its fields as
        :meth:`create_owner_grant` answered them, and the wallet's 65-byte
        ``signature``, ``0x``-hex): the operator sets ``address`` as the owner of
        the customer's balance on chain. Answered with the owner change as sent
        (``status`` ``"sent"``, ``tx_hash``; ``effective`` ``"now"``, or
        ``"after_notice"`` if the customer had an owner).

        A grant that cannot apply (expired, its nonce used, a signature of
        another customer, chain, contract, origin or key, an address that owns
        the balance already) raises :class:`InvalidRequestError` whose ``param``
        names ``address``, ``nonce``, ``origin``, ``deadline`` or ``signature``;
        nothing is sent. ``idempotency_key`` works as for ``workflows.create``.
        """
        path = "/v1/customers/" + _segment(customer_id, "customer_id") + "/owner"
        _idempotency_key(idempotency_key)
        body = {
            "address": _text(address, "address"),
            "nonce": _text(nonce, "nonce"),
            "origin": _text(origin, "origin"),
            "deadline": _unix(deadline),
            "signature": _text(signature, "signature"),
        }
        resp = self._t.request("POST", path, body=body, idempotency_key=idempotency_key)
        return _decode(resp, lambda x: OwnerChange.from_wire(_object(x)))

    def create_portal_session(self, customer_id: str, *, expires_in: Optional[int] = None) -> PortalSession:
        """A one-time link to the customer portal for the customer, in the key's
        environment: send the customer to its ``url`` before ``expires_at``.
        ``expires_in`` is the link's lifetime in whole seconds, 60 to 86,400
        (15 minutes by default). Each call issues a new link; the ``url`` is in
        this answer only, so do not log it.

        A bad ``customer_id`` or ``expires_in`` raises :class:`InvalidRequestError`
        naming ``customerId`` or ``expiresIn``; a server that does not mount the
        portal answers 404 (``resource_missing``)."""
        path = "/v1/customers/" + _segment(customer_id, "customer_id") + "/portal_sessions"
        body: Dict[str, Any] = {}
        if expires_in is not None:
            if isinstance(expires_in, bool) or not isinstance(expires_in, int):
                raise invalid_argument("expires_in", f"expires_in must be an int of seconds (60 to 86400), not {_kind(expires_in)}")
            body["expiresIn"] = expires_in
        resp = self._t.request("POST", path, body=body)
        return _decode(resp, lambda x: PortalSession.from_wire(_object(x)))


class Refunds:
    """``client.refunds``: give back part or all of a Settled workflow's charge."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        workflow_id: str,
        *,
        amount: Optional[int] = None,
        reason: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Refund:
        """Refunds ``amount`` (minor units) of the Settled workflow ``workflow_id``,
        or without ``amount`` all that is left to refund of its charge; ``reason``
        (at most 500 characters) is kept on the refund.

        Answered at once with status ``Pending``; the refund is Succeeded once the
        chain confirms it. A workflow that is not Settled raises
        :class:`ConflictError` (``workflow_not_settled``); more than is left to
        refund, pending refunds included, raises :class:`InvalidRequestError`
        (``amount_exceeds_refundable``, ``param`` ``amount``). ``idempotency_key``
        works as for ``workflows.create``: without one, the client generates a
        key and reuses it on each retry, so a retry never refunds twice.
        """
        path = "/v1/workflows/" + _segment(workflow_id, "workflow_id") + "/refunds"
        _idempotency_key(idempotency_key)
        body: Dict[str, Any] = {}
        if amount is not None:
            body["amount"] = _amount(amount)
        if reason is not None:
            if not isinstance(reason, str):
                raise invalid_argument("reason", f"reason must be a str, not {_kind(reason)}")
            body["reason"] = reason
        resp = self._t.request("POST", path, body=body, idempotency_key=idempotency_key)
        return _decode(resp, lambda x: Refund.from_wire(_object(x)))

    def fetch(self, id: str) -> Refund:
        """The refund ``id`` (``re_…``); :class:`NotFoundError` if there is none."""
        resp = self._t.request("GET", "/v1/refunds/" + _segment(id, "id"))
        return _decode(resp, lambda x: Refund.from_wire(_object(x)))

    def list(
        self,
        *,
        workflow_id: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
    ) -> Page[Refund]:
        """One page of refunds, newest first (``limit`` 1–100, default 10), of one
        workflow if ``workflow_id`` is given; ``status`` is one of
        :data:`REFUND_STATUSES`. The cursors work as for ``workflows.list``."""
        query: Query = {
            "workflowId": workflow_id,
            "status": status,
            "limit": limit,
            "startingAfter": starting_after,
            "endingBefore": ending_before,
        }
        resp = self._t.request("GET", "/v1/refunds", query=query)
        return _decode(resp, lambda x: Page[Refund].from_wire(_object(x), Refund.from_wire))

    def list_auto_paging(
        self,
        *,
        workflow_id: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
        ending_before: Optional[str] = None,
    ) -> Iterator[Refund]:
        """Every refund matching the filters, page after page (see ``Workflows.list_auto_paging``)."""

        def fetch(after: Optional[str], before: Optional[str]) -> Page[Refund]:
            return self.list(
                workflow_id=workflow_id, status=status, limit=limit, starting_after=after, ending_before=before,
            )

        return _auto_page(fetch, starting_after, ending_before)


class Margins:
    """``client.margins``: what the Settled workflows charged, cost and kept."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def report(
        self,
        *,
        group_by: str,
        created_after: Optional[Union[_dt.datetime, str]] = None,
        created_before: Optional[Union[_dt.datetime, str]] = None,
        product: Optional[str] = None,
    ) -> MarginReport:
        """The margins report of the key's environment: its Settled workflows
        grouped by ``group_by`` (``"product"``, ``"customer"`` or ``"day"``, the
        UTC day of creation), only ``product``'s if given, created at or after
        ``created_after`` and before ``created_before`` (aware datetimes or RFC
        3339 strings). Each group and the total carry ``workflows``,
        ``charged``, ``refunded``, ``cost`` and ``margin``, ``(charged -
        refunded - cost) / (charged - refunded)``, None when nothing was kept.

        The server answers :class:`InvalidRequestError` naming ``groupBy``
        (unknown), ``product`` (not in its catalogue), ``createdBefore`` (not
        after ``createdAfter``) or ``createdAfter`` (more than 1000 groups:
        narrow the range)."""
        if not isinstance(group_by, str) or not group_by:
            raise invalid_argument("group_by", f"group_by must be one of 'product', 'customer', 'day', not {_kind(group_by)}")
        query: Query = {
            "groupBy": group_by,
            "createdAfter": _time_param(created_after, "created_after"),
            "createdBefore": _time_param(created_before, "created_before"),
            "product": product,
        }
        resp = self._t.request("GET", "/v1/margins", query=query)
        return _decode(resp, lambda x: MarginReport.from_wire(_object(x)))


class TestHelpers:
    """``client.test_helpers``: helpers that exist only for test keys (``sk_test_…``)."""

    __test__ = False  # not a test case, whatever a test runner makes of the name

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def fund_customer(self, customer_id: str, amount: int) -> Customer:
        """The test faucet deposits ``amount`` (minor units) for ``customer_id``;
        answered, once the deposit is applied, with the customer and its new balance.

        Every call deposits (the server keeps no idempotency key for it), so the
        client does not retry it: an error may mean the deposit was made or not;
        ``customers.fetch`` tells. A live key raises :class:`PermissionDeniedError`
        (``test_mode_only``).
        """
        path = "/v1/test_helpers/customers/" + _segment(customer_id, "customer_id") + "/fund"
        body = {"amount": _amount(amount)}
        resp = self._t.request("POST", path, body=body, max_retries=0, resend=False)
        return _decode(resp, lambda x: Customer.from_wire(_object(x)))


def _cost_items(items: Optional[Iterable[CostItemLike]]) -> List[Dict[str, Any]]:
    """Cost items as the API takes them; the server checks their values."""
    if items is None:
        return []
    if isinstance(items, (str, bytes, Mapping, CostItem)):
        raise invalid_argument("cost_items", f"cost_items must be a list of CostItem or dicts, not {_kind(items)}")
    out: List[Dict[str, Any]] = []
    for i, item in enumerate(items):
        if isinstance(item, CostItem):
            out.append({"category": item.category, "provider": item.provider, "units": item.units, "amount": item.amount})
        elif isinstance(item, Mapping):
            out.append(dict(cast(Mapping[str, Any], item)))
        else:
            raise invalid_argument(f"cost_items[{i}]", f"cost_items[{i}] must be a CostItem or a dict, not {_kind(item)}")
    return out


class Tasks:
    """``client.tasks``: the task endpoints a worker calls (docs/api.md §16), with
    a worker key (``rk_test_…`` or ``rk_live_…``). :class:`settleflow.Worker` is
    built on them; call them directly to write a worker of your own.

    Errors: 409 :class:`ConflictError` with ``code`` ``lease_lost`` (the
    server took the task back), ``task_ended`` (it already completed or
    failed) or ``margin_floor_exceeded`` (its spend passed the budget: the
    workflow failed); 404 :class:`NotFoundError` for a task that is unknown,
    another key's or forgotten; 403 :class:`PermissionDeniedError` for a key
    that is not a worker key (``worker_key_required``) or a product it may not
    serve (``product_not_allowed``). On any 409 or 404 stop the task and
    report nothing more for it.
    """

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def claim(
        self,
        products: Iterable[str],
        *,
        max: int = 1,
        wait_seconds: int = 0,
        worker: Optional[Mapping[str, str]] = None,
    ) -> List[Task]:
        """Claims up to ``max`` tasks (1–100) of the remote ``products``,
        waiting up to ``wait_seconds`` (0–30) for a first one when none is
        ready; an empty list when the wait ends with nothing.

        ``worker``, optional, says which worker process claims: a dict of
        ``host`` (at most 255 bytes), ``name`` (at most 128) and ``sdk`` (at
        most 64), each optional; the server's dashboard lists workers by key,
        host and name and shows which one ran each attempt.
        :class:`Worker` sends it.

        The request's timeout is the client's or ``wait_seconds`` plus 10 s,
        whichever is longer. A claim is sent once, never retried: tasks whose
        answer was lost come back when their lease passes. Only a claim that
        could not be sent at all (the connection was refused: nothing was
        written) goes on to the client's next base URL; one cut off after it
        was sent raises :class:`APIConnectionError`, and the caller claims
        again later with a new claim (:class:`Worker` does, after a pause).
        """
        if isinstance(products, str) or not isinstance(products, Iterable):
            raise invalid_argument("products", f"products must be a list of product names, not {_kind(products)}")
        names = list(products)
        for i, name in enumerate(names):
            _text(name, f"products[{i}]")
        for what, v in (("max", max), ("wait_seconds", wait_seconds)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise invalid_argument(what, f"{what} must be an int, not {_kind(v)}")
        body: Dict[str, Any] = {"products": names, "max": max, "waitSeconds": wait_seconds}
        if worker is not None:
            if not isinstance(worker, Mapping):
                raise invalid_argument("worker", f"worker must be a dict of host, name and sdk, not {_kind(worker)}")
            ident = {}
            for k, v in worker.items():
                if k not in ("host", "name", "sdk"):
                    raise invalid_argument("worker", f"worker has host, name and sdk, not {k!r}")
                if not isinstance(v, str):
                    raise invalid_argument("worker." + k, f"worker.{k} must be a str, not {_kind(v)}")
                ident[k] = v
            body["worker"] = ident
        timeout = builtins_max(self._t.timeout, float(wait_seconds) + 10.0)
        resp = self._t.request("POST", "/v1/tasks/claim", body=body, max_retries=0, timeout=timeout, resend=False)
        return _decode(resp, lambda x: Page.from_wire(_object(x), Task.from_wire).data)

    def heartbeat(self, id: str, cost_items: Optional[Iterable[CostItemLike]] = None) -> Task:
        """Extends the task's lease and adds ``cost_items`` to its spend.

        Past the task's budget it raises :class:`ConflictError`
        ``margin_floor_exceeded``: the workflow failed, stop working. A
        heartbeat without cost items only extends the lease, so it is retried
        as configured, like :meth:`complete`; one carrying spend is sent once
        (resending it after a lost answer would report the spend twice), except
        that one that could not be sent at all goes on to the next base URL.
        """
        path = "/v1/tasks/" + _segment(id, "id") + "/heartbeat"
        items = _cost_items(cost_items)
        if items:
            resp = self._t.request("POST", path, body={"costItems": items}, max_retries=0, resend=False)
        else:
            resp = self._t.request("POST", path, body={"costItems": items})
        return _decode(resp, lambda x: Task.from_wire(_object(x)))

    def complete(
        self, id: str, result: Optional[Mapping[str, Any]] = None, cost_items: Optional[Iterable[CostItemLike]] = None
    ) -> Task:
        """Records the task's ``result`` (a dict, the workflow's result; None
        sends ``{}``) and the ``cost_items`` of its run besides those its
        heartbeats reported. Idempotent per task: retried as configured
        (``max_retries``) on a connection error, a timeout, 408, 429 and 5xx,
        after a random backoff, through any of the client's base URLs; any
        other answer (409 ``lease_lost``, ``task_ended``,
        ``margin_floor_exceeded``, a 4xx) is final and raised at once."""
        resp = self._complete(id, result, cost_items)
        return _decode(resp, lambda x: Task.from_wire(_object(x)))

    def _complete(
        self, id: str, result: Optional[Mapping[str, Any]], cost_items: Optional[Iterable[CostItemLike]]
    ) -> Response:
        """complete() without decoding the task answered (a Worker has no use for it)."""
        if result is None:
            result = {}
        if not isinstance(result, Mapping):
            raise invalid_argument("result", f"result must be a dict (a JSON object), not {_kind(result)}")
        path = "/v1/tasks/" + _segment(id, "id") + "/complete"
        body = {"result": dict(cast(Mapping[str, Any], result)), "costItems": _cost_items(cost_items)}
        return self._t.request("POST", path, body=body)

    def fail(self, id: str, message: str, *, retry: bool = False) -> Task:
        """Ends the task as failed: with ``retry`` the workflow is tried again
        after the engine's backoff; without, it fails for good. ``message`` is
        1–1,024 bytes. Idempotent per task: retried as :meth:`complete` is."""
        if not isinstance(retry, bool):
            raise invalid_argument("retry", f"retry must be a bool, not {_kind(retry)}")
        path = "/v1/tasks/" + _segment(id, "id") + "/fail"
        resp = self._t.request("POST", path, body={"message": _text(message, "message"), "retry": retry})
        return _decode(resp, lambda x: Task.from_wire(_object(x)))


class Settleflow:
    """A settleflow API client.

    >>> client = Settleflow(api_key="sk_test_…", base_url="https://127.0.0.1:8443",
    ...                     ca="settleflow-data/tls/cert.pem")

    ``api_key`` defaults to the ``SETTLEFLOW_API_KEY`` environment variable and
    ``base_url`` to ``SETTLEFLOW_BASE_URL``, then to the reference server's
    address. ``base_url`` may be a list of the URLs of several instances (and
    ``SETTLEFLOW_BASE_URL`` several, separated by commas): each request goes to
    the next in turn, passing over one that gave a connection error, and a
    request that could not be sent at all (the connection was refused) goes to
    the next at once (docs/workers.md, "Several instances and retries").
    ``timeout`` bounds each attempt of a request, in seconds;
    ``max_retries`` is how many times a request is retried after a connection
    error, a timeout, 408, 429 or 5xx (0 disables retries); ``ca`` is the path
    of a PEM file of certificates to trust instead of the system's (as
    :func:`ssl.create_default_context`'s ``cafile``).

    A client is safe to share between threads; it keeps a few connections
    alive. ``close()`` (or a ``with`` block) closes them.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        base_url: Optional[Union[str, Sequence[str]]] = None,
        max_retries: int = 2,
        ca: Optional[Union[str, os.PathLike[str]]] = None,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ConfigurationError("timeout", "timeout must be a positive number of seconds")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigurationError("max_retries", "max_retries must be an integer >= 0")
        key = api_key if api_key is not None else os.environ.get("SETTLEFLOW_API_KEY")
        if not isinstance(key, str) or not key:
            raise ConfigurationError("api_key", "api_key is required (or set SETTLEFLOW_API_KEY)")
        if any(not 0x21 <= ord(c) <= 0x7E for c in key):
            raise ConfigurationError("api_key", "api_key may hold only printable ASCII characters without spaces")
        url: Union[str, Sequence[str]]
        if base_url is not None:
            url = base_url
        else:
            env = os.environ.get("SETTLEFLOW_BASE_URL", DEFAULT_BASE_URL)
            url = [u.strip() for u in env.split(",")] if "," in env else env
        try:
            cafile = os.fspath(ca) if ca is not None else None
        except TypeError:
            raise ConfigurationError("ca", f"ca must be the path of a PEM file, not a {type(ca).__name__}") from None
        self._key = Secret(key)
        del key, api_key
        self._transport = Transport(
            api_key=self._key,
            base_url=url,
            timeout=float(timeout),
            max_retries=max_retries,
            ca=cafile,
        )
        self.workflows = Workflows(self._transport)
        self.quotes = Quotes(self._transport)
        self.products = Products(self._transport)
        self.events = Events(self._transport)
        self.customers = Customers(self._transport)
        self.refunds = Refunds(self._transport)
        self.margins = Margins(self._transport)
        #: The task endpoints, for a worker key (``rk_test_…``); see :class:`settleflow.Worker`.
        self.tasks = Tasks(self._transport)
        #: Helpers for test keys only (``fund_customer``).
        self.test_helpers = TestHelpers(self._transport)
        #: Webhook verification (needs no API key; also ``settleflow.webhooks``).
        self.webhooks: Webhooks = webhooks

    @property
    def base_url(self) -> str:
        """The (first) base URL."""
        return self._transport.base_url

    @property
    def base_urls(self) -> List[str]:
        """Every base URL, in the order given."""
        return list(self._transport.base_urls)

    @property
    def timeout(self) -> float:
        return self._transport.timeout

    @property
    def max_retries(self) -> int:
        return self._transport.max_retries

    def openapi(self) -> Dict[str, Any]:
        """The OpenAPI 3.1 document the server serves (operationId ``openAPI``), as a dict."""
        resp = self._transport.request("GET", "/v1/openapi.json", authenticate=False)
        return _decode(resp, lambda x: plain(_object(x)))

    def close(self) -> None:
        """Closes the connections kept alive. The client stays usable (without keep-alive)."""
        self._transport.close()

    def __enter__(self) -> Settleflow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Settleflow(base_url={self.base_url if len(self.base_urls) == 1 else self.base_urls!r}, api_key={self._key.display()!r}, "
            f"timeout={self.timeout!r}, max_retries={self.max_retries!r})"
        )

    def __reduce__(self) -> Any:
        raise TypeError("a Settleflow client cannot be pickled (it holds the API key)")
