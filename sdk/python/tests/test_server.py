"""Against the real reference server (built from this repository and started by the harness)."""

from __future__ import annotations

import datetime as dt
import json
import time
import unittest
from decimal import Decimal
from typing import Any, List, Tuple

import settleflow
from settleflow import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    IdempotencyError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    Settleflow,
    SignatureVerificationError,
    Workflow,
)

from . import harness

TRIAGE = {"ticketId": "T-42", "subject": "Refund for invoice 7", "attachments": 1}


def setUpModule() -> None:
    harness.server()


def wait_for_status(client: Settleflow, wf_id: str, statuses: Tuple[str, ...] = ("Settled", "Failed"), timeout: float = 30) -> Workflow:
    deadline = time.monotonic() + timeout
    while True:
        wf = client.workflows.fetch(wf_id)
        if wf.status in statuses:
            return wf
        if time.monotonic() > deadline:
            raise AssertionError(f"{wf_id} still {wf.status} after {timeout} s")
        time.sleep(0.1)


class ServerCase(unittest.TestCase):
    def client(self, key: Any = None, **kw: Any) -> Settleflow:
        c = harness.client(key, **kw)
        self.addCleanup(c.close)
        return c


class TestWorkflows(ServerCase):
    def test_create_fetch_list(self) -> None:
        c = self.client()
        customer = harness.unique("cus_flow")
        wf = c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE)
        self.assertTrue(wf.id.startswith("wf_"))
        self.assertEqual(wf.status, "Pending")
        self.assertEqual(wf.customer_id, customer)
        self.assertEqual(wf.payload, TRIAGE)
        self.assertEqual(wf.quoted.amount, 358)
        self.assertEqual(wf.quoted.currency, "usd")
        self.assertEqual(wf.margin.target, Decimal("0.3"))
        self.assertIsNone(wf.margin.achieved)
        self.assertEqual(wf.created_at.tzinfo, dt.timezone.utc)
        self.assertLess(abs((dt.datetime.now(dt.timezone.utc) - wf.created_at).total_seconds()), 60)
        self.assertFalse(wf.livemode)

        settled = wait_for_status(c, wf.id)
        self.assertEqual(settled.status, "Settled")
        self.assertEqual(settled.id, wf.id)
        self.assertEqual(settled.payload, TRIAGE)
        self.assertIsInstance(settled.margin.achieved, Decimal)
        # 4 decimals on the wire, kept exactly
        self.assertEqual(settled.margin.achieved, settled.margin.achieved.quantize(Decimal("0.0001")))  # type: ignore[union-attr]
        self.assertEqual(settled.result, {"ticketId": "T-42", "queue": "billing"})
        self.assertTrue(settled.settlement.tx_hash.startswith("0x"))  # type: ignore[union-attr]
        self.assertIsNone(settled.failure)
        self.assertGreaterEqual(settled.updated_at, settled.created_at)

        page = c.workflows.list(customer_id=customer)
        self.assertEqual([w.id for w in page.data], [wf.id])
        self.assertFalse(page.has_more)
        self.assertEqual(page.url, "/v1/workflows")
        self.assertEqual([w.id for w in c.workflows.list(status="Settled", customer_id=customer, limit=5)], [wf.id])
        self.assertEqual(c.workflows.list(status="Pending", customer_id=customer).data, [])

    def test_auto_paging_over_pages_without_duplicates_or_gaps(self) -> None:
        c = self.client()
        customer = harness.unique("cus_pages")
        created = [c.workflows.create(product="ticket-triage", customer_id=customer, payload={"ticketId": f"T-{i}"}).id for i in range(7)]
        calls: List[Any] = []
        real = c._transport.request

        def spy(method: str, path: str, **kw: Any) -> Any:
            calls.append((method, path, dict(kw.get("query") or {})))
            return real(method, path, **kw)

        c._transport.request = spy  # type: ignore[method-assign]
        got = [w.id for w in c.workflows.list_auto_paging(customer_id=customer, limit=2)]
        self.assertEqual(got, list(reversed(created)))  # newest first, each once, none missing
        self.assertEqual(len(calls), 4)  # 2 + 2 + 2 + 1
        self.assertEqual([q["startingAfter"] for _, _, q in calls], [None, got[1], got[3], got[5]])

        # backwards from the oldest: the newer ones, oldest first
        calls.clear()
        back = [w.id for w in c.workflows.list_auto_paging(customer_id=customer, limit=2, ending_before=created[0])]
        self.assertEqual(back, created[1:])
        self.assertEqual(len(calls), 3)

        # lazily: taking 3 fetches 2 pages
        calls.clear()
        it = c.workflows.list_auto_paging(customer_id=customer, limit=2)
        self.assertEqual([next(it).id for _ in range(3)], got[:3])
        self.assertEqual(len(calls), 2)

        # one page, explicitly
        p1 = c.workflows.list(customer_id=customer, limit=3)
        p2 = c.workflows.list(customer_id=customer, limit=3, starting_after=p1.data[-1].id)
        self.assertTrue(p1.has_more)
        self.assertEqual([w.id for w in p1] + [w.id for w in p2], got[:6])

    def test_quotes_and_products(self) -> None:
        c = self.client()
        products = c.products.list()
        names = [p.name for p in products]
        self.assertIn("ticket-triage", names)
        self.assertFalse(products.has_more)
        triage = c.products.fetch("ticket-triage")
        self.assertEqual(triage.target_margin, Decimal("0.3"))
        self.assertEqual(triage.minimum_charge.amount, 50)
        self.assertEqual(triage.payload_schema["required"], ["ticketId"])
        self.assertEqual(triage.example, TRIAGE)
        q = c.quotes.create(product="ticket-triage", customer_id="cus_quote", payload=TRIAGE)
        self.assertEqual(q.object, "quote")
        self.assertEqual(q.quoted.amount, 358)
        self.assertEqual(q.margin.target, Decimal("0.3"))
        self.assertEqual(q.payload, TRIAGE)
        with self.assertRaises(NotFoundError):
            c.products.fetch("no-such-product")

    def test_cancel(self) -> None:
        c = self.client()
        customer = harness.unique("cus_cancel")
        # One worker runs the backlog 50 ms at a time: the newest of a burst is still Pending.
        for _ in range(3):
            ids = [c.workflows.create(product="ticket-triage", customer_id=customer, payload={"ticketId": f"T-{i}"}).id for i in range(6)]
            try:
                canceled = c.workflows.cancel(ids[-1])
            except ConflictError as e:
                self.assertIn(e.code, ("workflow_running", "workflow_settling", "workflow_settled"))
                continue
            break
        else:
            self.fail("no cancel won in three bursts")
        self.assertEqual(canceled.status, "Canceled")
        self.assertIsNone(canceled.settlement)
        self.assertEqual(c.workflows.fetch(ids[-1]).status, "Canceled")
        with self.assertRaises(ConflictError) as cm:
            c.workflows.cancel(ids[-1])
        self.assertEqual(cm.exception.code, "workflow_canceled")
        self.assertEqual(cm.exception.status, 409)
        settled = wait_for_status(c, ids[0])
        with self.assertRaises(ConflictError) as cm:
            c.workflows.cancel(settled.id)
        self.assertEqual(cm.exception.code, "workflow_settled")

    def test_events(self) -> None:
        c = self.client()
        wf = c.workflows.create(product="ticket-triage", customer_id=harness.unique("cus_events"), payload=TRIAGE)
        settled = wait_for_status(c, wf.id)
        deadline = time.monotonic() + 10
        while True:
            page = c.events.list(workflow_id=wf.id)
            if page.data or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(len(page.data), 1)
        ev = page.data[0]
        self.assertEqual(ev.type, "workflow.completed")
        self.assertEqual(ev.data.workflow_id, wf.id)
        self.assertEqual(ev.data.margin.achieved, settled.margin.achieved)
        self.assertEqual(ev.data.settlement, settled.settlement)
        self.assertEqual(c.events.fetch(ev.id), ev)
        assert ev.created_at is not None  # the server always sends it
        since = ev.created_at - dt.timedelta(microseconds=1)
        self.assertIn(ev.id, [e.id for e in c.events.list_auto_paging(created_after=since, limit=1)])
        # created_at is cut to microseconds, so one microsecond later is surely after the event
        after = ev.created_at + dt.timedelta(microseconds=1)
        self.assertEqual(c.events.list(type="workflow.completed", workflow_id=wf.id, created_after=after).data, [])
        with self.assertRaises(NotFoundError):
            c.events.fetch("evt_00000000000000000000000000")


