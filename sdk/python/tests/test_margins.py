"""margins.report against a scripted local fake: the request it sends, the
report it decodes (margins as Decimals, null ones as None), the argument
checks. test_server.py runs it against the real server."""

from __future__ import annotations

import copy
import datetime as dt
import unittest
from decimal import Decimal
from typing import Any, Dict

import settleflow
from settleflow import InvalidRequestError, MarginReport, MarginRow, Money, Settleflow
from settleflow._models import DecodeError

from .harness import Fake, error_json

KEY = "sk_test_" + "M" * 40


def usd(n: int) -> Dict[str, Any]:
    return {"amount": n, "currency": "usd"}


REPORT_JSON: Dict[str, Any] = {
    "object": "margin_report", "livemode": False, "groupBy": "day",
    "createdAfter": "2026-11-01T00:00:00Z", "createdBefore": None, "product": "ticket-triage", "currency": "usd",
    "data": [
        {"key": "2026-11-01", "workflows": 2, "charged": usd(572), "refunded": usd(100), "cost": usd(300), "margin": 0.3644},
        {"key": "2026-11-02", "workflows": 1, "charged": usd(286), "refunded": usd(286), "cost": usd(150), "margin": None},
    ],
    "total": {"key": "", "workflows": 3, "charged": usd(858), "refunded": usd(386), "cost": usd(450), "margin": 0.0466},
}


class TestModels(unittest.TestCase):
    def test_report(self) -> None:
        rep = MarginReport.from_wire(copy.deepcopy(REPORT_JSON))
        self.assertEqual((rep.object, rep.livemode, rep.group_by, rep.product, rep.currency), ("margin_report", False, "day", "ticket-triage", "usd"))
        self.assertEqual(rep.created_after, dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc))
        self.assertIsNone(rep.created_before)
        self.assertEqual(len(rep), 2)
        first = rep.data[0]
        self.assertEqual(first, MarginRow(key="2026-11-01", workflows=2, charged=Money(572, "usd"), refunded=Money(100, "usd"),
                                          cost=Money(300, "usd"), margin=Decimal("0.3644")))
        self.assertIsNone(rep.data[1].margin)
        self.assertEqual(rep.total.margin, Decimal("0.0466"))
        self.assertEqual([r.key for r in rep], ["2026-11-01", "2026-11-02"])
        self.assertEqual(rep.raw, REPORT_JSON)
        self.assertEqual(settleflow.MARGIN_GROUPINGS, ("product", "customer", "day"))

    def test_malformed(self) -> None:
        for mutate, msg in [
            (lambda d: d["data"][0].update(margin="0.3"), r"margin_report\.data\[0\]\.margin is not a number"),
            (lambda d: d["total"]["cost"].update(amount=1.5), r"margin_report\.total\.cost\.amount is not an integer"),
            (lambda d: d.update(data={}), r"margin_report\.data is not an array"),
            (lambda d: d.pop("total"), r"margin_report\.total is missing"),
        ]:
            d = copy.deepcopy(REPORT_JSON)
            mutate(d)
            with self.assertRaisesRegex(DecodeError, msg):
                MarginReport.from_wire(d)


class TestRequests(unittest.TestCase):
    def client(self, *script: Any) -> "tuple[Settleflow, Fake]":
        f = Fake(list(script))
        self.addCleanup(f.close)
        c = Settleflow(api_key=KEY, base_url=f.base_url, max_retries=0)
        self.addCleanup(c.close)
        return c, f

    def test_report_sends_the_query(self) -> None:
        c, f = self.client((200, {}, REPORT_JSON))
        rep = c.margins.report(group_by="day", product="ticket-triage",
                               created_after=dt.datetime(2026, 11, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))),
                               created_before="2026-12-01T00:00:00Z")
        self.assertIsInstance(rep, MarginReport)
        self.assertEqual(rep.data[0].margin, Decimal("0.3644"))
        c.margins.report(group_by="customer")
        self.assertEqual([(s.method, s.path, s.body) for s in f.seen], [
            ("GET", "/v1/margins?groupBy=day&createdAfter=2026-11-01T00%3A00%3A00Z&createdBefore=2026-12-01T00%3A00%3A00Z&product=ticket-triage", b""),
            ("GET", "/v1/margins?groupBy=customer", b""),
        ])
        self.assertNotIn("idempotency-key", f.seen[0].headers)

    def test_server_refusal_names_the_parameter(self) -> None:
        c, f = self.client((400, {}, error_json("invalid_request_error", "parameter_invalid", "the report would hold more than 1000 groups", param="createdAfter")))
        with self.assertRaises(InvalidRequestError) as cm:
            c.margins.report(group_by="day")
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.param), (400, "parameter_invalid", "createdAfter"))
        self.assertEqual(len(f.seen), 1)

    def test_bad_arguments_are_refused_before_sending(self) -> None:
        c, f = self.client((200, {}, REPORT_JSON))
        for kw, param in [
            (dict(group_by=""), "group_by"),
            (dict(group_by=None), "group_by"),
            (dict(group_by="day", created_after=dt.datetime(2026, 11, 1)), "created_after"),  # naive: no zone
            (dict(group_by="day", created_before=dt.datetime(2026, 11, 1)), "created_before"),
        ]:
            with self.subTest(**{k: repr(v) for k, v in kw.items()}):
                with self.assertRaises(InvalidRequestError) as cm:
                    c.margins.report(**kw)  # type: ignore[arg-type]
                self.assertEqual(cm.exception.param, param)
        self.assertEqual(f.seen, [])

    def test_operations_table(self) -> None:
        self.assertEqual(settleflow.OPERATIONS["reportMargins"], ("margins.report", "GET", "/v1/margins"))


if __name__ == "__main__":
    unittest.main()
