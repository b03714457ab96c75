"""Retries, idempotency keys, timeouts, headers and error mapping, against a scripted local fake.

The same behaviours are exercised against the real server in test_server.py;
here every branch can be forced and the delays are recorded instead of slept.
"""

from __future__ import annotations

import email.utils
import re
import sys
import time
import unittest
from typing import Any, List, Optional

import settleflow
from settleflow import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    IdempotencyError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    Settleflow,
)

from .harness import WORKFLOW_JSON, Fake, closed_port, error_json

KEY = "sk_test_" + "K" * 40
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
CREATE = dict(product="ticket-triage", customer_id="cus_123", payload={"ticketId": "T-42"})


class FakeCase(unittest.TestCase):
    def fake(self, *script: Any) -> Fake:
        f = Fake(list(script))
        self.addCleanup(f.close)
        return f

    def client(self, fake: Optional[Fake] = None, *, base_url: Optional[str] = None, rand: float = 0.5, now: Optional[float] = None, **kw: Any) -> Settleflow:
        c = Settleflow(api_key=KEY, base_url=base_url or fake.base_url, **kw)  # type: ignore[union-attr]
        self.addCleanup(c.close)
        self.sleeps: List[float] = []
        c._transport._sleep = self.sleeps.append
        c._transport._rand = lambda: rand
        if now is not None:
            c._transport._clock = lambda: now
        return c


class TestIdempotencyAndHeaders(FakeCase):
    def test_generated_key_is_reused_across_retries(self) -> None:
        f = self.fake((503, {}, error_json("api_error", "unavailable", "x")), (500, {}, error_json("api_error", "internal", "x")), (201, {}, WORKFLOW_JSON))
        wf = self.client(f).workflows.create(**CREATE)
        self.assertEqual(wf.id, WORKFLOW_JSON["id"])
        self.assertEqual(len(f.seen), 3)
        keys = {s.headers.get("idempotency-key") for s in f.seen}
        self.assertEqual(len(keys), 1, keys)
        self.assertRegex(keys.pop() or "", UUID4)
        self.assertEqual(len(self.sleeps), 2)

    def test_each_create_gets_its_own_key(self) -> None:
        f = self.fake((201, {}, WORKFLOW_JSON))
        c = self.client(f)
        c.workflows.create(**CREATE)
        c.workflows.create(**CREATE)
        self.assertNotEqual(f.seen[0].headers["idempotency-key"], f.seen[1].headers["idempotency-key"])

    def test_callers_key_is_sent_verbatim(self) -> None:
        f = self.fake((503, {}, b""), (201, {}, WORKFLOW_JSON))
        self.client(f).workflows.create(**CREATE, idempotency_key="order-1001")
        self.assertEqual([s.headers["idempotency-key"] for s in f.seen], ["order-1001", "order-1001"])
        for bad in ("x" * 256, "", "   ", "line\r\nX-Evil: 1", "clé"):
            with self.assertRaises(InvalidRequestError):
                self.client(f).workflows.create(**CREATE, idempotency_key=bad)

    def test_every_post_has_a_key_and_gets_none(self) -> None:
        f = self.fake((200, {}, WORKFLOW_JSON))
        c = self.client(f)
        c.workflows.cancel("wf_1")
        c.workflows.fetch("wf_1")
        self.assertRegex(f.seen[0].headers["idempotency-key"], UUID4)
        self.assertNotIn("idempotency-key", f.seen[1].headers)

    def test_request_headers_and_body(self) -> None:
        f = self.fake((201, {}, WORKFLOW_JSON))
        self.client(f).workflows.create(product="ticket-triage", customer_id="cus_123", payload={"ticketId": "T-42", "snake_case": "é"})
        s = f.seen[0]
        self.assertEqual((s.method, s.path), ("POST", "/v1/workflows"))
        self.assertEqual(s.headers["authorization"], "Bearer " + KEY)
        self.assertEqual(s.headers["content-type"], "application/json")
        self.assertEqual(s.headers["accept"], "application/json")
        py = ".".join(map(str, sys.version_info[:3]))
        self.assertEqual(s.headers["user-agent"], f"settleflow-python/{settleflow.__version__} python/{py}")
        self.assertEqual(s.body, '{"product":"ticket-triage","customerId":"cus_123","payload":{"ticketId":"T-42","snake_case":"é"}}'.encode())

    def test_query_and_path_encoding(self) -> None:
        f = self.fake((200, {}, {"object": "list", "url": "/v1/workflows", "data": [], "hasMore": False}), (200, {}, WORKFLOW_JSON))
        c = self.client(f)
        c.workflows.list(status="Settled", limit=5, customer_id="cus_a b", starting_after="wf_1")
        self.assertEqual(f.seen[0].path, "/v1/workflows?status=Settled&limit=5&customerId=cus_a+b&startingAfter=wf_1")
        c.workflows.fetch("../products")
        self.assertEqual(f.seen[1].path, "/v1/workflows/..%2Fproducts")
        with self.assertRaises(InvalidRequestError):
            c.workflows.fetch("")

    def test_openapi_sends_no_key(self) -> None:
        f = self.fake((200, {}, {"openapi": "3.1.0", "paths": {}}))
        self.assertEqual(self.client(f).openapi()["openapi"], "3.1.0")
        self.assertNotIn("authorization", f.seen[0].headers)


