"""Customer funds and refunds against the real reference server.

What runs depends on what the server can do, and each skip says what it waits for:

* the routes (GET /v1/customers/{id}, refunds, the test faucet): without them
  in the served OpenAPI document, these tests are skipped;
* customer funds (a settler that charges customer balances: a customer's
  ``deposit`` is not None): without them, the server must answer refunds and
  the faucet with 409 ``refunds_not_supported``, and the tests of funds and
  refunds on chain are skipped.

``SETTLEFLOW_TEST_FUNDS=require`` turns those skips into failures.
"""

from __future__ import annotations

import os
import time
import unittest
from typing import Callable, List, Optional, Tuple, TypeVar

import settleflow
from settleflow import (
    ConflictError,
    InsufficientFundsError,
    InvalidRequestError,
    NotFoundError,
    PaymentError,
    PermissionDeniedError,
    Refund,
    Settleflow,
)

from . import harness

T = TypeVar("T")
TRIAGE = {"ticketId": "T-42", "subject": "Refund for invoice 7", "attachments": 1}
OPS = ("fetchCustomer", "createRefund", "fetchRefund", "listRefunds", "fundTestCustomer")
REQUIRE = os.environ.get("SETTLEFLOW_TEST_FUNDS") == "require"
NO_ROUTES = "the server does not serve the customer and refund routes"
NO_FUNDS = "the server does not charge customer balances (customer.deposit is None), as the reference server built from this repository does"

_capabilities: Optional[Tuple[bool, bool]] = None


def capabilities() -> Tuple[bool, bool]:
    """(routes, funded) of the test server, asked once."""
    global _capabilities
    if _capabilities is None:
        c = harness.client()
        try:
            served = {op.get("operationId") for item in c.openapi()["paths"].values() for op in item.values() if isinstance(op, dict)}
            routes = all(op in served for op in OPS)
            funded = routes and c.customers.fetch(harness.unique("cus_probe")).deposit is not None
        finally:
            c.close()
        _capabilities = (routes, funded)
    return _capabilities


def wait(fn: Callable[[], Optional[T]], what: str, timeout: float = 60) -> T:
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


class MoneyCase(unittest.TestCase):
    def setUp(self) -> None:
        self.c: Settleflow = harness.client()
        self.addCleanup(self.c.close)

    def need(self, funds: bool) -> None:
        routes, funded = capabilities()
        why = NO_ROUTES if not routes else NO_FUNDS if funds and not funded else None
        if why:
            if REQUIRE:
                self.fail(why)
            self.skipTest(why)

    def settled(self, wf_id: str) -> settleflow.Workflow:
        def fetch() -> Optional[settleflow.Workflow]:
            wf = self.c.workflows.fetch(wf_id)
            self.assertNotEqual(wf.status, "Failed", wf.failure)
            return wf if wf.status == "Settled" else None

        return wait(fetch, f"{wf_id} Settled")


