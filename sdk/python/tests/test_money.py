"""Customers, refunds and the test faucet against a scripted local fake: the
requests each method sends, the objects it decodes, the 402 and refund errors,
paging and argument checks. test_server_money.py runs them against the real server."""

from __future__ import annotations

import copy
import datetime as dt
import json
import unittest
from typing import Any, Dict, List, Optional

import settleflow
from settleflow import (
    APIError,
    Balance,
    ConflictError,
    Customer,
    DepositInfo,
    InsufficientFundsError,
    InvalidRequestError,
    Money,
    NotFoundError,
    PaymentError,
    Refund,
    Settleflow,
    SettleflowError,
    Workflow,
)
from settleflow._models import DecodeError

from .harness import WORKFLOW_JSON, Fake, error_json

KEY = "sk_test_" + "M" * 40
WF = "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J"

CUSTOMER_JSON: Dict[str, Any] = {
    "object": "customer",
    "id": "cus_123",
    "livemode": False,
    "balance": {"onChain": 100000, "reserved": 358, "pendingWithdrawal": 0, "available": 99642, "currency": "usd"},
    "deposit": {
        "chainId": 84532, "network": "base-sepolia", "contract": "0x" + "c" * 40, "token": "0x" + "d" * 40,
        "customerRef": "0x" + "a" * 64,
    },
}


def refund_json(n: int = 1, **extra: Any) -> Dict[str, Any]:
    r: Dict[str, Any] = {
        "object": "refund", "id": f"re_{n:026d}", "livemode": False, "workflowId": WF, "amount": 100, "currency": "usd",
        "reason": "", "status": "Pending", "settlement": None, "failure": None,
        "createdAt": "2026-11-24T00:00:00Z", "updatedAt": "2026-11-24T00:00:01.5Z",
    }
    r.update(extra)
    return r


def page(items: List[Dict[str, Any]], more: bool = False) -> Dict[str, Any]:
    return {"object": "list", "url": "/v1/refunds", "data": items, "hasMore": more}


class FakeCase(unittest.TestCase):
    def fake(self, *script: Any) -> Fake:
        f = Fake(list(script))
        self.addCleanup(f.close)
        return f

    def client(self, fake: Fake, **kw: Any) -> Settleflow:
        kw.setdefault("max_retries", 0)
        c = Settleflow(api_key=KEY, base_url=fake.base_url, **kw)
        self.addCleanup(c.close)
        c._transport._sleep = lambda s: None
        return c


class TestModels(unittest.TestCase):
    def test_customer(self) -> None:
        c = Customer.from_wire(CUSTOMER_JSON)
        self.assertEqual(c.balance, Balance(on_chain=100000, reserved=358, pending_withdrawal=0, available=99642, currency="usd"))
        self.assertEqual(c.deposit, DepositInfo(chain_id=84532, network="base-sepolia", contract="0x" + "c" * 40,
                                                        token="0x" + "d" * 40, customer_ref="0x" + "a" * 64))
        self.assertEqual(c.raw, CUSTOMER_JSON)
        unfunded = Customer.from_wire({**CUSTOMER_JSON, "deposit": None})
        self.assertIsNone(unfunded.deposit)
        negative = copy.deepcopy(CUSTOMER_JSON)
        negative["balance"].update(pendingWithdrawal=100000, available=-358)
        self.assertEqual(Customer.from_wire(negative).balance.available, -358)
        broken = copy.deepcopy(CUSTOMER_JSON)
        broken["balance"]["available"] = "99642"
        with self.assertRaisesRegex(DecodeError, r"customer\.balance\.available is not an integer"):
            Customer.from_wire(broken)

    def test_refund(self) -> None:
        r = Refund.from_wire(refund_json(reason="duplicate charge"))
        self.assertEqual((r.workflow_id, r.amount, r.currency, r.reason, r.status), (WF, 100, "usd", "duplicate charge", "Pending"))
        self.assertEqual(r.updated_at, dt.datetime(2026, 11, 24, 0, 0, 1, 500000, tzinfo=dt.timezone.utc))
        self.assertIsNone(r.settlement)
        done = Refund.from_wire(refund_json(status="Succeeded", settlement={
            "chainId": 84532, "network": "base-sepolia", "txHash": "0xab", "blockNumber": 9, "confirmations": 3}))
        self.assertEqual(done.settlement.tx_hash, "0xab")  # type: ignore[union-attr]
        failed = Refund.from_wire(refund_json(status="Failed", failure={"code": "settlement_reverted", "message": "m"}))
        self.assertEqual(failed.failure.code, "settlement_reverted")  # type: ignore[union-attr]
        self.assertEqual(settleflow.REFUND_STATUSES, ("Pending", "Succeeded", "Failed"))

    def test_workflow_refunded(self) -> None:
        wire = copy.deepcopy(WORKFLOW_JSON)
        self.assertEqual(Workflow.from_wire(wire).refunded, Money(amount=0, currency="usd"))  # from a server without refunds
        wire["refunded"] = {"amount": 258, "currency": "usd"}
        self.assertEqual(Workflow.from_wire(wire).refunded, Money(amount=258, currency="usd"))
        wire["refunded"] = {"amount": "258", "currency": "usd"}
        with self.assertRaises(DecodeError):
            Workflow.from_wire(wire)


