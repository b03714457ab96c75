"""Every error the library raises is a SettleflowError, arguments included.

A request argument that cannot be sent raises InvalidRequestError naming it
(the class the server's 400 for the same mistake raises), before anything is
sent; a client or webhook-helper setting it cannot use raises
ConfigurationError (also a ValueError).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import tempfile
import unittest
from typing import Any, Callable

import settleflow
from settleflow import ConfigurationError, InvalidRequestError, Settleflow, SettleflowError, webhooks

from .harness import WORKFLOW_JSON, Fake

KEY = "sk_test_" + "K" * 40
SECRET = "whsec_aq36v1QOVtJtPEaJWuoq9j2Oqcqv+k4T/8odTNcGaX8="


class TestRequestArguments(unittest.TestCase):
    def setUp(self) -> None:
        self.fake = Fake([(201, {}, WORKFLOW_JSON)])
        self.addCleanup(self.fake.close)
        self.client = Settleflow(api_key=KEY, base_url=self.fake.base_url, max_retries=0)
        self.addCleanup(self.client.close)

    def refused(self, param: str, call: Callable[[], Any]) -> InvalidRequestError:
        with self.assertRaises(SettleflowError) as cm:
            call()
        e = cm.exception
        self.assertIsInstance(e, InvalidRequestError, repr(e))
        assert isinstance(e, InvalidRequestError)
        self.assertEqual((e.param, e.type, e.code, e.status, e.request_id), (param, "invalid_request_error", "parameter_invalid", None, None))
        self.assertIn(param, e.message)
        self.assertIn(f"(param: {param})", str(e))
        self.assertEqual(self.fake.seen, [], "nothing is sent")
        return e

    def test_payload_that_is_not_a_mapping(self) -> None:
        for bad in (None, "x", ["ticketId"], 42, b"{}"):
            for create in (self.client.workflows.create, self.client.quotes.create):
                with self.subTest(bad=bad, create=create):
                    e = self.refused("payload", lambda: create(product="ticket-triage", customer_id="cus_1", payload=bad))  # type: ignore[arg-type]
                    self.assertIn("payload must be a dict", e.message)
                    self.assertIn(type(bad).__name__ if bad is not None else "None", e.message)

    def test_payload_that_is_not_json(self) -> None:
        loop: dict = {}
        loop["self"] = loop
        for bad in ({"x": object()}, {"x": math.nan}, {"x": {1, 2}}, loop):
            with self.subTest(bad=repr(bad)[:40]):
                e = self.refused("payload", lambda: self.client.workflows.create(product="ticket-triage", customer_id="cus_1", payload=bad))
                self.assertIn("payload is not JSON", e.message)

    def test_other_body_fields_that_are_not_json(self) -> None:
        self.refused("product", lambda: self.client.workflows.create(product=object(), customer_id="cus_1", payload={}))  # type: ignore[arg-type]
        self.refused("customerId", lambda: self.client.quotes.create(product="p", customer_id=math.inf, payload={}))  # type: ignore[arg-type]

    def test_path_arguments(self) -> None:
        self.refused("id", lambda: self.client.workflows.fetch(""))
        self.refused("id", lambda: self.client.workflows.cancel(None))  # type: ignore[arg-type]
        self.refused("name", lambda: self.client.products.fetch(7))  # type: ignore[arg-type]
        self.refused("id", lambda: self.client.events.fetch(""))

    def test_idempotency_key_and_created_after(self) -> None:
        for bad in ("", "x" * 256, "a\r\nb", "clé", 5):
            with self.subTest(bad=bad):
                self.refused("idempotency_key", lambda: self.client.workflows.create(
                    product="ticket-triage", customer_id="cus_1", payload={}, idempotency_key=bad))  # type: ignore[arg-type]
        e = self.refused("created_after", lambda: self.client.events.list(created_after=dt.datetime(2026, 1, 1)))
        self.assertIn("naive", e.message)

    def test_a_valid_call_still_goes_through(self) -> None:
        self.client.workflows.create(product="ticket-triage", customer_id="cus_1", payload={"ticketId": "T"})
        self.assertEqual(len(self.fake.seen), 1)


class TestConfiguration(unittest.TestCase):
    def bad(self, param: str, call: Callable[[], Any]) -> ConfigurationError:
        with self.assertRaises(SettleflowError) as cm:
            call()
        e = cm.exception
        self.assertIsInstance(e, ConfigurationError, repr(e))
        self.assertIsInstance(e, ValueError)
        assert isinstance(e, ConfigurationError)
        self.assertEqual(e.param, param)
        self.assertIn(param, e.message)
        self.assertNotIn("K" * 10, str(e) + repr(e))
        return e

    def test_client_settings(self) -> None:
        self.bad("timeout", lambda: Settleflow(api_key=KEY, timeout=0))
        self.bad("timeout", lambda: Settleflow(api_key=KEY, timeout="5"))  # type: ignore[arg-type]
        self.bad("max_retries", lambda: Settleflow(api_key=KEY, max_retries=-1))
        self.bad("api_key", lambda: Settleflow(api_key=""))
        self.bad("api_key", lambda: Settleflow(api_key=KEY + "\n"))
        self.bad("base_url", lambda: Settleflow(api_key=KEY, base_url="http://example.com"))
        self.bad("base_url", lambda: Settleflow(api_key=KEY, base_url="https://127.0.0.1:99999"))
        self.bad("base_url", lambda: Settleflow(api_key=KEY, base_url=b"https://127.0.0.1"))  # type: ignore[arg-type]
        self.bad("ca", lambda: Settleflow(api_key=KEY, ca=42))  # type: ignore[arg-type]
        with tempfile.TemporaryDirectory() as d:
            self.bad("ca", lambda: Settleflow(api_key=KEY, ca=os.path.join(d, "missing.pem")))
            junk = os.path.join(d, "junk.pem")
            with open(junk, "w") as f:
                f.write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
            self.bad("ca", lambda: Settleflow(api_key=KEY, ca=junk))

    def test_webhook_helper_settings(self) -> None:
        body = b'{"id":"evt_1","type":"workflow.completed"}'
        header = webhooks.sign(body, SECRET, timestamp=1795478400)
        for tolerance in (0, -1, "300", math.nan, math.inf, dt.timedelta(0)):
            with self.subTest(tolerance=tolerance):
                self.bad("tolerance", lambda: webhooks.verify(body, header, SECRET, tolerance, now=1795478400))  # type: ignore[arg-type]
        for now in ("soon", dt.datetime(2026, 11, 24), math.nan, math.inf, True):
            with self.subTest(now=now):
                self.bad("now", lambda: webhooks.verify(body, header, SECRET, now=now))  # type: ignore[arg-type]
        self.bad("timestamp", lambda: webhooks.sign(body, SECRET, timestamp="now"))  # type: ignore[arg-type]
        self.bad("msg_id", lambda: webhooks.sign_standard(body, SECRET, msg_id=None))  # type: ignore[arg-type]
        self.assertTrue(issubclass(settleflow.ConfigurationError, SettleflowError))


if __name__ == "__main__":
    unittest.main()
