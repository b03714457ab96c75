"""Every vector of testdata/webhooks.json, shared with the Go webhook package and the other clients."""

from __future__ import annotations

import json
import os
import unittest
from decimal import Decimal

import settleflow
from settleflow import SignatureVerificationError

from .harness import repo_root

VECTORS = os.path.join(repo_root(), "testdata", "webhooks.json")


class TestVectors(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        with open(VECTORS, encoding="utf-8") as f:
            cls.doc = json.load(f)

    def test_every_vector(self) -> None:
        vectors = self.doc["vectors"]
        header_name = self.doc["signatureHeader"]
        tolerance = self.doc["tolerance"]
        self.assertGreaterEqual(len(vectors), 20)
        schemes = {v["scheme"] for v in vectors}
        self.assertEqual(schemes, {"service", "standard"})
        # A verified event of every type the API sends.
        self.assertEqual(
            {v["expect"].get("type") for v in vectors if v["expect"]["ok"]} - {None},
            set(settleflow.EVENT_TYPES) - {"workflow.canceled"},
        )
        for v in vectors:
            with self.subTest(v["name"]):
                self._check(v, header_name, tolerance)

    def _check(self, v: dict, header_name: str, tolerance: int) -> None:
        expect = v["expect"]
        for body in (v["body"], v["body"].encode("utf-8")):  # str and bytes bodies verify alike
            try:
                if v["scheme"] == "service":
                    event = settleflow.webhooks.construct(
                        body, v["headers"].get(header_name), v["secret"], tolerance, now=v["now"]
                    )
                else:
                    settleflow.webhooks.verify_standard(body, v["headers"], v["secret"], tolerance, now=v["now"])
                    event = None
            except SignatureVerificationError as e:
                self.assertFalse(expect["ok"], f"rejected ({e.reason}: {e}) but the vector verifies")
                self.assertEqual(e.reason, expect["reason"], str(e))
                self.assertNotIn(v["secret"], str(e))
                continue
            self.assertTrue(expect["ok"], f"verified but the vector expects {expect.get('reason')}")
            if event is None:
                continue
            self.assertEqual(event.id, expect["eventId"])
            self.assertEqual(event.type, expect["type"])
            self.assertEqual(event.data.workflow_id, expect.get("workflowId"))
            wire = json.loads(v["body"])
            self.assertEqual(event.data.raw, wire["data"])
            if event.type.startswith("refund."):
                refund = event.data.refund
                assert refund is not None
                self.assertEqual((refund.id, refund.amount, refund.status, refund.workflow_id),
                                 (expect["refundId"], expect["refundAmount"], expect["refundStatus"], expect["workflowId"]))
                self.assertEqual(refund.reason, wire["data"]["refund"]["reason"])
                self.assertEqual(refund.settlement is None, wire["data"]["refund"]["settlement"] is None)
                self.assertIsNone(event.data.quoted)
                continue
            if event.type == "customer.owner_set":
                self.assertEqual(event.data.customer_id, expect["customerId"])
                self.assertEqual(event.data.owner.address, expect["ownerAddress"])  # type: ignore[union-attr]
                self.assertEqual(event.data.balance.available, expect["balanceAvailable"])  # type: ignore[union-attr]
                self.assertIsNone(event.data.deposit)
                continue
            if event.type == "customer.withdrawal_requested":
                self.assertEqual(event.data.customer_id, expect["customerId"])
                self.assertEqual(event.data.withdrawal.amount.amount, expect["withdrawalAmount"])  # type: ignore[union-attr]
                self.assertIsNotNone(event.data.withdrawal.available_at)  # type: ignore[union-attr]
                self.assertEqual(event.data.balance.available, expect["balanceAvailable"])  # type: ignore[union-attr]
                continue
            if event.type == "customer.funded":
                self.assertEqual(event.data.customer_id, expect["customerId"])
                self.assertEqual(event.data.deposit.amount.amount, expect["depositAmount"])  # type: ignore[union-attr]
                self.assertEqual(event.data.balance.available, expect["balanceAvailable"])  # type: ignore[union-attr]
                self.assertIsNone(event.data.refund)
                continue
            assert event.data.quoted is not None and event.data.margin is not None
            self.assertEqual(event.data.quoted.amount, expect["quotedAmount"])
            if "marginAchieved" in expect:
                self.assertIsInstance(event.data.margin.achieved, Decimal)
                # basis points, exactly: no float noise
                self.assertEqual(event.data.margin.achieved * 10000, expect["marginAchieved"])
            else:
                self.assertIsNone(event.data.margin.achieved)
            self.assertEqual(event.raw["data"]["workflowId"], wire["data"]["workflowId"])
            if wire["data"].get("failure"):
                self.assertEqual(event.data.failure.code, wire["data"]["failure"]["code"])  # type: ignore[union-attr]
                self.assertEqual(event.data.failure.message, wire["data"]["failure"]["message"])  # type: ignore[union-attr]
                self.assertIsNone(event.data.settlement)

    def test_standard_vectors_through_construct_standard(self) -> None:
        for v in self.doc["vectors"]:
            if v["scheme"] != "standard":
                continue
            with self.subTest(v["name"]):
                try:
                    event = settleflow.webhooks.construct_standard(v["body"], v["headers"], v["secret"], now=v["now"])
                except SignatureVerificationError as e:
                    self.assertFalse(v["expect"]["ok"])
                    self.assertEqual(e.reason, v["expect"]["reason"])
                else:
                    self.assertTrue(v["expect"]["ok"])
                    self.assertEqual(event.id, json.loads(v["body"])["id"])


if __name__ == "__main__":
    unittest.main()
