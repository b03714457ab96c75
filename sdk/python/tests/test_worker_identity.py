"""A worker says who it is on every claim (docs/api.md §16): its host, its
name (``pid-`` and the process id unless given) and this library's version.
The server's side, with the dashboard that shows it, is tested in Go
(dashboard's TestWorkersInChromium)."""

from __future__ import annotations

import json
import os
import socket
import threading
import unittest
from typing import Any, Dict

from settleflow import InvalidRequestError, Settleflow, Worker, __version__

from .harness import Fake

KEY = "rk_test_" + "K" * 40
EMPTY = {"object": "list", "url": "/v1/tasks/claim", "data": [], "hasMore": False}


class TestWorkerIdentity(unittest.TestCase):
    def claim_of(self, **kw: Any) -> Dict[str, Any]:
        f = Fake([(200, {}, EMPTY)])
        self.addCleanup(f.close)
        c = Settleflow(api_key=KEY, base_url=f.base_url)
        self.addCleanup(c.close)
        w = Worker(c, wait=0, **kw)
        w.handle("ticket-triage", lambda task, ctx: {})
        t = threading.Thread(target=lambda: w.run(handle_signals=False))
        t.start()
        try:
            for _ in range(500):
                if f.seen:
                    break
                threading.Event().wait(0.01)
        finally:
            w.stop()
            t.join(10)
        self.assertTrue(f.seen, "no claim came")
        self.assertEqual(f.seen[0].path, "/v1/tasks/claim")
        return json.loads(f.seen[0].body)

    def test_default_identity(self) -> None:
        body = self.claim_of()
        self.assertEqual(body["worker"], {"host": socket.gethostname(), "name": f"pid-{os.getpid()}", "sdk": f"settleflow-python/{__version__}"})

    def test_given_name_and_host(self) -> None:
        body = self.claim_of(name="triage-1", host="box-7")
        self.assertEqual(body["worker"], {"host": "box-7", "name": "triage-1", "sdk": f"settleflow-python/{__version__}"})

    def test_bad_identity_is_refused_before_sending(self) -> None:
        c = Settleflow(api_key=KEY, base_url="http://127.0.0.1:1")
        self.addCleanup(c.close)
        with self.assertRaises(InvalidRequestError):
            c.tasks.claim(["ticket-triage"], worker={"pid": "7"})
        with self.assertRaises(InvalidRequestError):
            c.tasks.claim(["ticket-triage"], worker={"host": 7})  # type: ignore[dict-item]
        with self.assertRaises(ValueError):
            Worker(c, name=7)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