class TestAnyServer(MoneyCase):
    def test_workflow_refunded_is_zero_until_refunded(self) -> None:
        wf = self.c.workflows.create(product="ticket-triage", customer_id=harness.unique("cus_refunded"), payload=TRIAGE)
        self.assertEqual(wf.refunded, settleflow.Money(amount=0, currency="usd"))
        self.assertEqual(wf.raw["refunded"], {"amount": 0, "currency": "usd"})

    def test_customer_never_seen_has_a_zero_balance(self) -> None:
        self.need(funds=False)
        cid = harness.unique("cus_new")
        cus = self.c.customers.fetch(cid)
        self.assertEqual((cus.object, cus.id, cus.livemode), ("customer", cid, False))
        self.assertEqual(cus.balance, settleflow.Balance(on_chain=0, reserved=0, pending_withdrawal=0, available=0, currency="usd"))
        if cus.deposit is not None:
            self.assertRegex(cus.deposit.contract, r"^0x[0-9a-fA-F]{40}$")
            self.assertRegex(cus.deposit.customer_ref, r"^0x[0-9a-f]{64}$")
        with self.assertRaises(InvalidRequestError) as cm:
            self.c.customers.fetch("not-a-customer")
        e = cm.exception
        self.assertEqual((e.status, e.code, e.param), (400, "parameter_invalid", "customerId"))

    def test_faucet_with_a_live_key(self) -> None:
        self.need(funds=False)
        live = harness.client(harness.server().live_key)
        self.addCleanup(live.close)
        with self.assertRaises(PermissionDeniedError) as cm:
            live.test_helpers.fund_customer(harness.unique("cus_live"), 500)
        # test_mode_only; a server without live settlement refuses the live key before (livemode_not_configured).
        self.assertEqual(cm.exception.status, 403)
        self.assertIn(cm.exception.code, ("test_mode_only", "livemode_not_configured"))

    def test_refund_list_and_fetch(self) -> None:
        self.need(funds=False)
        wf = "wf_01M835T2ZC03XQ0RBX68RJJRB0"
        page = self.c.refunds.list(workflow_id=wf, limit=5)
        self.assertEqual((page.data, page.has_more, page.url), ([], False, "/v1/refunds"))
        self.assertEqual(list(self.c.refunds.list_auto_paging(workflow_id=wf, status="Failed")), [])
        with self.assertRaises(NotFoundError) as cm:
            self.c.refunds.fetch("re_01M835T2ZC03XQ0RBX68RJJRB0")
        self.assertEqual(cm.exception.code, "resource_missing")
        for kwargs, param in ((dict(status="Settled"), "status"), (dict(limit=0), "limit")):
            with self.subTest(param=param):
                with self.assertRaises(InvalidRequestError) as cm2:
                    self.c.refunds.list(**kwargs)  # type: ignore[arg-type]
                self.assertEqual((cm2.exception.status, cm2.exception.param), (400, param))

    def test_without_funds_refunds_and_the_faucet_are_refused(self) -> None:
        self.need(funds=False)
        if capabilities()[1]:
            self.skipTest("this server charges customer balances: TestFundedServer covers refunds and the faucet")
        wf = self.c.workflows.create(product="ticket-triage", customer_id=harness.unique("cus_nofunds"), payload=TRIAGE)
        self.settled(wf.id)
        for call in (lambda: self.c.refunds.create(wf.id, amount=1), lambda: self.c.test_helpers.fund_customer(harness.unique("cus_f"), 500)):
            with self.assertRaises(ConflictError) as cm:
                call()
            self.assertEqual((cm.exception.status, cm.exception.code), (409, "refunds_not_supported"))


