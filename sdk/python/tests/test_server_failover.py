"""A worker given several base URLs (docs/workers.md, "Several instances and
retries"), against two HTTPS proxies on loopback in front of a real reference
server that leaves image-moderation to workers (with a 2 s lease), each proxy
counting what it was sent:

- a first URL that refuses connections: every call goes to the next;
- a completion answered 502 (after the server recorded it) is retried, and
  the server counts it once: the workflow settles with one completion's cost;
- a completion answered 409 lease_lost is final: sent once;
- a claim whose connection is cut after it was sent is never sent again, to
  the same URL or the other, even on a kept-alive connection: the worker
  claims anew later and gets the attempt the server ran again.
"""

from __future__ import annotations

import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

from settleflow import APIConnectionError, Settleflow, Task, TaskContext, TaskResult, Worker, Workflow

from . import harness

PRODUCT = "image-moderation"
TERMINAL = ("Settled", "Failed", "Canceled")


class TestSeveralURLs(unittest.TestCase):
    srv: harness.Server
    key: str
    proxies: List[harness.Proxy]
    hook: Optional[Callable[[harness.Seen], Optional[Tuple[Any, ...]]]] = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.srv = harness.Server(("-remote", PRODUCT, "-task-lease", "2s"))
        cls.key = cls.srv.worker_key("--products", PRODUCT)

        def plan(n: int, seen: harness.Seen) -> Tuple[Any, ...]:
            hook = cls.hook
            action = hook(seen) if hook is not None else None
            return action or ("forward",)

        cls.proxies = [harness.Proxy(cls.srv, plan), harness.Proxy(cls.srv, plan)]

    @classmethod
    def tearDownClass(cls) -> None:
        for p in cls.proxies:
            p.close()
        cls.srv.stop()

    def setUp(self) -> None:
        self.api = self.srv.client()
        self.addCleanup(self.api.close)
        self.attempts: Dict[str, List[Task]] = {}
        self.lock = threading.Lock()

    def tearDown(self) -> None:
        type(self).hook = None

    def seen(self, path: str) -> List[harness.Seen]:
        return [s for p in self.proxies for s in list(p.seen) if s.path == path]

    def worker_client(self, *urls: str) -> Settleflow:
        c = Settleflow(api_key=self.key, base_url=list(urls), ca=self.srv.ca)
        self.addCleanup(c.close)
        return c

    def urls(self) -> List[str]:
        return [p.base_url for p in self.proxies]

    def create(self) -> str:
        cus = harness.unique("cus_failover")
        self.api.test_helpers.fund_customer(cus, 100_000)
        wf = self.api.workflows.create(product=PRODUCT, customer_id=cus, payload={"imageUrls": ["https://example.com/cat.jpg"]})
        return wf.id

    def start_worker(self, c: Settleflow, *, heartbeat_interval: float = 0.5, slow: Optional[str] = None) -> Callable[[], None]:
        """Runs a worker in a thread; the returned stop() returns once it drained (its tasks' ends reported).
        The first attempt of the workflow ``slow`` sleeps past its lease."""
        w = Worker(c, concurrency=4, heartbeat_interval=heartbeat_interval, wait=5)

        @w.handle(PRODUCT)
        def moderate(task: Task, ctx: TaskContext) -> TaskResult:
            with self.lock:
                self.attempts.setdefault(task.workflow_id, []).append(task)
            if task.workflow_id == slow and task.attempt == 1:
                time.sleep(max(0.0, task.lease_expires_at.timestamp() - time.time()) + 2)
            return TaskResult(result={"verdicts": ["allowed"]},
                              cost_items=[{"category": "model", "provider": "vision-model", "units": 1, "amount": 3}])

        errors: List[BaseException] = []

        def run() -> None:
            try:
                w.run(handle_signals=False)
            except BaseException as e:  # noqa: BLE001 - reported by stop()
                errors.append(e)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        stopped = [False]

        def stop() -> None:
            if stopped[0]:
                return
            stopped[0] = True
            w.stop()
            t.join(60)
            self.assertFalse(t.is_alive(), "the worker did not stop")
            self.assertEqual(errors, [])

        self.addCleanup(stop)
        return stop

    def settled(self, wf: str, timeout: float = 60) -> Workflow:
        deadline = time.monotonic() + timeout
        while True:
            w = self.api.workflows.fetch(wf)
            if w.status in TERMINAL:
                break
            if time.monotonic() > deadline:
                self.fail(f"workflow {wf} still {w.status} after {timeout} s")
            time.sleep(0.1)
        assert w.cost is not None
        self.assertEqual((w.status, w.cost.amount), ("Settled", 3), "want Settled, costing the 3 of one completion")
        return w

    def tasks_of(self, wf: str) -> List[Task]:
        with self.lock:
            return list(self.attempts.get(wf, []))

    def test_refused_first_url(self) -> None:
        refused = f"https://127.0.0.1:{harness.closed_port()}"
        c = self.worker_client(refused, self.proxies[0].base_url)
        before = len(self.seen("/v1/tasks/claim"))
        for _ in range(4):
            c.tasks.claim([PRODUCT])  # raises if it did not reach the second URL
        self.assertEqual(len(self.seen("/v1/tasks/claim")) - before, 4)
        self.start_worker(c)
        wf = self.create()
        self.settled(wf)
        tasks = self.tasks_of(wf)
        self.assertEqual([t.attempt for t in tasks], [1])
        self.assertEqual(len(self.seen(f"/v1/tasks/{tasks[0].id}/complete")), 1)

    def test_502_on_complete_is_retried(self) -> None:
        once = threading.Lock()

        def hook(seen: harness.Seen) -> Optional[Tuple[Any, ...]]:
            if seen.path.endswith("/complete") and once.acquire(blocking=False):
                # The server records it; the worker hears 502.
                return ("answer_after_forward", 502, {}, b'{"error":{"type":"api_error","code":"bad_gateway","message":"from the test proxy"}}')
            return None

        type(self).hook = hook
        self.start_worker(self.worker_client(*self.urls()))
        wf = self.create()
        self.settled(wf)
        tasks = self.tasks_of(wf)
        self.assertEqual(len(tasks), 1)
        got = self.seen(f"/v1/tasks/{tasks[0].id}/complete")
        self.assertEqual([s.upstream_status for s in got], [200, 200], "want 2 completions, each answered 200 by the server")

    def test_409_lease_lost_on_complete_is_final(self) -> None:
        wf = self.create()
        stop = self.start_worker(self.worker_client(*self.urls()), heartbeat_interval=3600, slow=wf)
        self.settled(wf)
        stop()  # the slow attempt's handler has returned and its end was reported
        tasks = self.tasks_of(wf)
        self.assertEqual([t.attempt for t in tasks], [1, 2])
        lost = self.seen(f"/v1/tasks/{tasks[0].id}/complete")
        self.assertEqual([s.upstream_status for s in lost], [409], "the late completion: once, answered 409")
        self.assertIn(b'"lease_lost"', lost[0].upstream_body)
        self.assertEqual(len(self.seen(f"/v1/tasks/{tasks[1].id}/complete")), 1)

    def test_claim_cut_after_it_was_sent(self) -> None:
        c = self.worker_client(*self.urls())
        # One claim to each URL, so the next finds a kept-alive connection.
        c.tasks.claim([PRODUCT])
        c.tasks.claim([PRODUCT])
        claims: List[harness.Seen] = []

        def hook(seen: harness.Seen) -> Optional[Tuple[Any, ...]]:
            if seen.path != "/v1/tasks/claim":
                return None
            claims.append(seen)
            # The server leases the task; the worker never hears of it.
            return ("drop_after_forward",) if len(claims) == 1 else None

        type(self).hook = hook
        wf = self.create()
        with self.assertRaises(APIConnectionError):
            c.tasks.claim([PRODUCT], wait_seconds=10)
        self.assertEqual(len(claims), 1, "the claim was sent again")
        self.assertEqual(claims[0].upstream_status, 200)
        self.assertIn(wf.encode(), claims[0].upstream_body, "the claim that was cut leased the workflow's task")
        type(self).hook = None
        # The worker claims anew and gets the attempt the server runs again once the lost one's lease passed.
        self.start_worker(c)
        self.settled(wf)
        self.assertEqual([t.attempt for t in self.tasks_of(wf)], [2])


if __name__ == "__main__":
    unittest.main()