class TestRetries(FakeCase):
    def test_bounded_attempts(self) -> None:
        for retries in (0, 1, 3):
            with self.subTest(max_retries=retries):
                f = self.fake((503, {}, error_json("api_error", "shutting_down", "bye")))
                with self.assertRaises(APIError) as cm:
                    self.client(f, max_retries=retries).workflows.fetch("wf_1")
                self.assertEqual(len(f.seen), retries + 1)
                self.assertEqual(cm.exception.attempts, retries + 1)
                self.assertEqual(cm.exception.status, 503)
                self.assertEqual(len(self.sleeps), retries)

    def test_retryable_statuses(self) -> None:
        for status in (408, 429, 500, 502, 503, 504):
            with self.subTest(status=status):
                f = self.fake((status, {}, b"{}"), (200, {}, WORKFLOW_JSON))
                self.client(f).workflows.fetch("wf_1")
                self.assertEqual(len(f.seen), 2)

    def test_client_errors_are_not_retried(self) -> None:
        cases = [
            (400, "invalid_request_error", InvalidRequestError),
            (401, "authentication_error", AuthenticationError),
            (403, "permission_error", PermissionDeniedError),
            (404, "invalid_request_error", NotFoundError),
            (409, "invalid_request_error", ConflictError),
            (409, "idempotency_error", IdempotencyError),
        ]
        for status, etype, cls in cases:
            with self.subTest(status=status, type=etype):
                f = self.fake((status, {"Request-Id": "req_h"}, error_json(etype, "some_code", "msg", "payload")))
                with self.assertRaises(cls) as cm:
                    self.client(f).workflows.create(**CREATE)
                e = cm.exception
                self.assertIs(type(e), cls)
                self.assertEqual(len(f.seen), 1)
                self.assertEqual((e.status, e.type, e.code, e.param, e.message), (status, etype, "some_code", "payload", "msg"))
                self.assertEqual(e.request_id, "req_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")  # the body's, over the header's
                self.assertIsInstance(e, APIError)
                self.assertIsInstance(e, settleflow.SettleflowError)

    def test_full_jitter_exponential_backoff(self) -> None:
        f = self.fake((503, {}, b""))
        with self.assertRaises(APIError):
            self.client(f, rand=0.999999, max_retries=6).workflows.fetch("wf_1")
        self.assertEqual([round(s, 3) for s in self.sleeps], [0.5, 1.0, 2.0, 4.0, 8.0, 8.0])
        f2 = self.fake((503, {}, b""))
        with self.assertRaises(APIError):
            self.client(f2, rand=0.0, max_retries=3).workflows.fetch("wf_1")
        self.assertEqual(self.sleeps, [0.0, 0.0, 0.0])

    def test_jitter_is_random(self) -> None:
        c = Settleflow(api_key=KEY, base_url="http://127.0.0.1:1")
        self.addCleanup(c.close)
        delays = {c._transport._backoff(3) for _ in range(50)}
        self.assertGreater(len(delays), 40)
        self.assertTrue(all(0 <= d < 4.0 for d in delays))

    def test_retry_after_is_honoured(self) -> None:
        f = self.fake((429, {"Retry-After": "7"}, error_json("rate_limit_error", "rate_limit_exceeded", "slow down")), (200, {}, WORKFLOW_JSON))
        self.client(f).workflows.fetch("wf_1")
        self.assertEqual(self.sleeps, [7.0])
        f = self.fake((503, {"Retry-After": "2"}, b""), (200, {}, WORKFLOW_JSON))
        self.client(f).workflows.fetch("wf_1")
        self.assertEqual(self.sleeps, [2.0])

    def test_retry_after_as_http_date(self) -> None:
        now = 1795478400.0
        f = self.fake((429, {"Retry-After": email.utils.formatdate(now + 5, usegmt=True)}, b""), (200, {}, WORKFLOW_JSON))
        self.client(f, now=now).workflows.fetch("wf_1")
        self.assertEqual(self.sleeps, [5.0])

    def test_429_without_retry_after_waits_for_the_reset(self) -> None:
        now = 1795478400.25
        f = self.fake((429, {"X-RateLimit-Reset": str(int(now) + 4)}, b""), (200, {}, WORKFLOW_JSON))
        self.client(f, now=now).workflows.fetch("wf_1")
        self.assertEqual(self.sleeps, [3.75])

    def test_too_long_a_wait_is_not_waited_for(self) -> None:
        f = self.fake((429, {"Retry-After": "3600", "X-RateLimit-Limit": "1000"}, error_json("rate_limit_error", "rate_limit_exceeded", "daily limit")))
        with self.assertRaises(RateLimitError) as cm:
            self.client(f).workflows.fetch("wf_1")
        self.assertEqual(len(f.seen), 1)
        self.assertEqual(self.sleeps, [])
        self.assertEqual(cm.exception.retry_after, 3600.0)
        self.assertEqual(cm.exception.headers["x-ratelimit-limit"], "1000")
        self.assertEqual(cm.exception.headers["X-RateLimit-Limit"], "1000")

    def test_connection_refused_is_retried_then_raised(self) -> None:
        c = self.client(base_url=f"http://127.0.0.1:{closed_port()}")
        with self.assertRaises(APIConnectionError) as cm:
            c.workflows.create(**CREATE)
        self.assertNotIsInstance(cm.exception, APITimeoutError)
        self.assertEqual(cm.exception.attempts, 3)
        self.assertEqual(len(self.sleeps), 2)
        self.assertIsInstance(cm.exception.__cause__, ConnectionRefusedError)
        self.assertIsNone(cm.exception.__cause__.__traceback__)  # type: ignore[union-attr]

    def test_connection_closed_without_a_response_is_retried(self) -> None:
        f = self.fake(("close", {}, b""), (201, {}, WORKFLOW_JSON))
        self.client(f).workflows.create(**CREATE)
        self.assertEqual(len(f.seen), 2)
        self.assertEqual(f.seen[0].headers["idempotency-key"], f.seen[1].headers["idempotency-key"])

    def test_timeout_per_attempt(self) -> None:
        f = self.fake((200, {}, WORKFLOW_JSON, 3.0))
        c = self.client(f, timeout=0.3, max_retries=1)
        start = time.monotonic()
        with self.assertRaises(APITimeoutError) as cm:
            c.workflows.fetch("wf_1")
        took = time.monotonic() - start
        self.assertLess(took, 1.5)
        self.assertGreaterEqual(took, 0.55)
        self.assertEqual(len(f.seen), 2)
        self.assertIn("0.3 s", str(cm.exception))