class TestEvents(unittest.TestCase):
    def event(self, type: str, data: Dict[str, Any]) -> Dict[str, Any]:
        return {"id": "evt_1", "object": "event", "type": type, "livemode": False, "createdAt": "2026-11-24T00:00:00Z", "data": data}

    def test_refund_events(self) -> None:
        for type, status in (("refund.succeeded", "Succeeded"), ("refund.failed", "Failed")):
            with self.subTest(type):
                ev = settleflow.Event.from_wire(self.event(type, {"workflowId": WF, "refund": refund_json(status=status)}))
                self.assertEqual(ev.data.workflow_id, WF)
                self.assertEqual(ev.data.refund, Refund.from_wire(refund_json(status=status)))
                self.assertIsNone(ev.data.quoted)
                self.assertIsNone(ev.data.margin)
                self.assertIsNone(ev.data.customer_id)
        with self.assertRaisesRegex(DecodeError, r"event\.data\.refund is missing"):
            settleflow.Event.from_wire(self.event("refund.succeeded", {"workflowId": WF}))

    def test_customer_funded(self) -> None:
        data = {"customerId": "cus_123", "deposit": {"amount": {"amount": 50000, "currency": "usd"}, "txHash": "0xfe", "blockNumber": 12},
                "balance": CUSTOMER_JSON["balance"]}
        ev = settleflow.Event.from_wire(self.event("customer.funded", data))
        self.assertEqual(ev.data.customer_id, "cus_123")
        self.assertEqual(ev.data.deposit, settleflow.Deposit(amount=Money(amount=50000, currency="usd"), tx_hash="0xfe", block_number=12))
        self.assertEqual(ev.data.balance.available, 99642)  # type: ignore[union-attr]
        self.assertIsNone(ev.data.workflow_id)
        self.assertIsNone(ev.data.refund)
        self.assertEqual(ev.data.raw, data)
        with self.assertRaisesRegex(DecodeError, r"event\.data\.balance is missing"):
            settleflow.Event.from_wire(self.event("customer.funded", {k: v for k, v in data.items() if k != "balance"}))

    def test_workflow_events_keep_their_fields_required_and_unknown_types_decode(self) -> None:
        with self.assertRaisesRegex(DecodeError, r"event\.data\.quoted is missing"):
            settleflow.Event.from_wire(self.event("workflow.completed", {"workflowId": WF, "status": "Settled", "margin": {"target": 0.3, "achieved": None}}))
        ev = settleflow.Event.from_wire(self.event("invoice.paid", {"invoiceId": "in_1"}))
        self.assertEqual(ev.type, "invoice.paid")
        self.assertIsNone(ev.data.workflow_id)
        self.assertEqual(ev.data.raw, {"invoiceId": "in_1"})
        self.assertEqual(settleflow.EVENT_TYPES[4:], ("refund.succeeded", "refund.failed", "customer.funded",
                                                      "customer.owner_set", "customer.withdrawal_requested"))

    def test_customer_owner_set(self) -> None:
        data = {"customerId": "cus_123", "owner": {"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "txHash": "0xo1", "blockNumber": 14},
                "balance": CUSTOMER_JSON["balance"]}
        ev = settleflow.Event.from_wire(self.event("customer.owner_set", data))
        self.assertEqual(ev.data.customer_id, "cus_123")
        self.assertEqual(ev.data.owner, settleflow.OwnerSet(address="0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", tx_hash="0xo1", block_number=14))
        self.assertEqual(ev.data.balance.available, 99642)  # type: ignore[union-attr]
        self.assertIsNone(ev.data.deposit)
        self.assertIsNone(ev.data.withdrawal)
        with self.assertRaisesRegex(DecodeError, r"event\.data\.owner is missing"):
            settleflow.Event.from_wire(self.event("customer.owner_set", {k: v for k, v in data.items() if k != "owner"}))

    def test_customer_withdrawal_requested(self) -> None:
        data = {"customerId": "cus_123", "withdrawal": {"amount": {"amount": 1234, "currency": "usd"}, "availableAt": "2026-12-01T00:00:00Z",
                                                       "txHash": "0xw1", "blockNumber": 15},
                "balance": CUSTOMER_JSON["balance"]}
        ev = settleflow.Event.from_wire(self.event("customer.withdrawal_requested", data))
        w = ev.data.withdrawal
        assert w is not None
        self.assertEqual(w.amount, Money(amount=1234, currency="usd"))
        self.assertEqual(w.available_at, dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc))
        self.assertEqual((w.tx_hash, w.block_number), ("0xw1", 15))
        self.assertIsNone(ev.data.owner)
        # availableAt is optional; balance is not.
        del data["withdrawal"]["availableAt"]  # type: ignore[attr-defined]
        self.assertIsNone(settleflow.Event.from_wire(self.event("customer.withdrawal_requested", data)).data.withdrawal.available_at)  # type: ignore[union-attr]
        with self.assertRaisesRegex(DecodeError, r"event\.data\.balance is missing"):
            settleflow.Event.from_wire(self.event("customer.withdrawal_requested", {k: v for k, v in data.items() if k != "balance"}))