class TestMargins(ServerCase):
    def test_report(self) -> None:
        c = self.client()
        customer = harness.unique("cus_margin")
        wf = c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE)
        settled = wait_for_status(c, wf.id)
        self.assertEqual(settled.status, "Settled")
        after = wf.created_at - dt.timedelta(seconds=1)
        rep = c.margins.report(group_by="customer", created_after=after)
        self.assertEqual((rep.object, rep.livemode, rep.group_by, rep.product, rep.currency), ("margin_report", False, "customer", "", "usd"))
        self.assertEqual(rep.created_after, after)
        self.assertIsNone(rep.created_before)
        rows = [r for r in rep if r.key == customer]
        self.assertEqual(len(rows), 1, [r.key for r in rep])
        row = rows[0]
        self.assertEqual((row.workflows, row.charged, row.refunded.amount), (1, settled.quoted, 0))
        self.assertGreaterEqual(row.cost.amount, 0)
        # The report truncates to a basis point, the workflow's margin rounds: at most one apart.
        assert row.margin is not None and settled.margin.achieved is not None
        self.assertLessEqual(abs(row.margin - settled.margin.achieved), Decimal("0.0001"))
        self.assertGreaterEqual(rep.total.workflows, 1)
        self.assertEqual(rep.total.key, "")
        day = c.margins.report(group_by="day", product="ticket-triage", created_after=after,
                               created_before=(dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1)).isoformat())
        self.assertIn(settled.created_at.strftime("%Y-%m-%d"), [r.key for r in day])
        self.assertEqual(day.product, "ticket-triage")
        for kw, code, param in [
            (dict(group_by="week"), "parameter_invalid", "groupBy"),
            (dict(group_by="day", product="no-such-product"), "parameter_invalid", "product"),
            (dict(group_by="day", created_after="yesterday"), "parameter_invalid", "createdAfter"),
            (dict(group_by="day", created_after=dt.datetime.now(dt.timezone.utc), created_before=after), "parameter_invalid", "createdBefore"),
        ]:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(InvalidRequestError) as cm:
                    c.margins.report(**kw)  # type: ignore[arg-type]
                self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.param), (400, code, param))


