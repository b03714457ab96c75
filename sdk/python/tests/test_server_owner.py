"""Balance owners against the real reference server: a customer's wallet signs
the grant ``customers.create_owner_grant`` prepares, ``customers.set_owner``
sends it, and the contract on the server's embedded chain records the owner.

The client has no secp256k1 (standard library only): the wallet here is the Go
helper ``internal/cmd/signgrant`` (``eth_signTypedData_v4`` with go-ethereum),
run with a test key. ``SETTLEFLOW_TEST_FUNDS=require`` turns the skip of a
server without owners into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import unittest
from typing import Any, Dict, List

import settleflow
from settleflow import IdempotencyError, InvalidRequestError, OwnerGrant

from . import harness

REQUIRE = os.environ.get("SETTLEFLOW_TEST_FUNDS") == "require"
# Two test keys (never funded with anything real).
KEY = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
KEY2 = "8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f"
TRIAGE = {"ticketId": "T-1", "subject": "owner", "attachments": 1}


def wallet(args: List[str], stdin: str = "") -> str:
    r = subprocess.run(["go", "run", "./internal/cmd/signgrant", "-key", *args], cwd=harness.repo_root(),
                       input=stdin, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError("signgrant: " + r.stderr)
    return r.stdout.strip()


def address_of(key: str) -> str:
    return wallet([key, "-address"])


def sign(key: str, grant: OwnerGrant) -> str:
    return wallet([key], json.dumps(grant.typed_data))


def signed(grant: OwnerGrant, signature: str) -> Dict[str, Any]:
    return dict(address=grant.address, nonce=grant.nonce, origin=grant.origin, deadline=grant.deadline, signature=signature)


class TestServerOwner(unittest.TestCase):
    def test_wallet_signs_and_the_contract_records_the_owner(self) -> None:
        c = harness.client()
        self.addCleanup(c.close)
        served = {op.get("operationId") for item in c.openapi()["paths"].values() for op in item.values() if isinstance(op, dict)}
        if not {"createOwnerGrant", "setOwner"} <= served or c.customers.fetch(harness.unique("cus_probe")).deposit is None:
            why = "the server does not set balance owners (no owner routes, or no customer funds)"
            if REQUIRE:
                self.fail(why)
            self.skipTest(why)
        cus = harness.unique("cus_owner")
        addr = address_of(KEY)
        # Funded before it has an owner (the faucet's deposit names none).
        c.test_helpers.fund_customer(cus, 10_000)

        g = c.customers.create_owner_grant(cus, address=addr, origin="https://portal.example")
        self.assertEqual((g.object, g.customer_id, g.address, g.origin), ("owner_grant", cus, addr.lower(), "https://portal.example"))
        self.assertEqual(len(g.nonce), 66)
        self.assertEqual(g.typed_data["primaryType"], "OwnerGrant")
        self.assertTrue(14 * 60 < g.deadline - time.time() < 16 * 60, g.deadline)

        # Refused, nothing sent: another customer's grant.
        other = c.customers.create_owner_grant(harness.unique("cus_owner_other"), address=addr)
        with self.assertRaises(InvalidRequestError) as cm:
            c.customers.set_owner(cus, **signed(other, sign(KEY, other)))
        self.assertEqual(cm.exception.param, "signature")
        with self.assertRaises(InvalidRequestError) as cm:
            c.customers.create_owner_grant(cus, address="0x1234")
        self.assertEqual(cm.exception.param, "address")

        params = signed(g, sign(KEY, g))
        key = "owner-" + cus
        ch = c.customers.set_owner(cus, **params, idempotency_key=key)
        self.assertEqual((ch.object, ch.status, ch.effective, ch.address), ("owner_change", "sent", "now", addr.lower()))
        self.assertEqual(len(ch.tx_hash), 66)
        self.assertEqual(c.customers.set_owner(cus, **params, idempotency_key=key).tx_hash, ch.tx_hash)
        with self.assertRaises(IdempotencyError):
            c.customers.set_owner(cus, **signed(other, sign(KEY, other)), idempotency_key=key)

        # A workflow settled after it: the operator's setOwner went first.
        wf = c.workflows.create(product="ticket-triage", customer_id=cus, payload=TRIAGE)
        deadline = time.monotonic() + 60
        while c.workflows.fetch(wf.id).status != "Settled":
            self.assertLess(time.monotonic(), deadline, "the workflow did not settle")
            time.sleep(0.2)
        # The funds follower announces the owner once confirmed: a signed
        # customer.owner_set webhook naming the wallet (checksummed).
        srv = harness.server()
        assert srv.receiver is not None
        d = srv.receiver.wait_for(lambda d: d.json().get("type") == "customer.owner_set" and d.json()["data"].get("customerId") == cus, timeout=60)
        ev = settleflow.webhooks.construct(d.body, d.headers[settleflow.SIGNATURE_HEADER], srv.webhook_secret)
        assert ev.data.owner is not None and ev.data.balance is not None
        self.assertEqual(ev.data.owner.address.lower(), addr.lower())
        self.assertNotEqual(ev.data.owner.address, addr.lower(), "checksummed, not lowercase")
        self.assertEqual(ev.data.owner.tx_hash.lower(), ch.tx_hash.lower())
        # The contract records the owner: the same address again is refused.
        g2 = c.customers.create_owner_grant(cus, address=addr)
        with self.assertRaises(InvalidRequestError) as cm:
            c.customers.set_owner(cus, **signed(g2, sign(KEY, g2)))
        self.assertEqual(cm.exception.param, "address")
        # Another address: a proposal, effective after the notice.
        g3 = c.customers.create_owner_grant(cus, address=address_of(KEY2))
        self.assertEqual(c.customers.set_owner(cus, **signed(g3, sign(KEY2, g3))).effective, "after_notice")


if __name__ == "__main__":
    unittest.main()
