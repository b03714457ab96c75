"""Outcome pricing without a server: decoding pricing, success criteria, margin
floor, budget, charge, cost and outcome, and what ``workflows.create`` and
``quotes.create`` send for ``success_criteria`` and ``margin_floor`` (against
the scripted fake). test_server_outcome.py runs the same against the reference
server."""

from __future__ import annotations

import copy
import json
import unittest
from decimal import Decimal
from typing import Any, Dict

import settleflow
from settleflow import (
    Cost,
    CostItem,
    Event,
    InvalidRequestError,
    Money,
    Outcome,
    OutcomeStep,
    Pricing,
    Product,
    Quote,
    Settleflow,
    Workflow,
)
from settleflow._models import DecodeError

from .harness import WORKFLOW_JSON, Fake, error_json

KEY = "sk_test_" + "K" * 40

CRITERIA: Dict[str, Any] = {
    "type": "all_of",
    "criteria": [
        {"type": "exact", "path": "/status", "value": "resolved"},
        {"type": "numeric_threshold", "path": "/confidence", "op": ">=", "value": 0.8},
    ],
}

OUTCOME_WORKFLOW: Dict[str, Any] = {
    **copy.deepcopy(WORKFLOW_JSON),
    "product": "ticket-resolution",
    "quoted": {"amount": 400, "currency": "usd"},
    "pricing": {"model": "success_fee"},
    "successCriteria": CRITERIA,
    "marginFloor": 0.25,
    "margin": {"target": 0.3, "achieved": 0.2875},
    "status": "Settled",
    "result": {"status": "resolved", "confidence": 0.9},
    "charged": {"amount": 400, "currency": "usd"},
    "cost": {
        "amount": 285,
        "currency": "usd",
        "items": [
            {"category": "model", "provider": "openai", "units": 12000, "amount": 240},
            {"category": "human", "provider": "reviewer", "units": 1, "amount": 45},
        ],
    },
    "outcome": {
        "success": True,
        "trace": [
            {"node": "", "path": "", "type": "all_of", "matched": True, "reason": "2 of 2 criteria matched"},
            {"node": "criteria[0]", "path": "/status", "type": "exact", "matched": True, "reason": 'status is "resolved"'},
            {"node": "criteria[1]", "path": "/confidence", "type": "numeric_threshold", "matched": True, "reason": "confidence 0.9 >= 0.8"},
        ],
    },
    "refunded": {"amount": 0, "currency": "usd"},
}

OUTCOME_QUOTE: Dict[str, Any] = {
    "object": "quote", "livemode": False, "product": "ticket-resolution", "customerId": "cus_1", "payload": {"ticketId": "T-42"},
    "quoted": {"amount": 400, "currency": "usd"},
    "pricing": {"model": "capped", "markup": 0.2, "minimumCharge": {"amount": 50, "currency": "usd"}},
    "successCriteria": CRITERIA, "marginFloor": 0.25, "budget": {"amount": 300, "currency": "usd"}, "margin": {"target": 0.3},
}

OUTCOME_PRODUCT: Dict[str, Any] = {
    "object": "product", "name": "ticket-resolution", "description": "d", "targetMargin": 0.3,
    "minimumCharge": {"amount": 50, "currency": "usd"}, "pricingSummary": "s", "pricing": {"model": "hybrid", "baseShare": 0.3},
    "successCriteria": CRITERIA, "marginFloor": 0.2, "payloadSchema": {"type": "object"}, "example": None,
}

MARGIN_EVENT: Dict[str, Any] = {
    "id": "evt_1", "object": "event", "type": "workflow.margin_below_floor", "livemode": False, "createdAt": "2026-11-25T10:00:01Z",
    "data": {
        "workflowId": "wf_1", "status": "Settling", "quoted": {"amount": 400, "currency": "usd"},
        "margin": {"target": 0.3, "achieved": 0.1}, "pricing": {"model": "fixed"},
        "charged": {"amount": 400, "currency": "usd"}, "cost": {"amount": 360, "currency": "usd", "items": []},
        "outcome": {"success": False, "trace": [{"node": "", "path": "/status", "type": "exact", "matched": False, "reason": "status is missing"}]},
    },
}


