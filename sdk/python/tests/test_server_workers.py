"""Workers against a real reference server serving demo products remotely
(``-remote``): the README's worker runs as a process of its own and serves
ticket-triage end to end; the task endpoints' errors map to the client's
error classes; a Worker in this process is stopped by its margin floor and
drains on stop()."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import unittest
from decimal import Decimal
from typing import Any, List, Set

from settleflow import (
    ConflictError,
    CostItem,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    Settleflow,
    Task,
    TaskStopped,
    Worker,
    Workflow,
)

from . import harness
from .test_readme import blocks

TERMINAL = ("Settled", "Failed", "Canceled")


class TestServerWorkers(unittest.TestCase):
    srv: harness.Server

    @classmethod
    def setUpClass(cls) -> None:
        cls.srv = harness.Server(("-remote", "ticket-triage,document-summary,image-moderation", "-task-lease", "2s"))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.srv.stop()

    def api(self) -> Settleflow:
        c = self.srv.client()
        self.addCleanup(c.close)
        return c

    def wait_done(self, c: Settleflow, wf: str, timeout: float = 60) -> Workflow:
        deadline = time.monotonic() + timeout
        while True:
            w = c.workflows.fetch(wf)
            if w.status in TERMINAL:
                return w
            if time.monotonic() > deadline:
                self.fail(f"workflow {wf} still {w.status} after {timeout} s")
            time.sleep(0.1)

    def test_readme_worker_process_serves_ticket_triage(self) -> None:
        code = next(b for b in blocks() if "worker.run()" in b)
        code = code.replace("https://127.0.0.1:8443", self.srv.base_url).replace('"settleflow-data/tls/cert.pem"', repr(self.srv.ca))
        # A short claim wait, so that SIGTERM is answered within the test's patience.
        code = code.replace("concurrency=8)", "concurrency=8, wait=2)")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SETTLEFLOW_")}
        env.update(PYTHONPATH=harness.SDK_DIR, SETTLEFLOW_API_KEY=self.srv.worker_key("--products", "ticket-triage"))
        proc = subprocess.Popen([sys.executable, "-X", "dev", "-W", "error", "-c", code], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def end() -> None:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()

        self.addCleanup(end)
        c = self.api()
        cus = harness.unique("cus_worker")
        c.test_helpers.fund_customer(cus, 100_000)

        # Settled with the charge its model gives: fixed pricing charges the quote.
        wf = c.workflows.create(product="ticket-triage", customer_id=cus,
                                payload={"ticketId": "T-1", "subject": "Refund please", "attachments": 1})
        got = self.wait_done(c, wf.id)
        self.assertEqual(got.status, "Settled", got)
        self.assertEqual(got.result, {"ticketId": "T-1", "queue": "billing"})
        self.assertIsNotNone(got.charged)
        assert got.charged is not None and got.cost is not None and got.settlement is not None
        self.assertEqual((got.quoted.amount, got.charged.amount), (358, 358))
        self.assertEqual(got.cost.amount, 90)
        self.assertRegex(got.settlement.tx_hash or "", r"^0x[0-9a-f]{64}$")

        # Permanent: failed for good at the first attempt, nothing charged.
        wf3 = c.workflows.create(product="ticket-triage", customer_id=cus, payload={"ticketId": "T-3"})
        got = self.wait_done(c, wf3.id)
        self.assertEqual(got.status, "Failed", got)
        assert got.failure is not None
        self.assertEqual(got.failure.code, "execution_failed")
        self.assertIn("a ticket needs a subject", got.failure.message)
        self.assertIsNone(got.charged)

        # SIGTERM: the worker stops claiming and exits cleanly.
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, out + err)

    def test_sigkilled_worker_loses_its_task_and_another_completes_it_once(self) -> None:
        key = self.srv.worker_key("--products", "document-summary")
        code = "\n".join([
            "import time",
            "from settleflow import Settleflow, Worker",
            f"w = Worker(Settleflow(base_url={self.srv.base_url!r}, ca={self.srv.ca!r}), heartbeat_interval=0.3, wait=2)",
            "@w.handle('document-summary')",
            "def hang(task, ctx):",
            "    print('started', task.id, task.attempt, flush=True)",
            "    time.sleep(600)",
            "w.run()",
        ])
        env = {k: v for k, v in os.environ.items() if not k.startswith("SETTLEFLOW_")}
        env.update(PYTHONPATH=harness.SDK_DIR, SETTLEFLOW_API_KEY=key)
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def end() -> None:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()

        self.addCleanup(end)
        c = self.api()
        cus = harness.unique("cus_kill")
        c.test_helpers.fund_customer(cus, 100_000)
        wf = c.workflows.create(product="document-summary", customer_id=cus, payload={"text": "Killed mid-task."})
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        self.assertEqual(line[0::2], ["started", "1"], line)
        first_task = line[1]
        time.sleep(1)  # a few heartbeats: the lease (2 s) is held while the process lives
        self.assertEqual(c.workflows.fetch(wf.id).status, "Running")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

        w = self.srv.client(key)
        self.addCleanup(w.close)
        again = Worker(w, wait=1, heartbeat_interval=0.5)
        attempts: List[int] = []

        @again.handle("document-summary")
        def summarize(task: Task, ctx: Any) -> Any:
            attempts.append(task.attempt)
            return {"summary": "second"}

        runner = threading.Thread(target=again.run, kwargs={"handle_signals": False}, daemon=True)
        runner.start()
        got = self.wait_done(c, wf.id)
        again.stop()
        runner.join(10)
        self.assertEqual((got.status, got.result, attempts), ("Settled", {"summary": "second"}, [2]))
        assert got.charged is not None
        charged = got.charged.amount
        # The first worker's completion, arriving late, is 409 and changes nothing.
        with self.assertRaises(ConflictError) as cm:
            w.tasks.complete(first_task, {"summary": "first"})
        self.assertEqual(cm.exception.code, "lease_lost")
        after = c.workflows.fetch(wf.id)
        assert after.charged is not None
        self.assertEqual((after.result, after.charged.amount), ({"summary": "second"}, charged))

    def test_task_endpoint_errors(self) -> None:
        c = self.api()
        key = self.srv.worker_key("--products", "document-summary")
        w = self.srv.client(key)
        self.addCleanup(w.close)
        # An ordinary key may not claim; a worker key may not serve another product, nor read workflows.
        with self.assertRaises(PermissionDeniedError) as cm:
            c.tasks.claim(["document-summary"])
        self.assertEqual(cm.exception.code, "worker_key_required")
        with self.assertRaises(PermissionDeniedError) as cm:
            w.tasks.claim(["image-moderation"])
        self.assertEqual((cm.exception.code, cm.exception.param), ("product_not_allowed", "products[0]"))
        with self.assertRaises(PermissionDeniedError):
            w.workflows.list()
        anyw = self.srv.client(self.srv.worker_key())
        self.addCleanup(anyw.close)
        with self.assertRaises(InvalidRequestError) as cm:
            anyw.tasks.claim(["no-such-product"])
        self.assertEqual(cm.exception.param, "products[0]")
        # Nothing waiting: an empty list once the wait ends.
        started = time.monotonic()
        self.assertEqual(w.tasks.claim(["document-summary"], wait_seconds=1), [])
        self.assertGreaterEqual(time.monotonic() - started, 0.9)

        cus = harness.unique("cus_tasks")
        c.test_helpers.fund_customer(cus, 100_000)
        wf = c.workflows.create(product="document-summary", customer_id=cus, payload={"text": "Revenue is up 12 % on the year."})
        tasks = w.tasks.claim(["document-summary"], max=4, wait_seconds=10)
        self.assertEqual(len(tasks), 1)
        t = tasks[0]
        self.assertIsInstance(t, Task)
        self.assertEqual((t.object, t.workflow_id, t.product, t.customer_id, t.attempt, t.status),
                         ("task", wf.id, "document-summary", cus, 1, "claimed"))
        self.assertEqual(t.payload, {"text": "Revenue is up 12 % on the year."})

        with self.assertRaises(NotFoundError):
            w.tasks.heartbeat("task_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J")
        with self.assertRaises(InvalidRequestError) as cm:
            w.tasks.heartbeat(t.id, [{"category": "model", "provider": "m", "units": 1, "amount": 1.5}])
        self.assertEqual(cm.exception.param, "costItems.0.amount")
        with self.assertRaises(InvalidRequestError) as cm:
            w.tasks.heartbeat(t.id, [CostItem(category="model", provider="m", units=1, amount=-1)])
        self.assertEqual(cm.exception.param, "costItems[0]")
        with self.assertRaises(InvalidRequestError) as cm:
            w.tasks.fail(t.id, "x" * 1025)
        self.assertEqual(cm.exception.param, "message")
        beat = w.tasks.heartbeat(t.id, [CostItem(category="model", provider="summary-model", units=8, amount=1)])
        self.assertEqual(beat.spent.amount, 1)
        done = w.tasks.complete(t.id, {"summary": "Revenue is up"})
        self.assertEqual(done.status, "completed")
        again = w.tasks.complete(t.id, {"summary": "another"})  # idempotent: the first result stands
        self.assertEqual(again.status, "completed")
        with self.assertRaises(ConflictError) as cm:
            w.tasks.heartbeat(t.id)
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "task_ended"))
        with self.assertRaises(ConflictError) as cm:
            w.tasks.fail(t.id, "too late")
        self.assertEqual(cm.exception.code, "task_ended")
        got = self.wait_done(c, wf.id)
        self.assertEqual((got.status, got.result), ("Settled", {"summary": "Revenue is up"}))

        # A lease that passes: the late completion is 409 lease_lost and changes nothing.
        wf2 = c.workflows.create(product="document-summary", customer_id=cus, payload={"text": "Lease test."})
        first = w.tasks.claim(["document-summary"], wait_seconds=10)
        self.assertEqual([x.workflow_id for x in first], [wf2.id])
        time.sleep(3)
        with self.assertRaises(ConflictError) as cm:
            w.tasks.complete(first[0].id, {"by": "late"})
        self.assertEqual(cm.exception.code, "lease_lost")
        second = w.tasks.claim(["document-summary"], wait_seconds=15)
        self.assertEqual([(x.workflow_id, x.attempt) for x in second], [(wf2.id, 2)])
        w.tasks.complete(second[0].id, {"by": "second"})
        self.assertEqual(self.wait_done(c, wf2.id).result, {"by": "second"})

    def test_worker_in_process_margin_floor_and_drain(self) -> None:
        c = self.api()
        w = self.srv.client(self.srv.worker_key("--products", "image-moderation"))
        self.addCleanup(w.close)
        worker = Worker(w, concurrency=2, heartbeat_interval=0.3, wait=1, drain_timeout=1.0)
        seen: List[Any] = []
        stopped = threading.Event()
        release = threading.Event()

        @worker.handle("image-moderation")
        def moderate(task: Task, ctx: Any) -> Any:
            n = len(task.payload["imageUrls"])
            if n == 1:  # past the budget: stopped by the server
                try:
                    ctx.report_spend({"category": "model", "provider": "vision", "units": 1, "amount": (ctx.budget or 0) + 1})
                except TaskStopped as e:
                    seen.append(("stopped", e.reason, ctx.stopped, ctx.reason))
                    raise
                return {"verdicts": ["allowed"]}
            if n == 2:  # slow: still running at the drain timeout
                ctx.wait(0.8)  # past a heartbeat or two (the lease is 2 s)
                seen.append(("beat-through", ctx.stopped))
                stopped.set()
                release.wait(30)
                seen.append(("drained", ctx.stopped, ctx.reason))
                ctx.raise_if_stopped()
            return {"verdicts": ["allowed"] * n}

        runner = threading.Thread(target=worker.run, kwargs={"handle_signals": False}, daemon=True)
        runner.start()
        cus = harness.unique("cus_mod")
        c.test_helpers.fund_customer(cus, 100_000)
        lead = c.workflows.create(product="image-moderation", customer_id=cus, margin_floor=Decimal("0.1"),
                                  payload={"imageUrls": ["https://example.com/a.jpg"]})
        got = self.wait_done(c, lead.id)
        self.assertEqual((got.status, got.failure and got.failure.code, got.charged), ("Failed", "margin_floor_exceeded", None))
        self.assertEqual(seen, [("stopped", "margin_floor_exceeded", True, "margin_floor_exceeded")])

        slow = c.workflows.create(product="image-moderation", customer_id=cus,
                                  payload={"imageUrls": ["https://example.com/a.jpg", "https://example.com/b.jpg"]})
        self.assertTrue(stopped.wait(30))
        worker.stop()
        runner.join(10)  # the claim in flight (1 s) and the drain timeout (1 s)
        self.assertFalse(runner.is_alive(), "the worker did not stop")
        release.set()
        # Handed back with retry: a second attempt, run here by a fresh worker, settles it.
        again = Worker(w, wait=1, heartbeat_interval=0.5)
        attempts: List[int] = []

        def quick(task: Task, ctx: Any) -> Any:
            attempts.append(task.attempt)
            return {"verdicts": ["allowed", "allowed"]}

        again.handle("image-moderation", quick)
        t2 = threading.Thread(target=again.run, kwargs={"handle_signals": False}, daemon=True)
        t2.start()
        got = self.wait_done(c, slow.id)
        again.stop()
        t2.join(10)
        self.assertEqual(got.status, "Settled", got)
        self.assertEqual(attempts, [2])
        deadline = time.monotonic() + 5
        while len(seen) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(seen[1:], [("beat-through", False), ("drained", True, "worker_stopped")])

    def test_worker_keeps_every_lease_from_one_heartbeat_thread(self) -> None:
        # Three tasks at once, each running past the 2 s lease: the worker's
        # one heartbeat thread keeps all three, and its threads do not grow
        # with the tasks it runs.
        c = self.api()
        w = self.srv.client(self.srv.worker_key("--products", "image-moderation"))
        self.addCleanup(w.close)
        worker = Worker(w, concurrency=3, heartbeat_interval=0.4, wait=1, drain_timeout=5)
        attempts: List[Any] = []
        threads: Set[str] = set()

        @worker.handle("image-moderation")
        def moderate(task: Task, ctx: Any) -> Any:
            threads.update(t.name for t in threading.enumerate() if t.name.startswith("settleflow-"))
            if task.payload["imageUrls"][0].endswith("slow.jpg"):
                ctx.wait(3.0)  # one and a half leases
            attempts.append((task.workflow_id, task.attempt, ctx.stopped))
            return {"verdicts": ["allowed"]}

        runner = threading.Thread(target=worker.run, kwargs={"handle_signals": False}, daemon=True)
        runner.start()
        cus = harness.unique("cus_beats")
        c.test_helpers.fund_customer(cus, 100_000)
        slow = [c.workflows.create(product="image-moderation", customer_id=cus,
                                   payload={"imageUrls": [f"https://example.com/{i}/slow.jpg"]}) for i in range(3)]
        for wf in slow:
            got = self.wait_done(c, wf.id)
            self.assertEqual(got.status, "Settled", got)
        quick = [c.workflows.create(product="image-moderation", customer_id=cus,
                                    payload={"imageUrls": [f"https://example.com/{i}.jpg"]}) for i in range(12)]
        for wf in quick:
            self.assertEqual(self.wait_done(c, wf.id).status, "Settled")
        worker.stop()
        runner.join(10)
        self.assertFalse(runner.is_alive(), "the worker did not stop")
        self.assertEqual(sorted(a for a in attempts if a[0] in {wf.id for wf in slow}), sorted((wf.id, 1, False) for wf in slow))
        # Its 3 task threads and the heartbeat thread, whatever the tasks it ran.
        self.assertEqual(threads, {"settleflow-heartbeats", *(f"settleflow-task-runner-{i}" for i in range(3))})


if __name__ == "__main__":
    unittest.main()
