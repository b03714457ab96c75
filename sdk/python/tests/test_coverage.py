"""Every operation of the served OpenAPI document has a client method that sends it."""

from __future__ import annotations

import json
import unittest
from typing import Any, Dict, List, Tuple

from settleflow import OPERATIONS, Settleflow
from settleflow._errors import Headers
from settleflow._http import Response

from . import harness
from .harness import WORKFLOW_JSON

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}

EVENT_JSON = {
    "id": "evt_1", "object": "event", "type": "workflow.completed", "livemode": False, "createdAt": "2026-11-24T00:00:00Z",
    "data": {"workflowId": "wf_1", "status": "Settled", "quoted": {"amount": 1, "currency": "usd"}, "margin": {"target": 0.3, "achieved": 0.25}},
}
PRODUCT_JSON = {
    "object": "product", "name": "ticket-triage", "description": "d", "targetMargin": 0.3,
    "minimumCharge": {"amount": 50, "currency": "usd"}, "pricingSummary": "s", "payloadSchema": {}, "example": None,
}
CUSTOMER_JSON = {
    "object": "customer", "id": "cus_1", "livemode": False,
    "balance": {"onChain": 0, "reserved": 0, "pendingWithdrawal": 0, "available": 0, "currency": "usd"}, "deposit": None,
}
OWNER_GRANT_JSON = {
    "object": "owner_grant", "livemode": False, "customerId": "cus_1", "address": "0x" + "a" * 40, "nonce": "0x" + "1" * 64,
    "origin": "o", "deadline": 1, "typedData": {"primaryType": "OwnerGrant"},
}
OWNER_CHANGE_JSON = {
    "object": "owner_change", "livemode": False, "customerId": "cus_1", "address": "0x" + "a" * 40, "status": "sent",
    "txHash": "0x" + "b" * 64, "effective": "now",
}
REFUND_JSON = {
    "object": "refund", "id": "re_1", "livemode": False, "workflowId": "wf_1", "amount": 1, "currency": "usd", "reason": "",
    "status": "Pending", "settlement": None, "failure": None, "createdAt": "2026-11-24T00:00:00Z", "updatedAt": "2026-11-24T00:00:00Z",
}
MARGIN_REPORT_JSON = {
    "object": "margin_report", "livemode": False, "groupBy": "day", "createdAfter": None, "createdBefore": None, "product": "",
    "currency": "usd", "data": [],
    "total": {"key": "", "workflows": 0, "charged": {"amount": 0, "currency": "usd"}, "refunded": {"amount": 0, "currency": "usd"},
              "cost": {"amount": 0, "currency": "usd"}, "margin": None},
}
QUOTE_JSON = {
    "object": "quote", "livemode": False, "product": "ticket-triage", "customerId": "cus_1", "payload": {},
    "quoted": {"amount": 1, "currency": "usd"}, "margin": {"target": 0.3},
}

TASK_JSON = {
    "id": "task_1", "object": "task", "livemode": False, "workflowId": "wf_1", "product": "ticket-triage", "payload": {},
    "customerId": "cus_1", "attempt": 1, "status": "claimed", "leaseExpiresAt": "2026-11-24T00:00:30Z",
    "budget": None, "spent": {"amount": 0, "currency": "usd"},
}


def page(url: str, item: Dict[str, Any]) -> Dict[str, Any]:
    return {"object": "list", "url": url, "data": [item], "hasMore": False}