class TestCancel(FakeCase):
    def test_a_retried_cancel_that_finds_the_workflow_canceled_took_effect(self) -> None:
        canceled = dict(WORKFLOW_JSON, status="Canceled")
        f = self.fake(
            ("close", {}, b""),  # the first cancel's answer is lost
            (409, {}, error_json("invalid_request_error", "workflow_canceled", "This workflow is Canceled.")),
            (200, {}, canceled),
        )
        wf = self.client(f).workflows.cancel("wf_1")
        self.assertEqual(wf.status, "Canceled")
        self.assertEqual([(s.method, s.path) for s in f.seen], [("POST", "/v1/workflows/wf_1/cancel")] * 2 + [("GET", "/v1/workflows/wf_1")])

    def test_a_first_cancel_of_a_canceled_workflow_is_a_conflict(self) -> None:
        f = self.fake((409, {}, error_json("invalid_request_error", "workflow_canceled", "This workflow is Canceled.")))
        with self.assertRaises(ConflictError) as cm:
            self.client(f).workflows.cancel("wf_1")
        self.assertEqual(cm.exception.code, "workflow_canceled")
        self.assertEqual(len(f.seen), 1)


class TestErrorsAndResponses(FakeCase):
    def test_non_json_error_body(self) -> None:
        f = self.fake((502, {"Content-Type": "text/html", "Request-Id": "req_x"}, b"<html>bad gateway</html>"))
        with self.assertRaises(APIError) as cm:
            self.client(f, max_retries=0).workflows.fetch("wf_1")
        self.assertIs(type(cm.exception), APIError)
        self.assertIn("HTTP 502 Bad Gateway", str(cm.exception))
        self.assertEqual(cm.exception.request_id, "req_x")

    def test_unexpected_success_body(self) -> None:
        for body in (b"not json", b"[]", b'{"id": 1}'):
            with self.subTest(body):
                f = self.fake((200, {"Request-Id": "req_y"}, body))
                with self.assertRaises(APIError) as cm:
                    self.client(f).workflows.fetch("wf_1")
                self.assertIn("unexpected response", str(cm.exception))
                self.assertEqual(cm.exception.request_id, "req_y")

    def test_keep_alive_reuses_one_connection(self) -> None:
        f = self.fake((200, {}, WORKFLOW_JSON))
        c = self.client(f)
        for _ in range(3):
            c.workflows.fetch("wf_1")
        self.assertEqual(len(c._transport._idle), 1)
        self.assertEqual(len(f.seen), 3)
        self.assertEqual(len({s.client_port for s in f.seen}), 1, "the three requests used more than one connection")
        c.close()
        self.assertEqual(len(c._transport._idle), 0)
        c.workflows.fetch("wf_1")  # still usable after close, without keep-alive
        self.assertEqual(len(c._transport._idle), 0)