class TestRequests(FakeCase):
    def test_customers_fetch(self) -> None:
        f = self.fake((200, {}, CUSTOMER_JSON))
        c = self.client(f)
        cus = c.customers.fetch("cus_123")
        self.assertEqual(cus.balance.available, 99642)
        c.customers.fetch("cus_a/b")
        self.assertEqual([(s.method, s.path, s.body) for s in f.seen], [("GET", "/v1/customers/cus_123", b""), ("GET", "/v1/customers/cus_a%2Fb", b"")])
        self.assertNotIn("idempotency-key", f.seen[0].headers)

    def test_fund_customer(self) -> None:
        f = self.fake((200, {}, CUSTOMER_JSON))
        c = self.client(f)
        self.assertEqual(c.test_helpers.fund_customer("cus_123", 50_000).balance.on_chain, 100000)
        c.test_helpers.fund_customer("cus_123", 1)
        self.assertEqual([(s.method, s.path, json.loads(s.body)) for s in f.seen], [
            ("POST", "/v1/test_helpers/customers/cus_123/fund", {"amount": 50000}),
            ("POST", "/v1/test_helpers/customers/cus_123/fund", {"amount": 1}),
        ])

    def test_fund_customer_is_not_retried(self) -> None:
        # Every call deposits: a retry after a lost answer would deposit twice.
        f = self.fake((500, {}, error_json("api_error", "internal_error", "x")), (200, {}, CUSTOMER_JSON))
        c = self.client(f, max_retries=3)
        with self.assertRaises(APIError) as cm:
            c.test_helpers.fund_customer("cus_123", 500)
        self.assertEqual((cm.exception.status, cm.exception.attempts), (500, 1))
        self.assertEqual(len(f.seen), 1)
        g = self.fake((503, {}, error_json("api_error", "service_unavailable", "x")), (200, {}, CUSTOMER_JSON))
        self.assertEqual(self.client(g, max_retries=1).customers.fetch("cus_123").id, "cus_123")
        self.assertEqual(len(g.seen), 2)

    def test_refunds_create(self) -> None:
        f = self.fake((201, {}, refund_json(reason="duplicate")), (201, {}, refund_json(2, amount=258)))
        c = self.client(f)
        r = c.refunds.create(WF, amount=100, reason="duplicate", idempotency_key="refund-1")
        self.assertEqual((r.amount, r.reason, r.status), (100, "duplicate", "Pending"))
        rest = c.refunds.create(WF)
        self.assertEqual(rest.amount, 258)
        self.assertEqual([(s.method, s.path, s.body) for s in f.seen], [
            ("POST", f"/v1/workflows/{WF}/refunds", b'{"amount":100,"reason":"duplicate"}'),
            ("POST", f"/v1/workflows/{WF}/refunds", b"{}"),
        ])
        self.assertEqual(f.seen[0].headers["idempotency-key"], "refund-1")
        self.assertRegex(f.seen[1].headers["idempotency-key"], r"^[0-9a-f-]{36}$")

    def test_refunds_create_retried_with_the_same_key(self) -> None:
        f = self.fake((503, {}, error_json("api_error", "service_unavailable", "x")), (201, {}, refund_json()))
        self.client(f, max_retries=1).refunds.create(WF, amount=100)
        self.assertEqual(len(f.seen), 2)
        self.assertEqual(f.seen[0].headers["idempotency-key"], f.seen[1].headers["idempotency-key"])
        self.assertEqual(f.seen[0].body, f.seen[1].body)

    def test_refunds_fetch_and_list(self) -> None:
        f = self.fake((200, {}, refund_json(3)), (200, {}, page([refund_json(2)])))
        c = self.client(f)
        self.assertEqual(c.refunds.fetch(refund_json(3)["id"]).id, refund_json(3)["id"])
        p = c.refunds.list(workflow_id="wf_1", status="Succeeded", limit=5, starting_after="re_9")
        self.assertEqual((p.url, len(p), p.has_more), ("/v1/refunds", 1, False))
        self.assertIsInstance(p.data[0], Refund)
        c.refunds.list()
        self.assertEqual([s.path for s in f.seen], [
            "/v1/refunds/" + refund_json(3)["id"],
            "/v1/refunds?workflowId=wf_1&status=Succeeded&limit=5&startingAfter=re_9",
            "/v1/refunds",
        ])

    def test_refunds_list_auto_paging(self) -> None:
        r = [refund_json(n) for n in (5, 4, 3, 2, 1)]  # newest first
        f = self.fake((200, {}, page(r[0:2], True)), (200, {}, page(r[2:4], True)), (200, {}, page(r[4:], False)))
        c = self.client(f)
        got = [x.id for x in c.refunds.list_auto_paging(workflow_id="wf_1", limit=2)]
        self.assertEqual(got, [x["id"] for x in r])
        self.assertEqual([s.path for s in f.seen], [
            "/v1/refunds?workflowId=wf_1&limit=2",
            f"/v1/refunds?workflowId=wf_1&limit=2&startingAfter={r[1]['id']}",
            f"/v1/refunds?workflowId=wf_1&limit=2&startingAfter={r[3]['id']}",
        ])
        # backwards from the oldest: newer pages, each yielded oldest first
        g = self.fake((200, {}, page(r[3:4], True)), (200, {}, page(r[1:3], False)))
        back = [x.id for x in self.client(g).refunds.list_auto_paging(limit=2, ending_before=r[4]["id"])]
        self.assertEqual(back, [r[3]["id"], r[2]["id"], r[1]["id"]])
        self.assertEqual(g.seen[1].path, f"/v1/refunds?limit=2&endingBefore={r[3]['id']}")