class TestErrors(ServerCase):
    def test_401(self) -> None:
        wrong = "sk_test_" + "W" * 40
        c = self.client(wrong)
        with self.assertRaises(AuthenticationError) as cm:
            c.workflows.list()
        e = cm.exception
        self.assertEqual((e.status, e.type), (401, "authentication_error"))
        self.assertTrue(e.code)
        self.assertTrue((e.request_id or "").startswith("req_"))
        self.assertEqual(e.attempts, 1)
        self.assertNotIn(wrong, str(e) + repr(e))

    def test_400_names_the_param(self) -> None:
        c = self.client()
        cases = [
            (lambda: c.workflows.create(product="ticket-triage", customer_id="nope", payload=TRIAGE), "customerId"),
            (lambda: c.workflows.create(product="ticket-triage", customer_id="cus_1", payload={"ticketId": "T", "x": 1}), "payload.x"),
            (lambda: c.workflows.list(limit=0), "limit"),
            (lambda: c.workflows.list(status="Done"), "status"),
            (lambda: c.quotes.create(product="ticket-triage", customer_id="cus_1", payload={}), "payload.ticketId"),
        ]
        for call, param in cases:
            with self.subTest(param):
                with self.assertRaises(InvalidRequestError) as cm:
                    call()
                e = cm.exception
                self.assertEqual((e.status, e.type, e.param), (400, "invalid_request_error", param), str(e))
                self.assertTrue(e.code and e.message)
                self.assertIn(param, str(e))

    def test_403_live_key_without_live_settlement(self) -> None:
        with self.assertRaises(PermissionDeniedError) as cm:
            self.client(harness.server().live_key).workflows.list()
        e = cm.exception
        self.assertEqual((e.status, e.type, e.code, e.attempts), (403, "permission_error", "livemode_not_configured", 1))

    def test_404(self) -> None:
        with self.assertRaises(NotFoundError) as cm:
            self.client().workflows.fetch("wf_00000000000000000000000000")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "resource_missing"))

    def test_409_idempotency_key_reused_with_another_body(self) -> None:
        c = self.client()
        key = harness.unique("idem")
        a = c.workflows.create(product="ticket-triage", customer_id="cus_idem", payload={"ticketId": "A"}, idempotency_key=key)
        b = c.workflows.create(product="ticket-triage", customer_id="cus_idem", payload={"ticketId": "A"}, idempotency_key=key)
        self.assertEqual(a.id, b.id)
        with self.assertRaises(IdempotencyError) as cm:
            c.workflows.create(product="ticket-triage", customer_id="cus_idem", payload={"ticketId": "B"}, idempotency_key=key)
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "idempotency_key_reused"))

    def test_429_from_a_tiny_limit(self) -> None:
        c = self.client(harness.server().tiny_key, max_retries=0)
        err = None
        for _ in range(5):
            try:
                c.products.list()
            except RateLimitError as e:
                err = e
                break
        self.assertIsNotNone(err, "the tiny key (2/minute) was never limited")
        assert err is not None
        self.assertEqual((err.status, err.type, err.attempts), (429, "rate_limit_error", 1))
        self.assertEqual(err.headers["X-RateLimit-Limit"], "2")
        self.assertEqual(err.headers["X-RateLimit-Remaining"], "0")
        reset = int(err.headers["X-RateLimit-Reset"])
        self.assertGreater(reset, time.time() - 2)
        self.assertIsNotNone(err.retry_after)
        self.assertEqual(err.retry_after, float(err.headers["Retry-After"]))
        self.assertTrue(0 < err.retry_after <= 60)  # type: ignore[operator]
        self.assertTrue((err.request_id or "").startswith("req_"))

    def test_untrusted_certificate_fails_at_once(self) -> None:
        c = self.client(ca=None)
        c._transport._sleep = lambda s: self.fail("a certificate failure must not be retried")
        with self.assertRaises(APIConnectionError) as cm:
            c.products.list()
        self.assertIn("certificate", str(cm.exception))
        self.assertEqual(cm.exception.attempts, 1)


