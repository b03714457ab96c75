"""Webhook verification beyond the shared vectors: API details and misuse."""

from __future__ import annotations

import datetime as dt
import email.message
import json
import unittest

import settleflow
from settleflow import SignatureVerificationError, webhooks

SECRET = "whsec_aq36v1QOVtJtPEaJWuoq9j2Oqcqv+k4T/8odTNcGaX8="
NOW = 1795478400
BODY = json.dumps(
    {
        "id": "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7",
        "object": "event",
        "type": "workflow.completed",
        "livemode": False,
        "createdAt": "2026-11-24T00:00:00.123456Z",
        "data": {
            "workflowId": "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J",
            "status": "Settled",
            "quoted": {"amount": 358, "currency": "usd"},
            "margin": {"target": 0.3, "achieved": -0.0125},
            "result": {"ticketId": "T-42", "nested": {"snake_case": 1, "camelCase": 2.5}},
            "settlement": {"chainId": 1337, "network": "simulated", "txHash": "0xab", "blockNumber": 7, "confirmations": 2},
            "futureField": {"x": 1},
        },
        "futureEnvelopeField": True,
    },
    separators=(",", ":"),
).encode()


class TestConstruct(unittest.TestCase):
    def header(self, body: bytes = BODY, t: int = NOW) -> str:
        return webhooks.sign(body, SECRET, timestamp=t)

    def test_round_trip_and_typed_event(self) -> None:
        ev = webhooks.construct(BODY, self.header(), SECRET, now=NOW)
        self.assertEqual(ev.type, "workflow.completed")
        self.assertEqual(ev.data.workflow_id, "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
        self.assertEqual(str(ev.data.margin.achieved), "-0.0125")
        self.assertEqual(ev.data.settlement.tx_hash, "0xab")  # type: ignore[union-attr]
        self.assertEqual(ev.created_at, dt.datetime(2026, 11, 24, 0, 0, 0, 123456, tzinfo=dt.timezone.utc))
        # the product's result keeps its keys and plain JSON values
        self.assertEqual(ev.data.result, {"ticketId": "T-42", "nested": {"snake_case": 1, "camelCase": 2.5}})
        self.assertIsInstance(ev.data.result["nested"]["camelCase"], float)  # type: ignore[index]
        # unknown fields are tolerated and kept
        self.assertEqual(ev.raw["futureEnvelopeField"], True)
        self.assertEqual(ev.data.raw["futureField"], {"x": 1})
        # the client's verifier is the same one
        c = settleflow.Settleflow(api_key="sk_test_" + "a" * 40)
        self.assertIs(c.webhooks, webhooks)
        c.close()

    def test_clock_as_datetime_and_tolerance_as_timedelta(self) -> None:
        at = dt.datetime.fromtimestamp(NOW + 100, dt.timezone.utc)
        webhooks.construct(BODY, self.header(), SECRET, now=at)
        with self.assertRaises(SignatureVerificationError) as cm:
            webhooks.construct(BODY, self.header(), SECRET, dt.timedelta(seconds=99), now=at)
        self.assertEqual(cm.exception.reason, "timestamp_outside_tolerance")

    def test_real_clock_by_default(self) -> None:
        webhooks.construct(BODY, webhooks.sign(BODY, SECRET), SECRET)
        with self.assertRaises(SignatureVerificationError) as cm:
            webhooks.construct(BODY, self.header(t=NOW - 10**6), SECRET)
        self.assertEqual(cm.exception.reason, "timestamp_outside_tolerance")

    def test_parsed_body_is_refused_with_a_clear_message(self) -> None:
        for parsed in (json.loads(BODY), [1, 2], 42, None):
            with self.subTest(type(parsed).__name__):
                with self.assertRaises(SignatureVerificationError) as cm:
                    webhooks.construct(parsed, self.header(), SECRET, now=NOW)  # type: ignore[arg-type]
                self.assertEqual(cm.exception.reason, "body_not_raw")
                self.assertIn("parsed before verification", str(cm.exception))
                with self.assertRaises(SignatureVerificationError) as cm:
                    webhooks.verify_standard(parsed, {}, SECRET, now=NOW)  # type: ignore[arg-type]
                self.assertEqual(cm.exception.reason, "body_not_raw")

    def test_reserialized_body_does_not_verify(self) -> None:
        reserialized = json.dumps(json.loads(BODY))  # ", " and ": " separators
        with self.assertRaises(SignatureVerificationError) as cm:
            webhooks.construct(reserialized, self.header(), SECRET, now=NOW)
        self.assertEqual(cm.exception.reason, "no_matching_signature")
        self.assertIn("exactly the bytes received", str(cm.exception))

    def test_missing_header_and_bad_secret(self) -> None:
        for header in (None, ""):
            with self.assertRaises(SignatureVerificationError) as cm:
                webhooks.construct(BODY, header, SECRET, now=NOW)
            self.assertEqual(cm.exception.reason, "missing_header")
        for bad in ("whsec_not base64!", "whsec_", 12345):
            with self.assertRaises(SignatureVerificationError) as cm:
                webhooks.construct(BODY, self.header(), bad, now=NOW)  # type: ignore[arg-type]
            self.assertEqual(cm.exception.reason, "bad_secret")
            self.assertNotIn("not base64!", str(cm.exception))

    def test_bare_base64_secret_accepted(self) -> None:
        webhooks.construct(BODY, self.header(), SECRET[len("whsec_"):], now=NOW)

    def test_memoryview_and_bytearray_bodies(self) -> None:
        webhooks.construct(bytearray(BODY), self.header(), SECRET, now=NOW)
        webhooks.construct(memoryview(BODY), self.header(), SECRET, now=NOW)

    def test_header_with_spaces_and_uppercase_hex(self) -> None:
        h = self.header()
        t, v1 = h.split(",")
        webhooks.construct(BODY, f" {t} , {v1.upper().replace('V1=', 'v1=')} ", SECRET, now=NOW)

    def test_timestamp_forms_go_rejects(self) -> None:
        good = self.header().split(",")[1]
        for t in ("1_795_478_400", " ", "0x10", "1.5", "99999999999999999999"):
            with self.subTest(t):
                with self.assertRaises(SignatureVerificationError) as cm:
                    webhooks.construct(BODY, f"t={t},{good}", SECRET, now=NOW)
                self.assertEqual(cm.exception.reason, "malformed_header")

    def test_oversized_header(self) -> None:
        with self.assertRaises(SignatureVerificationError) as cm:
            webhooks.construct(BODY, self.header() + ",x=" + "a" * 9000, SECRET, now=NOW)
        self.assertEqual(cm.exception.reason, "malformed_header")

    def test_invalid_payload_after_a_valid_signature(self) -> None:
        for body in (b"not json", b"\xff\xfe", b"[]", b'{"id":"evt_1"}', b'{"id":"evt_1","type":"workflow.completed","data":{}}'):
            with self.subTest(body):
                with self.assertRaises(SignatureVerificationError) as cm:
                    webhooks.construct(body, self.header(body), SECRET, now=NOW)
                self.assertEqual(cm.exception.reason, "invalid_payload")


    def test_created_at_absent_or_null_is_tolerated(self) -> None:
        # As in the Go webhook package and the Node.js client: id and type are
        # required, a missing createdAt is not a reason to refuse (and so have
        # the server retry) an authentic delivery.
        for created in ("absent", None):
            with self.subTest(created=created):
                ev = json.loads(BODY)
                if created == "absent":
                    del ev["createdAt"]
                else:
                    ev["createdAt"] = created
                body = json.dumps(ev).encode()
                got = webhooks.construct(body, self.header(body), SECRET, now=NOW)
                self.assertIsNone(got.created_at)
                self.assertEqual((got.id, got.type, got.data.workflow_id), (ev["id"], ev["type"], ev["data"]["workflowId"]))
                std = webhooks.construct_standard(body, webhooks.sign_standard(body, SECRET, msg_id=ev["id"], timestamp=NOW), SECRET, now=NOW)
                self.assertIsNone(std.created_at)

    def test_created_at_that_is_not_a_timestamp_is_refused(self) -> None:
        for created in ("soon", 1795478400, "2026-11-24", "2026-13-01T00:00:00Z", True):
            with self.subTest(created=created):
                ev = json.loads(BODY)
                ev["createdAt"] = created
                body = json.dumps(ev).encode()
                with self.assertRaises(SignatureVerificationError) as cm:
                    webhooks.construct(body, self.header(body), SECRET, now=NOW)
                self.assertEqual(cm.exception.reason, "invalid_payload")
                self.assertIn("createdAt", str(cm.exception))


class TestStandard(unittest.TestCase):
    def test_headers_as_http_server_message_case_insensitive(self) -> None:
        hs = webhooks.sign_standard(BODY, SECRET, msg_id="evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", timestamp=NOW)
        msg = email.message.Message()
        for k, v in hs.items():
            msg[k.title()] = v
        webhooks.verify_standard(BODY, msg, SECRET, now=NOW)
        ev = webhooks.construct_standard(BODY, {k.upper(): v for k, v in hs.items()}, SECRET, now=NOW)
        self.assertEqual(ev.id, "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7")

    def test_standard_reasons(self) -> None:
        hs = webhooks.sign_standard(BODY, SECRET, msg_id="evt_1", timestamp=NOW)
        cases = [
            ({**hs, "webhook-timestamp": "soon"}, "malformed_header"),
            ({**hs, "webhook-signature": "v2,abcd"}, "no_v1_signature"),
            ({**hs, "webhook-signature": "v1,!!!"}, "no_v1_signature"),
            ({**hs, "webhook-signature": "v1,AAAA " + hs["webhook-signature"]}, None),
            ({k: v for k, v in hs.items() if k != "webhook-timestamp"}, "missing_header"),
            ({**hs, "webhook-timestamp": str(NOW + 301)}, "timestamp_outside_tolerance"),
        ]
        for headers, reason in cases:
            with self.subTest(reason=reason, headers=headers):
                if reason is None:
                    webhooks.verify_standard(BODY, headers, SECRET, now=NOW)
                    continue
                with self.assertRaises(SignatureVerificationError) as cm:
                    webhooks.verify_standard(BODY, headers, SECRET, now=NOW)
                self.assertEqual(cm.exception.reason, reason)


if __name__ == "__main__":
    unittest.main()
