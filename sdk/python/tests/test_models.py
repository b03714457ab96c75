"""Decoding the wire into typed objects."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import unittest
from decimal import Decimal

from settleflow import Event, Page, Product, Workflow
from settleflow._models import DecodeError, format_time, parse_time

from .harness import WORKFLOW_JSON

UTC = dt.timezone.utc


class TestWorkflow(unittest.TestCase):
    def test_snake_case_over_camel_case(self) -> None:
        wire = copy.deepcopy(WORKFLOW_JSON)
        wire["payload"] = {"ticketId": "T-42", "snake_key": [1, 2.5, {"deepCamel": None}]}
        wf = Workflow.from_wire(wire)
        self.assertEqual(wf.customer_id, "cus_123")
        self.assertEqual(wf.quoted.amount, 358)
        self.assertEqual(wf.quoted.currency, "usd")
        self.assertEqual(wf.margin.target, Decimal("0.3"))
        self.assertIsNone(wf.margin.achieved)
        # payload exactly as sent: keys untouched, plain JSON values
        self.assertEqual(wf.payload, {"ticketId": "T-42", "snake_key": [1, 2.5, {"deepCamel": None}]})
        self.assertIsInstance(wf.payload["snake_key"][1], float)
        # nanoseconds (Go's RFC 3339) are cut to microseconds; aware UTC
        self.assertEqual(wf.created_at, dt.datetime(2026, 11, 24, 0, 0, 0, 123456, tzinfo=UTC))
        self.assertEqual(wf.created_at.utcoffset(), dt.timedelta(0))
        self.assertTrue(dataclasses.is_dataclass(wf))
        with self.assertRaises(dataclasses.FrozenInstanceError):
            wf.status = "Settled"  # type: ignore[misc]

    def test_settled_and_failed(self) -> None:
        wire = copy.deepcopy(WORKFLOW_JSON)
        wire.update(
            status="Settled",
            margin={"target": 0.3, "achieved": 0.2875},
            result={"queue": "billing"},
            settlement={"chainId": 1337, "network": "simulated", "txHash": "0xab", "blockNumber": 7, "confirmations": 2},
        )
        wf = Workflow.from_wire(wire)
        self.assertEqual(wf.margin.achieved, Decimal("0.2875"))
        self.assertEqual(wf.margin.achieved * 10000, 2875)  # type: ignore[operator]
        self.assertEqual(wf.settlement.chain_id, 1337)  # type: ignore[union-attr]
        self.assertEqual(wf.settlement.block_number, 7)  # type: ignore[union-attr]
        wire.update(status="Failed", settlement=None, result=None, failure={"code": "execution_failed", "message": "boom"})
        wf = Workflow.from_wire(wire)
        self.assertEqual(wf.failure.code, "execution_failed")  # type: ignore[union-attr]
        self.assertIsNone(wf.settlement)

    def test_integer_ratio_and_negative_margin(self) -> None:
        wire = copy.deepcopy(WORKFLOW_JSON)
        wire["margin"] = {"target": 1, "achieved": Decimal("-0.5")}
        wf = Workflow.from_wire(wire)
        self.assertEqual(wf.margin.target, Decimal(1))
        self.assertEqual(wf.margin.achieved, Decimal("-0.5"))

    def test_unknown_fields_tolerated_and_kept(self) -> None:
        wire = copy.deepcopy(WORKFLOW_JSON)
        wire["brandNewField"] = {"a": 1}
        wf = Workflow.from_wire(wire)
        self.assertEqual(wf.raw["brandNewField"], {"a": 1})
        self.assertNotIn("raw", repr(wf))

    def test_missing_or_mistyped_fields_are_errors(self) -> None:
        for key, value in (("customerId", None), ("quoted", "358"), ("livemode", 0), ("createdAt", "yesterday")):
            wire = copy.deepcopy(WORKFLOW_JSON)
            wire[key] = value
            with self.subTest(key):
                with self.assertRaises(DecodeError) as cm:
                    Workflow.from_wire(wire)
                self.assertIn(key, str(cm.exception))
        wire = copy.deepcopy(WORKFLOW_JSON)
        del wire["status"]
        with self.assertRaises(DecodeError):
            Workflow.from_wire(wire)


class TestOthers(unittest.TestCase):
    def test_page(self) -> None:
        page = Page.from_wire(
            {"object": "list", "url": "/v1/workflows", "data": [WORKFLOW_JSON, WORKFLOW_JSON], "hasMore": True},
            Workflow.from_wire,
        )
        self.assertTrue(page.has_more)
        self.assertEqual(len(page), 2)
        self.assertEqual([w.id for w in page], [WORKFLOW_JSON["id"]] * 2)

    def test_product(self) -> None:
        p = Product.from_wire(
            {
                "object": "product", "name": "ticket-triage", "description": "d", "targetMargin": 0.3,
                "minimumCharge": {"amount": 50, "currency": "usd"}, "pricingSummary": "s",
                "payloadSchema": {"type": "object", "properties": {"ticketId": {"maxLength": 100}}}, "example": None,
            }
        )
        self.assertEqual(p.target_margin, Decimal("0.3"))
        self.assertEqual(p.minimum_charge.amount, 50)
        self.assertEqual(p.payload_schema["properties"]["ticketId"], {"maxLength": 100})
        self.assertIsNone(p.example)

    def test_event_canceled_without_optional_fields(self) -> None:
        ev = Event.from_wire(
            {
                "id": "evt_1", "object": "event", "type": "workflow.canceled", "livemode": False,
                "createdAt": "2026-11-24T01:00:00+01:00",
                "data": {"workflowId": "wf_1", "status": "Canceled", "quoted": {"amount": 1, "currency": "usd"},
                         "margin": {"target": 0.3, "achieved": None}},
            }
        )
        self.assertEqual(ev.created_at, dt.datetime(2026, 11, 24, 0, 0, tzinfo=UTC))
        self.assertIsNone(ev.data.result)
        self.assertIsNone(ev.data.settlement)
        self.assertIsNone(ev.data.failure)

    def test_times(self) -> None:
        self.assertEqual(parse_time("2026-11-24T00:00:00.5-02:30"), dt.datetime(2026, 11, 24, 2, 30, 0, 500000, tzinfo=UTC))
        for bad in ("2026-11-24", "2026-11-24T00:00:00", "2026-11-24 00:00:00Z", "x"):
            with self.assertRaises(ValueError):
                parse_time(bad)
        self.assertEqual(format_time(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)), "2026-01-02T03:04:05Z")
        with self.assertRaises(ValueError):
            format_time(dt.datetime(2026, 1, 2))


if __name__ == "__main__":
    unittest.main()