class TestDecoding(unittest.TestCase):
    def test_workflow(self) -> None:
        wf = Workflow.from_wire(OUTCOME_WORKFLOW)
        self.assertEqual(wf.pricing, Pricing(model="success_fee"))
        self.assertEqual(wf.success_criteria, CRITERIA)
        self.assertIsInstance(wf.success_criteria["criteria"][1]["value"], float)  # type: ignore[index]
        self.assertEqual(wf.margin_floor, Decimal("0.25"))
        self.assertEqual(wf.charged, Money(amount=400, currency="usd"))
        self.assertEqual(
            wf.cost,
            Cost(amount=285, currency="usd", items=[
                CostItem(category="model", provider="openai", units=12000, amount=240),
                CostItem(category="human", provider="reviewer", units=1, amount=45),
            ]),
        )
        self.assertEqual(wf.outcome.success, True)  # type: ignore[union-attr]
        self.assertEqual(
            wf.outcome.trace[2],  # type: ignore[union-attr]
            OutcomeStep(node="criteria[1]", path="/confidence", type="numeric_threshold", matched=True, reason="confidence 0.9 >= 0.8"),
        )
        self.assertEqual([s.node for s in wf.outcome.trace], ["", "criteria[0]", "criteria[1]"])  # type: ignore[union-attr]

    def test_null_terms_and_a_workflow_that_has_not_run(self) -> None:
        wire = copy.deepcopy(OUTCOME_WORKFLOW)
        wire.update(pricing={"model": "fixed"}, successCriteria=None, marginFloor=None, charged=None, cost=None, outcome=None)
        wf = Workflow.from_wire(wire)
        self.assertEqual(wf.pricing.model, "fixed")
        self.assertIsNone(wf.pricing.markup)
        for name in ("success_criteria", "margin_floor", "charged", "cost", "outcome"):
            self.assertIsNone(getattr(wf, name), name)

    def test_a_server_that_predates_pricing_models(self) -> None:
        wf = Workflow.from_wire(WORKFLOW_JSON)
        self.assertEqual(wf.pricing, Pricing(model="fixed"))
        self.assertIsNone(wf.success_criteria)
        self.assertIsNone(wf.margin_floor)
        self.assertIsNone(wf.charged)
        self.assertIsNone(wf.cost)
        self.assertIsNone(wf.outcome)
        q = Quote.from_wire({k: v for k, v in OUTCOME_QUOTE.items() if k not in ("pricing", "successCriteria", "marginFloor", "budget")})
        self.assertEqual((q.pricing.model, q.success_criteria, q.margin_floor, q.budget), ("fixed", None, None, None))

    def test_quote(self) -> None:
        q = Quote.from_wire(OUTCOME_QUOTE)
        self.assertEqual(q.pricing, Pricing(model="capped", markup=Decimal("0.2"), minimum_charge=Money(amount=50, currency="usd")))
        self.assertEqual(q.success_criteria, CRITERIA)
        self.assertEqual(q.margin_floor, Decimal("0.25"))
        self.assertEqual(q.budget, Money(amount=300, currency="usd"))
        bare = Quote.from_wire({**OUTCOME_QUOTE, "pricing": {"model": "fixed"}, "successCriteria": None, "marginFloor": None, "budget": None})
        self.assertEqual((bare.success_criteria, bare.margin_floor, bare.budget), (None, None, None))

    def test_product(self) -> None:
        p = Product.from_wire(OUTCOME_PRODUCT)
        self.assertEqual(p.pricing, Pricing(model="hybrid", base_share=Decimal("0.3")))
        self.assertEqual(p.success_criteria, CRITERIA)
        self.assertEqual(p.margin_floor, Decimal("0.2"))

    def test_margin_below_floor_event(self) -> None:
        self.assertIn("workflow.margin_below_floor", settleflow.EVENT_TYPES)
        ev = Event.from_wire(MARGIN_EVENT)
        self.assertEqual(ev.type, "workflow.margin_below_floor")
        self.assertEqual(ev.data.workflow_id, "wf_1")
        self.assertEqual(ev.data.pricing, Pricing(model="fixed"))
        self.assertEqual(ev.data.charged, Money(amount=400, currency="usd"))
        self.assertEqual(ev.data.cost, Cost(amount=360, currency="usd", items=[]))
        self.assertEqual(ev.data.outcome, Outcome(success=False, trace=[OutcomeStep("", "/status", "exact", False, "status is missing")]))
        # A workflow event's fields are required of it as of the others.
        with self.assertRaisesRegex(DecodeError, r"event\.data\.quoted is missing"):
            Event.from_wire({**MARGIN_EVENT, "data": {k: v for k, v in MARGIN_EVENT["data"].items() if k != "quoted"}})
        # Events without the new fields decode with None.
        plain_ev = Event.from_wire({**MARGIN_EVENT, "type": "workflow.completed", "data": {k: v for k, v in MARGIN_EVENT["data"].items()
                                                                                       if k not in ("pricing", "charged", "cost", "outcome")}})
        self.assertEqual((plain_ev.data.pricing, plain_ev.data.charged, plain_ev.data.cost, plain_ev.data.outcome), (None, None, None, None))

    def test_mistyped_fields_are_errors(self) -> None:
        for key, value, where in (
            ("pricing", {"markup": 0.2}, "workflow.pricing.model"),
            ("marginFloor", "0.25", "workflow.marginFloor"),
            ("successCriteria", [1], "workflow.successCriteria"),
            ("cost", {"amount": 1, "currency": "usd", "items": {}}, "workflow.cost.items"),
            ("cost", {"amount": 1, "currency": "usd", "items": [{"category": "model"}]}, "workflow.cost.items[0].provider"),
            ("outcome", {"success": "yes", "trace": []}, "workflow.outcome.success"),
            ("charged", 400, "workflow.charged"),
        ):
            with self.subTest(key):
                with self.assertRaises(DecodeError) as cm:
                    Workflow.from_wire({**OUTCOME_WORKFLOW, key: value})
                self.assertIn(where, str(cm.exception))


