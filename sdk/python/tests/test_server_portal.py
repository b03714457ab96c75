"""Customer portal links against the real reference server:
``customers.create_portal_session`` issues a one-time link that names its
customer and environment, expires when asked, and opens the portal once."""

from __future__ import annotations

import datetime as dt
import http.client
import ssl
import unittest
import urllib.parse

from settleflow import InvalidRequestError

from . import harness


class TestServerPortal(unittest.TestCase):
    def request(self, method: str, url: str, body: str = "") -> http.client.HTTPResponse:
        srv = harness.server()
        u = urllib.parse.urlsplit(url)
        conn = http.client.HTTPSConnection(u.hostname or "", u.port, context=ssl.create_default_context(cafile=srv.cert))
        self.addCleanup(conn.close)
        headers = {"content-type": "application/x-www-form-urlencoded"} if body else {}
        conn.request(method, u.path + ("?" + u.query if u.query else ""), body=body or None, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp

    def test_a_one_time_link(self) -> None:
        c = harness.client()
        self.addCleanup(c.close)
        cus = harness.unique("cus_portal")
        ps = c.customers.create_portal_session(cus)
        self.assertEqual((ps.object, ps.customer_id, ps.livemode), ("portal_session", cus, False))
        self.assertRegex(ps.id, r"^ps_[0-9A-Z]{26}$")
        ahead = (ps.expires_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
        self.assertTrue(14 * 60 < ahead < 16 * 60, f"expires {ahead}s ahead, want 15 minutes")
        self.assertNotIn("token", repr(ps), "the link is not in the repr (logs)")
        link = urllib.parse.urlsplit(ps.url)
        token = urllib.parse.parse_qs(link.query)["token"][0]
        self.assertTrue(ps.url.startswith(harness.server().base_url))

        short = c.customers.create_portal_session(cus, expires_in=120)
        ahead = (short.expires_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
        self.assertTrue(100 < ahead < 140, f"a 2-minute link expires {ahead}s ahead")
        self.assertNotEqual(short.url, ps.url)

        # The link opens the portal once.
        self.assertEqual(self.request("GET", ps.url).status, 200)
        form = urllib.parse.urlencode({"token": token})
        first = self.request("POST", harness.server().base_url + link.path, form)
        self.assertEqual(first.status, 303)
        self.assertIsNotNone(first.getheader("set-cookie"))
        second = self.request("POST", harness.server().base_url + link.path, form)
        self.assertGreaterEqual(second.status, 400)
        self.assertIsNone(second.getheader("set-cookie"))

    def test_bad_input_is_refused_naming_it(self) -> None:
        c = harness.client()
        self.addCleanup(c.close)
        for cus, kw, param in (("not a customer", {}, "customerId"), (harness.unique("cus_p"), {"expires_in": 30}, "expiresIn"),
                               (harness.unique("cus_p"), {"expires_in": 86_401}, "expiresIn")):
            with self.subTest(cus=cus, kw=kw):
                with self.assertRaises(InvalidRequestError) as cm:
                    c.customers.create_portal_session(cus, **kw)
                self.assertEqual((cm.exception.param, cm.exception.status), (param, 400))
        # Checked before anything is sent.
        for bad in (1.5, "60", True):
            with self.subTest(expires_in=bad), self.assertRaises(InvalidRequestError):
                c.customers.create_portal_session(harness.unique("cus_p"), expires_in=bad)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
