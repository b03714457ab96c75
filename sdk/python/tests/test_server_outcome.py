"""Outcome pricing against the reference server: success criteria and a margin
floor on a quote and a create, the workflow's charge, cost and outcome once it
ran (in the workflow and in its event), and the refusals. ticket-triage is
priced fixed: the verdict is recorded and the charge is the quote."""

from __future__ import annotations

import unittest
from decimal import Decimal
from typing import Any, Dict

from settleflow import Cost, CostItem, IdempotencyError, InvalidRequestError, Money, Pricing

from . import harness
from .test_server import TRIAGE, ServerCase, wait_for_status

# Holds for what ticket-triage makes of TRIAGE: {"ticketId": "T-42", "queue": "billing"}.
CRITERIA: Dict[str, Any] = {
    "type": "all_of",
    "criteria": [
        {"type": "exact", "path": "/queue", "value": "billing"},
        {"type": "regex", "path": "/ticketId", "pattern": "^T-"},
    ],
}


def setUpModule() -> None:
    harness.server()


class TestOutcomePricing(ServerCase):
    def test_catalogue(self) -> None:
        p = self.client().products.fetch("ticket-triage")
        self.assertEqual(p.pricing, Pricing(model="fixed"))
        self.assertIsNone(p.success_criteria)
        self.assertIsNone(p.margin_floor)

    def test_quote(self) -> None:
        c = self.client()
        customer = harness.unique("cus_outcome_quote")
        q = c.quotes.create(product="ticket-triage", customer_id=customer, payload=TRIAGE, success_criteria=CRITERIA, margin_floor=Decimal("0.25"))
        # 1 attachment: an estimated cost of 250 quoted 358 at 30 %; a floor of 25 % leaves floor(358 × 0.75) = 268.
        self.assertEqual(q.quoted, Money(amount=358, currency="usd"))
        self.assertEqual(q.pricing, Pricing(model="fixed"))
        self.assertEqual(q.success_criteria, CRITERIA)
        self.assertEqual(q.margin_floor, Decimal("0.25"))
        self.assertEqual(q.budget, Money(amount=268, currency="usd"))
        bare = c.quotes.create(product="ticket-triage", customer_id=customer, payload=TRIAGE)
        self.assertEqual((bare.success_criteria, bare.margin_floor, bare.budget), (None, None, None))

    def test_workflow_and_event(self) -> None:
        c = self.client()
        customer = harness.unique("cus_outcome_flow")
        wf = c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE, success_criteria=CRITERIA, margin_floor=0.25)
        self.assertEqual(wf.pricing, Pricing(model="fixed"))
        self.assertEqual(wf.success_criteria, CRITERIA)
        self.assertEqual(wf.margin_floor, Decimal("0.25"))
        self.assertEqual((wf.charged, wf.cost, wf.outcome), (None, None, None))
        missed = c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE,
                                    success_criteria={"type": "exact", "path": "/queue", "value": "general"})

        done = wait_for_status(c, wf.id)
        self.assertEqual(done.status, "Settled")
        self.assertEqual(done.charged, done.quoted)
        # ticket-triage costs 170 of model plus 45 per attachment scanned, as items.
        self.assertEqual(done.cost, Cost(amount=215, currency="usd", items=[
            CostItem(category="model", provider="chat-model", units=400, amount=170),
            CostItem(category="tools", provider="attachment-scanner", units=1, amount=45)]))
        self.assertTrue(done.outcome.success)  # type: ignore[union-attr]
        self.assertEqual(
            [(s.node, s.path, s.type, s.matched) for s in done.outcome.trace],  # type: ignore[union-attr]
            [("", "", "all_of", True), ("criteria[0]", "/queue", "exact", True), ("criteria[1]", "/ticketId", "regex", True)],
        )
        events = c.events.list(workflow_id=wf.id)
        self.assertEqual(len(events), 1)
        ev = events.data[0]
        self.assertEqual(ev.type, "workflow.completed")
        self.assertEqual(ev.data.pricing, Pricing(model="fixed"))
        self.assertEqual(ev.data.charged, done.charged)
        self.assertEqual(ev.data.cost, done.cost)
        self.assertEqual(ev.data.outcome, done.outcome)

        # The criterion does not hold: recorded; fixed pricing charges the quote all the same.
        m = wait_for_status(c, missed.id)
        self.assertEqual(m.status, "Settled")
        self.assertFalse(m.outcome.success)  # type: ignore[union-attr]
        self.assertEqual(len(m.outcome.trace), 1)  # type: ignore[union-attr]
        self.assertEqual(m.charged, m.quoted)
        self.assertIsNone(m.margin_floor)

    def test_refusals(self) -> None:
        c = self.client()
        customer = harness.unique("cus_outcome_refused")
        cases: Any = (
            (dict(margin_floor=Decimal("0.5")), "margin_below_floor", "marginFloor"),
            (dict(margin_floor=1), "parameter_invalid", "marginFloor"),
            (dict(success_criteria={"type": "numeric_threshold", "path": "/x", "op": "~", "value": 1}), "parameter_invalid", "successCriteria"),
            (dict(success_criteria={"type": "any_of", "criteria": [CRITERIA, {"type": "regex", "path": "/x", "pattern": "("}]}),
             "parameter_invalid", "successCriteria.criteria[1]"),
        )
        for kw, code, param in cases:
            for create in (c.quotes.create, c.workflows.create):
                with self.subTest(kw=kw, create=create.__qualname__):
                    with self.assertRaises(InvalidRequestError) as cm:
                        create(product="ticket-triage", customer_id=customer, payload=TRIAGE, **kw)
                    self.assertEqual((cm.exception.status, cm.exception.code), (400, code))
                    self.assertTrue((cm.exception.param or "").startswith(param), cm.exception.param)
        # The floor is part of what an idempotency key stands for.
        key = "outcome-" + customer
        c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE, margin_floor=Decimal("0.2"), idempotency_key=key)
        with self.assertRaises(IdempotencyError):
            c.workflows.create(product="ticket-triage", customer_id=customer, payload=TRIAGE, margin_floor=Decimal("0.21"), idempotency_key=key)


if __name__ == "__main__":
    unittest.main()