class TestRequests(unittest.TestCase):
    def client(self, *script: Any) -> "tuple[Settleflow, Fake]":
        f = Fake(list(script))
        self.addCleanup(f.close)
        c = Settleflow(api_key=KEY, base_url=f.base_url, max_retries=0)
        self.addCleanup(c.close)
        return c, f

    def test_create_and_quote_send_the_criteria_and_the_floor(self) -> None:
        c, f = self.client((201, {}, OUTCOME_WORKFLOW))
        base = dict(product="ticket-resolution", customer_id="cus_1", payload={"ticketId": "T-42"})
        wf = c.workflows.create(**base, success_criteria=CRITERIA, margin_floor=Decimal("0.25"))
        self.assertEqual(wf.outcome.success, True)  # type: ignore[union-attr]
        c.workflows.create(**base, margin_floor=Decimal("0.2875"))
        c.workflows.create(**base)
        c2, f2 = self.client((200, {}, OUTCOME_QUOTE))
        q = c2.quotes.create(**base, success_criteria=CRITERIA, margin_floor=0.1234)
        self.assertEqual(q.budget, Money(amount=300, currency="usd"))
        c2.quotes.create(**base, margin_floor=0)
        c2.quotes.create(**base, success_criteria=None, margin_floor=None)
        wire = {"product": "ticket-resolution", "customerId": "cus_1", "payload": {"ticketId": "T-42"}}
        self.assertEqual(
            [json.loads(s.body) for s in f.seen],
            [{**wire, "successCriteria": CRITERIA, "marginFloor": 0.25}, {**wire, "marginFloor": 0.2875}, wire],
        )
        self.assertEqual(
            [json.loads(s.body) for s in f2.seen],
            [{**wire, "successCriteria": CRITERIA, "marginFloor": 0.1234}, {**wire, "marginFloor": 0}, wire],
        )
        # The floor is a JSON number with the digits given.
        self.assertIn(b'"marginFloor":0.25}', f.seen[0].body)
        self.assertIn(b'"marginFloor":0.2875}', f.seen[1].body)
        self.assertEqual([s.path for s in f.seen + f2.seen], ["/v1/workflows"] * 3 + ["/v1/quotes"] * 3)

    def test_arguments_are_checked_before_sending(self) -> None:
        c, f = self.client((201, {}, OUTCOME_WORKFLOW))
        base = dict(product="ticket-resolution", customer_id="cus_1", payload={"ticketId": "T-42"})
        for kw, param in (
            (dict(margin_floor="0.25"), "margin_floor"),
            (dict(margin_floor=True), "margin_floor"),
            (dict(margin_floor=float("nan")), "margin_floor"),
            (dict(margin_floor=Decimal("Infinity")), "margin_floor"),
            (dict(success_criteria=[CRITERIA]), "success_criteria"),
            (dict(success_criteria='{"type": "exact"}'), "success_criteria"),
            (dict(success_criteria={"type": "exact", "path": "/x", "value": {1, 2}}), "successCriteria"),
        ):
            for create in (c.workflows.create, c.quotes.create):
                with self.subTest(kw=kw, create=create):
                    with self.assertRaises(InvalidRequestError) as cm:
                        create(**base, **kw)  # type: ignore[arg-type]
                    self.assertEqual(cm.exception.param, param)
        self.assertEqual(f.seen, [])

    def test_margin_below_floor(self) -> None:
        c, _ = self.client((400, {}, error_json("invalid_request_error", "margin_below_floor", "below the margin floor", "marginFloor")))
        with self.assertRaises(InvalidRequestError) as cm:
            c.quotes.create(product="ticket-resolution", customer_id="cus_1", payload={}, margin_floor=Decimal("0.9"))
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.param), (400, "margin_below_floor", "marginFloor"))


if __name__ == "__main__":
    unittest.main()