# How to call each method in the recording test, the path it must hit, and a body to answer with.
CALLS: Dict[str, Tuple[Tuple[Any, ...], Dict[str, Any], str, Any]] = {
    "createWorkflow": ((), dict(product="ticket-triage", customer_id="cus_1", payload={"ticketId": "T"}), "/v1/workflows", WORKFLOW_JSON),
    "listWorkflows": ((), {}, "/v1/workflows", page("/v1/workflows", WORKFLOW_JSON)),
    "fetchWorkflow": (("wf_1",), {}, "/v1/workflows/wf_1", WORKFLOW_JSON),
    "cancelWorkflow": (("wf_1",), {}, "/v1/workflows/wf_1/cancel", WORKFLOW_JSON),
    "createQuote": ((), dict(product="ticket-triage", customer_id="cus_1", payload={"ticketId": "T"}), "/v1/quotes", QUOTE_JSON),
    "listProducts": ((), {}, "/v1/products", page("/v1/products", PRODUCT_JSON)),
    "fetchProduct": (("ticket-triage",), {}, "/v1/products/ticket-triage", PRODUCT_JSON),
    "listEvents": ((), {}, "/v1/events", page("/v1/events", EVENT_JSON)),
    "fetchEvent": (("evt_1",), {}, "/v1/events/evt_1", EVENT_JSON),
    "fetchCustomer": (("cus_1",), {}, "/v1/customers/cus_1", CUSTOMER_JSON),
    "createOwnerGrant": (("cus_1",), dict(address="0x" + "a" * 40), "/v1/customers/cus_1/owner_grants", OWNER_GRANT_JSON),
    "setOwner": (("cus_1",), dict(address="0x" + "a" * 40, nonce="0x" + "1" * 64, origin="o", deadline=1, signature="0x"),
                 "/v1/customers/cus_1/owner", OWNER_CHANGE_JSON),
    "createPortalSession": (("cus_1",), dict(expires_in=600), "/v1/customers/cus_1/portal_sessions",
                            {"object": "portal_session", "id": "ps_01KAQ0Q5JK6G1Q2W3E4R5T6Y7Y", "customerId": "cus_1", "livemode": False,
                             "url": "https://127.0.0.1:8443/portal/signin?token=t", "expiresAt": "2026-12-01T00:15:00Z"}),
    "createRefund": (("wf_1",), dict(amount=1), "/v1/workflows/wf_1/refunds", REFUND_JSON),
    "fetchRefund": (("re_1",), {}, "/v1/refunds/re_1", REFUND_JSON),
    "listRefunds": ((), dict(workflow_id="wf_1"), "/v1/refunds", page("/v1/refunds", REFUND_JSON)),
    "fundTestCustomer": (("cus_1", 500), {}, "/v1/test_helpers/customers/cus_1/fund", CUSTOMER_JSON),
    "reportMargins": ((), dict(group_by="day"), "/v1/margins", MARGIN_REPORT_JSON),
    "openAPI": ((), {}, "/v1/openapi.json", {"openapi": "3.1.0"}),
    "claimTasks": ((["ticket-triage"],), {}, "/v1/tasks/claim", page("/v1/tasks/claim", TASK_JSON)),
    "heartbeatTask": (("task_1",), {}, "/v1/tasks/task_1/heartbeat", TASK_JSON),
    "completeTask": (("task_1", {"queue": "billing"}), {}, "/v1/tasks/task_1/complete", TASK_JSON),
    "failTask": (("task_1", "boom"), {}, "/v1/tasks/task_1/fail", TASK_JSON),
}


def resolve(client: Settleflow, dotted: str) -> Any:
    obj: Any = client
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def fill(template: str, path: str) -> bool:
    """Whether path matches the template's shape ({x} is one segment)."""
    t, p = template.split("/"), path.split("/")
    return len(t) == len(p) and all(a == b or (a.startswith("{") and a.endswith("}") and b) for a, b in zip(t, p))


class TestCoverage(unittest.TestCase):
    def test_every_served_operation_has_a_method(self) -> None:
        c = harness.client()
        self.addCleanup(c.close)
        doc = c.openapi()
        served: Dict[str, Tuple[str, str]] = {}
        for path, item in doc["paths"].items():
            for method, op in item.items():
                if method in HTTP_METHODS and isinstance(op, dict):
                    self.assertIn("operationId", op, f"{method.upper()} {path} has no operationId")
                    served[op["operationId"]] = (method.upper(), path)
        self.assertGreaterEqual(len(served), 10)
        missing = sorted(set(served) - set(OPERATIONS))
        self.assertEqual(missing, [], f"operations served by the API with no method in the Python client: {missing}")
        stale = sorted(set(OPERATIONS) - set(served))
        self.assertEqual(stale, [], f"methods for operations the API no longer serves: {stale}")
        for op_id, (dotted, method, path) in OPERATIONS.items():
            with self.subTest(op_id):
                self.assertEqual((method, path), served[op_id], f"{dotted} is mapped to the wrong request")
                self.assertTrue(callable(resolve(c, dotted)), f"client.{dotted} is not callable")

    def test_each_method_sends_its_operation(self) -> None:
        self.assertEqual(set(CALLS), set(OPERATIONS), "add a sample call for every operation")
        c = Settleflow(api_key="sk_test_" + "a" * 40, base_url="https://127.0.0.1:1")
        self.addCleanup(c.close)
        sent: List[Tuple[str, str]] = []
        answer: List[Any] = []

        def request(method: str, path: str, **kw: Any) -> Response:
            sent.append((method, path))
            return Response(200, Headers(), json.dumps(answer[0]).encode(), 1)

        c._transport.request = request  # type: ignore[method-assign]
        for op_id, (dotted, method, template) in OPERATIONS.items():
            args, kwargs, want_path, body = CALLS[op_id]
            with self.subTest(op_id):
                sent.clear()
                answer[:] = [body]
                resolve(c, dotted)(*args, **kwargs)
                self.assertEqual(sent, [(method, want_path)])
                self.assertTrue(fill(template, want_path), f"{want_path} does not fit {template}")


if __name__ == "__main__":
    unittest.main()