class TestMoneyErrors(FakeCase):
    def test_402_insufficient_funds(self) -> None:
        body = error_json("payment_error", "insufficient_funds", "customer cus_insufficient_funds has 0 usd available, the quote is 358")
        body["error"].update(available=0, amount=358, currency="usd", customerId="cus_insufficient_funds")
        f = self.fake((402, {}, body))
        c = self.client(f, max_retries=2)
        with self.assertRaises(InsufficientFundsError) as cm:
            c.workflows.create(product="ticket-triage", customer_id="cus_insufficient_funds", payload={"ticketId": "T"})
        e = cm.exception
        self.assertIsInstance(e, PaymentError)
        self.assertIsInstance(e, APIError)
        self.assertEqual((e.status, e.type, e.code), (402, "payment_error", "insufficient_funds"))
        self.assertEqual((e.available, e.amount, e.currency, e.customer_id), (0, 358, "usd", "cus_insufficient_funds"))
        self.assertEqual(e.attempts, 1)
        self.assertEqual(len(f.seen), 1, "a 402 is not retried")
        self.assertEqual(e.body, body)
        self.assertIn("402 payment_error insufficient_funds: customer cus_insufficient_funds has 0 usd available", str(e))
        self.assertIn("available=0, amount=358", repr(e))

    def test_402_amounts_of_the_wrong_type_are_none(self) -> None:
        body = error_json("payment_error", "insufficient_funds", "m")
        body["error"].update(available="0", amount=True, currency=5)
        with self.assertRaises(InsufficientFundsError) as cm:
            self.client(self.fake((402, {}, body))).workflows.create(product="p", customer_id="cus_1", payload={})
        e = cm.exception
        self.assertEqual((e.available, e.amount, e.currency, e.customer_id), (None, None, None, None))

    def test_other_402_is_a_payment_error(self) -> None:
        f = self.fake((402, {}, error_json("payment_error", "card_declined", "declined")))
        with self.assertRaises(PaymentError) as cm:
            self.client(f).workflows.create(product="p", customer_id="cus_1", payload={})
        self.assertNotIsInstance(cm.exception, InsufficientFundsError)
        self.assertEqual(cm.exception.code, "card_declined")

    def test_refund_errors(self) -> None:
        cases = [
            (409, error_json("invalid_request_error", "workflow_not_settled", "workflow is Running"), ConflictError, None),
            (409, error_json("invalid_request_error", "refunds_not_supported", "no refunds"), ConflictError, None),
            (400, error_json("invalid_request_error", "amount_exceeds_refundable", "only 258 is left", "amount"), InvalidRequestError, "amount"),
            (404, error_json("invalid_request_error", "resource_missing", "no such workflow"), NotFoundError, None),
        ]
        for status, body, cls, param in cases:
            with self.subTest(code=body["error"]["code"]):
                f = self.fake((status, {}, body))
                with self.assertRaises(cls) as cm:
                    self.client(f).refunds.create(WF, amount=500)
                e = cm.exception
                self.assertEqual((e.status, e.code, e.param), (status, body["error"]["code"], param))

    def test_made_by_hand(self) -> None:
        e = InsufficientFundsError("m", status=402, available=5, amount=358, currency="usd", customer_id="cus_1")
        self.assertEqual((e.available, e.amount, e.status), (5, 358, 402))
        self.assertIsInstance(PaymentError("p"), SettleflowError)


