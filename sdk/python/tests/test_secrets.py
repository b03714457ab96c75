"""The API key never appears in an error message, a repr, a traceback's locals or a log line."""

from __future__ import annotations

import io
import logging
import pickle
import traceback
import unittest
from typing import Any, List

import settleflow
from settleflow import APIConnectionError, APITimeoutError, AuthenticationError, RateLimitError, Settleflow

from . import harness
from .harness import Fake, closed_port, error_json


def formatted(e: BaseException) -> str:
    """Everything a crash reporter could show: the chain, with every frame's locals."""
    return "".join(traceback.TracebackException(type(e), e, e.__traceback__, capture_locals=True).format()) + repr(e) + str(e)


class TestKeyNeverLeaks(unittest.TestCase):
    def setUp(self) -> None:
        self.log = io.StringIO()
        handler = logging.StreamHandler(self.log)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s %(args)s"))
        logger = logging.getLogger("settleflow")
        old = logger.level
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        self.addCleanup(logger.removeHandler, handler)
        self.addCleanup(logger.setLevel, old)

    def secrets(self) -> List[str]:
        s = harness.server()
        return [s.key, s.tiny_key, s.live_key, "sk_test_" + "W" * 40]

    def assertClean(self, text: str) -> None:
        for k in self.secrets():
            self.assertNotIn(k, text)
            self.assertNotIn(k[8:], text)  # nor the random part alone

    def c(self, which: str = "key", **kw: Any) -> Settleflow:
        s = harness.server()
        key = {"key": s.key, "tiny": s.tiny_key, "wrong": "sk_test_" + "W" * 40}[which]
        c = harness.client(key, **kw)
        self.addCleanup(c.close)
        return c

    def test_repr_and_attributes(self) -> None:
        c = self.c()
        c.products.list()  # a pooled connection too
        text = repr(c) + str(c) + repr(vars(c)) + repr(vars(c._transport)) + repr(c.workflows) + repr(vars(c.workflows))
        self.assertClean(text)
        self.assertIn("sk_test_…", repr(c))
        with self.assertRaises(TypeError) as cm:
            pickle.dumps(c)
        self.assertClean(formatted(cm.exception))

    def test_errors_from_real_responses(self) -> None:
        with self.assertRaises(AuthenticationError) as cm:
            self.c("wrong").workflows.create(product="ticket-triage", customer_id="cus_1", payload={"ticketId": "T"})
        self.assertClean(formatted(cm.exception) + repr(cm.exception.body) + repr(dict(cm.exception.headers)))
        tiny = self.c("tiny", max_retries=0)
        with self.assertRaises(RateLimitError) as cm2:
            for _ in range(5):
                tiny.workflows.list()
        self.assertClean(formatted(cm2.exception))

    def test_connection_errors_and_timeouts(self) -> None:
        s = harness.server()
        c = Settleflow(api_key=s.key, base_url=f"https://127.0.0.1:{closed_port()}", ca=s.ca, max_retries=1)
        self.addCleanup(c.close)
        c._transport._sleep = lambda _: None
        with self.assertRaises(APIConnectionError) as cm:
            c.workflows.create(product="ticket-triage", customer_id="cus_1", payload={"ticketId": "T"})
        self.assertClean(formatted(cm.exception))
        f = Fake([(200, {}, {}, 2.0)])
        self.addCleanup(f.close)
        c2 = Settleflow(api_key=s.key, base_url=f.base_url, timeout=0.2, max_retries=0)
        self.addCleanup(c2.close)
        with self.assertRaises(APITimeoutError) as cm3:
            c2.workflows.fetch("wf_1")
        self.assertClean(formatted(cm3.exception))

    def test_a_key_echoed_by_a_server_is_redacted(self) -> None:
        s = harness.server()
        f = Fake([(400, {}, error_json("invalid_request_error", "bad", f"bad key {s.key} given", "x"))])
        self.addCleanup(f.close)
        c = Settleflow(api_key=s.key, base_url=f.base_url)
        self.addCleanup(c.close)
        with self.assertRaises(settleflow.InvalidRequestError) as cm:
            c.workflows.fetch("wf_1")
        self.assertIn("<api key redacted>", str(cm.exception))
        self.assertClean(formatted(cm.exception) + repr(cm.exception.body))

    def test_logs(self) -> None:
        p = harness.Proxy(harness.server(), lambda n, seen: ("answer", 503, {}, b"{}") if n == 0 else ("forward",))
        self.addCleanup(p.close)
        c = self.c(base_url=p.base_url)
        c.workflows.create(product="ticket-triage", customer_id="cus_log", payload={"ticketId": "T"})
        c.workflows.list(limit=1)
        text = self.log.getvalue()
        self.assertIn("retry 1 of 2", text)  # the logger did log, at DEBUG and INFO
        self.assertIn("POST /v1/workflows -> 201", text)
        self.assertClean(text)
        # and the key did go on the wire: the proxy saw it
        self.assertEqual(p.seen[0].headers["authorization"], "Bearer " + harness.server().key)


if __name__ == "__main__":
    unittest.main()