class TestFundedServer(MoneyCase):
    def test_402_insufficient_funds(self) -> None:
        self.need(funds=True)
        cid = "cus_insufficient_funds"
        quote = self.c.quotes.create(product="ticket-triage", customer_id=cid, payload=TRIAGE)
        with self.assertRaises(InsufficientFundsError) as cm:
            self.c.workflows.create(product="ticket-triage", customer_id=cid, payload=TRIAGE)
        e = cm.exception
        self.assertIsInstance(e, PaymentError)
        self.assertEqual((e.status, e.type, e.code, e.attempts), (402, "payment_error", "insufficient_funds", 1))
        self.assertEqual((e.customer_id, e.amount, e.currency), (cid, quote.quoted.amount, "usd"))
        assert e.available is not None and e.amount is not None
        self.assertLess(e.available, e.amount)
        self.assertTrue((e.request_id or "").startswith("req_"))
        self.assertEqual(self.c.workflows.list(customer_id=cid).data, [])
        self.assertEqual(self.c.customers.fetch(cid).balance.available, e.available)

    def test_fund_charge_refund(self) -> None:
        self.need(funds=True)
        srv = harness.server()
        cid = harness.unique("cus_money")
        funded = self.c.test_helpers.fund_customer(cid, 50_000)
        self.assertEqual((funded.object, funded.id), ("customer", cid))
        self.assertGreaterEqual(funded.balance.on_chain, 50_000)
        self.assertIsNotNone(funded.deposit)
        b = funded.balance
        self.assertEqual(b.available, b.on_chain - b.reserved - b.pending_withdrawal)
        assert srv.receiver is not None
        d = srv.receiver.wait_for(lambda d: d.json().get("type") == "customer.funded" and d.json()["data"].get("customerId") == cid, timeout=60)
        ev = settleflow.webhooks.construct(d.body, d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret)
        self.assertEqual(ev.data.customer_id, cid)
        assert ev.data.deposit is not None and ev.data.balance is not None
        self.assertGreater(ev.data.deposit.amount.amount, 0)
        self.assertTrue(ev.data.deposit.tx_hash.startswith("0x"))

        wf = self.c.workflows.create(product="ticket-triage", customer_id=cid, payload=TRIAGE)
        made: List[Refund] = []
        try:  # not Settled yet (it takes seconds); should it be, this refund of 1 counts with the others
            made.append(self.c.refunds.create(wf.id, amount=1))
        except ConflictError as e:
            self.assertEqual((e.status, e.code), (409, "workflow_not_settled"))
        settled = self.settled(wf.id)

        def succeeded(r: Refund) -> Refund:
            def fetch() -> Optional[Refund]:
                x = self.c.refunds.fetch(r.id)
                self.assertNotEqual(x.status, "Failed", x.failure)
                return x if x.status == "Succeeded" else None

            return wait(fetch, f"refund {r.id} Succeeded")

        if made:
            succeeded(made[0])
        else:
            self.assertEqual(settled.refunded.amount, 0)
        after_charge = self.c.customers.fetch(cid).balance
        self.assertEqual(after_charge.reserved, 0)

        key = harness.unique("refund")
        partial = self.c.refunds.create(wf.id, amount=100, reason="duplicate ticket", idempotency_key=key)
        self.assertTrue(partial.id.startswith("re_"))
        self.assertEqual((partial.object, partial.workflow_id, partial.amount, partial.currency, partial.reason, partial.status),
                         ("refund", wf.id, 100, "usd", "duplicate ticket", "Pending"))
        self.assertEqual(self.c.refunds.create(wf.id, amount=100, reason="duplicate ticket", idempotency_key=key).id, partial.id)
        rest = self.c.refunds.create(wf.id)
        self.assertGreater(rest.amount, 0)
        self.assertEqual(rest.reason, "")
        made += [partial, rest]
        with self.assertRaises(InvalidRequestError) as cm:
            self.c.refunds.create(wf.id, amount=1)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.param), (400, "amount_exceeds_refundable", "amount"))

        done = [succeeded(r) for r in made]
        for r in done:
            self.assertTrue(r.settlement is not None and r.settlement.tx_hash.startswith("0x"), r.settlement)
            self.assertIsNone(r.failure)
        total = sum(r.amount for r in made)
        self.assertEqual(self.c.workflows.fetch(wf.id).refunded, settleflow.Money(amount=total, currency="usd"))
        after = self.c.customers.fetch(cid).balance
        early = made[0].amount if len(made) == 3 else 0
        self.assertEqual(after.on_chain - after_charge.on_chain, total - early, "the refunds are back in the balance")

        newest_first = [r.id for r in reversed(made)]
        self.assertEqual([r.id for r in self.c.refunds.list(workflow_id=wf.id)], newest_first)
        self.assertEqual([r.id for r in self.c.refunds.list_auto_paging(workflow_id=wf.id, limit=1)], newest_first)
        self.assertEqual(self.c.refunds.list(workflow_id=wf.id, status="Pending").data, [])
        self.assertEqual([r.id for r in self.c.refunds.list_auto_paging(workflow_id=wf.id, ending_before=partial.id)], [rest.id])

        # The refund.succeeded deliveries verify, and carry the refund.
        for r in done:
            d = srv.receiver.wait_for(
                lambda d: d.json().get("type") == "refund.succeeded" and d.json()["data"].get("refund", {}).get("id") == r.id, timeout=60)
            ev = settleflow.webhooks.construct(d.body, d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret)
            self.assertEqual(ev.data.workflow_id, wf.id)
            self.assertEqual(ev.data.refund, r)
            self.assertEqual(self.c.events.fetch(ev.id), ev)


if __name__ == "__main__":
    unittest.main()