class TestArguments(FakeCase):
    def refused(self, f: Fake, param: str, call: Any) -> None:
        with self.assertRaises(InvalidRequestError) as cm:
            call()
        e = cm.exception
        self.assertEqual((e.param, e.code, e.status), (param, "parameter_invalid", None), repr(e))
        self.assertEqual(f.seen, [], "nothing is sent")

    def test_bad_arguments_raise_settleflow_errors_before_sending(self) -> None:
        f = self.fake((200, {}, CUSTOMER_JSON))
        c = self.client(f)
        self.refused(f, "customer_id", lambda: c.customers.fetch(""))
        self.refused(f, "customer_id", lambda: c.customers.fetch(None))  # type: ignore[arg-type]
        self.refused(f, "customer_id", lambda: c.test_helpers.fund_customer("", 5))
        for bad in ("500", 5.0, True, None, [5]):
            with self.subTest(amount=bad):
                self.refused(f, "amount", lambda: c.test_helpers.fund_customer("cus_1", bad))  # type: ignore[arg-type]
                self.refused(f, "amount", lambda: c.refunds.create(WF, amount=bad) if bad is not None else c.refunds.create(WF, amount="x"))  # type: ignore[arg-type]
        self.refused(f, "reason", lambda: c.refunds.create(WF, reason=5))  # type: ignore[arg-type]
        self.refused(f, "workflow_id", lambda: c.refunds.create(""))
        self.refused(f, "id", lambda: c.refunds.fetch(""))
        for bad in ("", "x" * 256, "a\r\nb", "clé"):
            self.refused(f, "idempotency_key", lambda: c.refunds.create(WF, idempotency_key=bad))

    def test_operations_table(self) -> None:
        ops: Dict[str, Optional[str]] = {k: v[0] for k, v in settleflow.OPERATIONS.items()}
        self.assertEqual(ops["fetchCustomer"], "customers.fetch")
        self.assertEqual(ops["createRefund"], "refunds.create")
        self.assertEqual(ops["fetchRefund"], "refunds.fetch")
        self.assertEqual(ops["listRefunds"], "refunds.list")
        self.assertEqual(ops["fundTestCustomer"], "test_helpers.fund_customer")


if __name__ == "__main__":
    unittest.main()