class TestRetriesThroughAProxy(ServerCase):
    def proxy(self, plan: harness.Plan) -> harness.Proxy:
        p = harness.Proxy(harness.server(), plan)
        self.addCleanup(p.close)
        return p

    def count(self, customer: str) -> List[str]:
        return [w.id for w in self.client().workflows.list_auto_paging(customer_id=customer, limit=100)]

    def test_429_is_retried_after_retry_after_then_succeeds(self) -> None:
        body = json.dumps({"error": {"type": "rate_limit_error", "code": "rate_limit_exceeded", "message": "slow down", "requestId": "req_proxy"}}).encode()
        p = self.proxy(lambda n, seen: ("answer", 429, {"Retry-After": "1"}, body) if n == 0 else ("forward",))
        c = self.client(base_url=p.base_url)
        customer = harness.unique("cus_429")
        start = time.monotonic()
        wf = c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE)
        self.assertGreaterEqual(time.monotonic() - start, 1.0)
        self.assertEqual(len(p.seen), 2)
        self.assertEqual(p.seen[0].headers["idempotency-key"], p.seen[1].headers["idempotency-key"])
        self.assertEqual(self.count(customer), [wf.id])

    def test_429_without_retry_after_waits_for_the_reset(self) -> None:
        p = self.proxy(lambda n, seen: ("answer", 429, {"X-RateLimit-Reset": str(int(time.time()) + 2)}, b"{}") if n == 0 else ("forward",))
        c = self.client(base_url=p.base_url)
        start = time.monotonic()
        c.products.list()
        self.assertGreaterEqual(time.monotonic() - start, 0.99)
        self.assertEqual(len(p.seen), 2)

    def test_connection_dropped_after_the_server_committed_makes_one_workflow(self) -> None:
        creates = []

        def plan(n: int, seen: harness.Seen) -> Tuple[Any, ...]:
            if seen.method == "POST":
                creates.append(seen)
                if len(creates) == 1:
                    return ("drop_after_forward",)
            return ("forward",)

        p = self.proxy(plan)
        c = self.client(base_url=p.base_url)
        customer = harness.unique("cus_drop")
        wf = c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE)
        self.assertEqual(len(creates), 2)
        self.assertEqual(creates[0].upstream_status, 201)  # the server did create it the first time
        self.assertEqual(creates[0].headers["idempotency-key"], creates[1].headers["idempotency-key"])
        self.assertEqual(creates[1].upstream_headers.get("idempotent-replayed"), "true")
        self.assertEqual(self.count(customer), [wf.id])  # exactly one workflow

    def test_without_retries_the_dropped_create_still_happened(self) -> None:
        # The control: the drop is real (the client gets no answer) and the server did commit.
        p = self.proxy(lambda n, seen: ("drop_after_forward",) if seen.method == "POST" else ("forward",))
        c = self.client(base_url=p.base_url, max_retries=0)
        customer = harness.unique("cus_drop0")
        with self.assertRaises(APIConnectionError):
            c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE)
        self.assertEqual(len(self.count(customer)), 1)

    def test_5xx_then_success(self) -> None:
        p = self.proxy(lambda n, seen: ("answer", 503, {}, b'{"error":{"type":"api_error","code":"shutting_down","message":"bye","requestId":"req_p"}}') if n < 2 else ("forward",))
        c = self.client(base_url=p.base_url)
        self.assertIn("ticket-triage", [x.name for x in c.products.list()])
        self.assertEqual(len(p.seen), 3)