class TestStaleConnections(FakeCase):
    def test_connection_closed_by_the_server_while_idle_is_not_reused(self) -> None:
        f = self.fake((200, {}, WORKFLOW_JSON, 0, "then_close"), (200, {}, WORKFLOW_JSON))
        c = self.client(f, max_retries=0)
        c.workflows.fetch("wf_1")
        time.sleep(0.1)
        c.workflows.fetch("wf_1")
        self.assertEqual(len(f.seen), 2)
        self.assertNotEqual(f.seen[0].client_port, f.seen[1].client_port)

    def test_stale_connection_gets_one_free_attempt_on_a_new_one(self) -> None:
        # When the check before reuse misses the close (a race), the request
        # fails on the stale connection and is sent again on a new one, even
        # with max_retries=0: nothing reached the server.
        from unittest import mock

        f = self.fake((201, {}, WORKFLOW_JSON, 0, "then_close"), (201, {}, WORKFLOW_JSON))
        c = self.client(f, max_retries=0)
        c.workflows.create(**CREATE)
        time.sleep(0.1)
        with mock.patch("settleflow._http.select.select", return_value=([], [], [])):
            c.workflows.create(**CREATE, idempotency_key="k-2")
        self.assertEqual(len(f.seen), 2)
        self.assertEqual(self.sleeps, [])


