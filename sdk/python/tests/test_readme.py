"""The README's examples run as written, against the real server (its address and certificate substituted)."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from typing import List

import settleflow

from . import harness
from .harness import SDK_DIR, closed_port


def blocks() -> List[str]:
    with open(os.path.join(SDK_DIR, "README.md"), encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def is_money(block: str) -> bool:
    """The customer funds and refunds example: it needs a server that charges customer balances."""
    return "test_helpers.fund_customer" in block


class TestReadme(unittest.TestCase):
    def env(self, **extra: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SETTLEFLOW_")}
        env["PYTHONPATH"] = SDK_DIR
        env.update(extra)
        return env

    def run_blocks(self, code: str) -> str:
        srv = harness.server()
        code = code.replace("https://127.0.0.1:8443", srv.base_url).replace('"settleflow-data/tls/cert.pem"', repr(srv.ca))
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run(
                [sys.executable, "-X", "dev", "-W", "error", "-c", code],
                env=self.env(SETTLEFLOW_API_KEY=srv.key), cwd=tmp, capture_output=True, text=True, timeout=180,
            )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def test_client_examples(self) -> None:
        code = "\n".join(b for b in blocks() if "serve_forever" not in b and "worker.run()" not in b and not is_money(b))
        self.assertIn("list_auto_paging", code)
        out = self.run_blocks(code)
        self.assertRegex(out, r"wf_\w+ Pending 358 usd")
        self.assertRegex(out, r"Settled 0.3 0.\d+ 0x[0-9a-f]+")
        self.assertIn("400 parameter_invalid customerId", out)
        self.assertIn("payload payload must be a dict (the product's input, a JSON object), not a list", out)
        self.assertRegex(out, r"(Canceled|too late: workflow_\w+)")
        self.assertRegex(out, r"(?m)^\d{4}-\d{2}-\d{2} [1-9]\d* \d+ \d+ \d+ (-?\d+(?:\.\d+)?|None)$")
        self.assertRegex(out, r"(?m)^total margin: (-?\d+(?:\.\d+)?|None)$")

    def test_money_example(self) -> None:
        money = [b for b in blocks() if is_money(b)]
        self.assertEqual(len(money), 1)
        compile(money[0], "README money example", "exec")
        from .test_server_money import NO_FUNDS, NO_ROUTES, REQUIRE, capabilities

        routes, funded = capabilities()
        if not funded:
            why = NO_ROUTES if not routes else NO_FUNDS
            if REQUIRE:
                self.fail(why)
            self.skipTest(why)
        # The first example (its settled wf) and then the money example, as a reader runs them.
        out = self.run_blocks(blocks()[0] + "\n" + money[0])
        self.assertRegex(out, r"402 insufficient_funds -?\d+ 286 usd cus_insufficient_funds")
        self.assertRegex(out, r"re_\w{26} Pending 100")
        self.assertRegex(out, r"rest: \d+")
        self.assertRegex(out, r"(Pending|Succeeded) Money\(amount=\d+, currency='usd'\)")

    def test_webhook_receiver(self) -> None:
        code = next(b for b in blocks() if "serve_forever" in b)
        port = closed_port()
        code = code.replace("4242", str(port))
        secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
        proc = subprocess.Popen(
            [sys.executable, "-X", "dev", "-W", "error", "-c", code],
            env=self.env(SETTLEFLOW_WEBHOOK_SECRET=secret), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

        def stop() -> None:
            if proc.poll() is None:
                proc.terminate()
                proc.communicate(timeout=10)

        self.addCleanup(stop)
        body = json.dumps({
            "id": "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", "object": "event", "type": "workflow.completed", "livemode": False,
            "createdAt": "2026-11-24T00:00:00Z",
            "data": {"workflowId": "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J", "status": "Settled",
                     "quoted": {"amount": 358, "currency": "usd"}, "margin": {"target": 0.3, "achieved": 0.2875}},
        }).encode()

        def post(data: bytes, header: str) -> int:
            deadline = time.monotonic() + 10
            while True:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                try:
                    conn.request("POST", "/webhook", body=data, headers={"service-signature": header, "Content-Type": "application/json"})
                    resp = conn.getresponse()
                    resp.read()
                    return resp.status
                except ConnectionRefusedError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
                finally:
                    conn.close()

        header = settleflow.webhooks.sign(body, secret)
        self.assertEqual(post(body, header), 200)
        self.assertEqual(post(body.replace(b"358", b"359"), header), 400)
        self.assertEqual(post(body, settleflow.webhooks.sign(body, "whsec_" + base64.b64encode(b"k" * 32).decode())), 400)
        proc.terminate()
        out, err = proc.communicate(timeout=10)
        self.assertIn("settled wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J margin 0.2875", out)
        self.assertEqual(out.count("rejected: no_matching_signature"), 2, out + err)


if __name__ == "__main__":
    unittest.main()