class TestWebhookDelivery(ServerCase):
    def test_real_delivery_verifies_and_a_tampered_one_does_not(self) -> None:
        srv = harness.server()
        c = self.client()
        wf = c.workflows.create(product="ticket-triage", customer_id=harness.unique("cus_hook"), payload=TRIAGE)
        assert srv.receiver is not None
        d = srv.receiver.wait_for(lambda d: d.json().get("data", {}).get("workflowId") == wf.id)
        self.assertIn(settleflow.SIGNATURE_HEADER, d.headers)

        event = settleflow.webhooks.construct(d.body, d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret)
        self.assertEqual(event.type, "workflow.completed")
        self.assertEqual(event.data.workflow_id, wf.id)
        self.assertEqual(event.data.status, "Settled")
        settled = c.workflows.fetch(wf.id)
        self.assertIsNotNone(event.data.margin.achieved)
        self.assertEqual(event.data.margin.achieved, settled.margin.achieved)
        self.assertEqual(event.data.quoted, settled.quoted)
        self.assertEqual(event, c.events.fetch(event.id))
        # as text too, and through the Standard Webhooks headers
        c.webhooks.construct(d.body.decode("utf-8"), d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret)
        settleflow.webhooks.verify_standard(d.body, d.headers, srv.webhook_secret)
        self.assertEqual(settleflow.webhooks.construct_standard(d.body, d.headers, srv.webhook_secret), event)

        tampered = d.body.replace(b'"amount":358', b'"amount":359')
        self.assertNotEqual(tampered, d.body)
        for verify in (
            lambda: settleflow.webhooks.construct(tampered, d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret),
            lambda: settleflow.webhooks.verify_standard(tampered, d.headers, srv.webhook_secret),
        ):
            with self.assertRaises(SignatureVerificationError) as cm:
                verify()
            self.assertEqual(cm.exception.reason, "no_matching_signature")
        with self.assertRaises(SignatureVerificationError) as cm:
            settleflow.webhooks.construct(d.body, d.headers[settleflow.SIGNATURE_HEADER], "whsec_" + "A" * 43 + "=")
        self.assertEqual(cm.exception.reason, "no_matching_signature")
        with self.assertRaises(SignatureVerificationError) as cm:
            settleflow.webhooks.construct(json.loads(d.body), d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret)  # type: ignore[arg-type]
        self.assertEqual(cm.exception.reason, "body_not_raw")
        # a delivery replayed later than the tolerance is refused
        t = int(d.headers["webhook-timestamp"])
        with self.assertRaises(SignatureVerificationError) as cm:
            settleflow.webhooks.construct(d.body, d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret, now=t + 301)
        self.assertEqual(cm.exception.reason, "timestamp_outside_tolerance")


if __name__ == "__main__":
    unittest.main()