class TestSeveralBaseURLs(FakeCase):
    def test_in_turn_and_past_one_that_refuses(self) -> None:
        f1, f2 = self.fake((200, {}, WORKFLOW_JSON)), self.fake((200, {}, WORKFLOW_JSON))
        c = self.client(base_url=[f1.base_url, f2.base_url + "/"], max_retries=0)
        self.assertEqual((c.base_url, c.base_urls), (f1.base_url, [f1.base_url, f2.base_url]))
        self.assertIn(repr([f1.base_url, f2.base_url]), repr(c))
        for _ in range(6):
            c.workflows.fetch("wf_1")
        self.assertEqual((len(f1.seen), len(f2.seen)), (3, 3))
        f1.close()
        c.close()  # the kept-alive connections too (the fake's threads would still serve them)
        # Refused: nothing was sent, so the next URL at once, even with retries off.
        for _ in range(6):
            c.workflows.fetch("wf_1")
        self.assertEqual((len(f1.seen), len(f2.seen)), (3, 9))
        self.assertEqual(self.sleeps, [])

    def test_bad_lists_and_the_environment(self) -> None:
        for bad in ([], ["https://127.0.0.1:8443", 8443], ["https://127.0.0.1:8443", "http://example.com"]):
            with self.subTest(bad):
                with self.assertRaises(ValueError):
                    Settleflow(api_key=KEY, base_url=bad)  # type: ignore[arg-type]
        import os
        from unittest import mock

        with mock.patch.dict(os.environ, {"SETTLEFLOW_BASE_URL": "https://sf-1:8443, https://sf-2:8443"}):
            c = Settleflow(api_key=KEY)
        self.assertEqual(c.base_urls, ["https://sf-1:8443", "https://sf-2:8443"])
        c.close()


class TestConstruction(unittest.TestCase):
    def test_base_url(self) -> None:
        for bad in ("http://example.com", "ftp://127.0.0.1", "127.0.0.1:8443", "https://127.0.0.1?x=1", "https://u:p@127.0.0.1"):
            with self.subTest(bad):
                with self.assertRaises(ValueError):
                    Settleflow(api_key=KEY, base_url=bad)
        c = Settleflow(api_key=KEY, base_url="https://api.example.com/prefix/")
        self.assertEqual(c.base_url, "https://api.example.com/prefix")
        c.close()

    def test_api_key_and_options(self) -> None:
        for bad in ("sk_test_abc\r\nX-Evil: 1", "sk_test_abc def", "sk_test_abc…"):
            with self.assertRaises(ValueError) as cm:
                Settleflow(api_key=bad)
            self.assertNotIn("sk_test_abc", str(cm.exception))
        import os
        old = os.environ.pop("SETTLEFLOW_API_KEY", None)
        try:
            with self.assertRaises(ValueError):
                Settleflow()
            os.environ["SETTLEFLOW_API_KEY"] = KEY
            c = Settleflow()
            self.assertEqual(c._key.reveal(), KEY)
            c.close()
        finally:
            os.environ.pop("SETTLEFLOW_API_KEY", None)
            if old is not None:
                os.environ["SETTLEFLOW_API_KEY"] = old
        for kw in ({"timeout": 0}, {"timeout": -1}, {"max_retries": -1}, {"max_retries": 1.5}):
            with self.subTest(kw):
                with self.assertRaises(ValueError):
                    Settleflow(api_key=KEY, **kw)  # type: ignore[arg-type]
        c = Settleflow(api_key=KEY, timeout=5, max_retries=0)
        self.assertEqual((c.timeout, c.max_retries), (5.0, 0))
        c.close()

    def test_context_manager(self) -> None:
        with Settleflow(api_key=KEY) as c:
            self.assertIsInstance(c, Settleflow)


if __name__ == "__main__":
    unittest.main()
