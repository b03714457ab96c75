"""Workers: run remote products' tasks in this process (docs/api.md §16).

A :class:`Worker` claims the tasks of the products it has handlers for and
runs each handler in a thread of its own (one of ``concurrency`` threads,
kept for the worker's life), heartbeating its lease (one thread for all its
tasks), until :meth:`Worker.stop` (or SIGTERM / SIGINT when
:meth:`Worker.run` runs in the main thread). Standard library only.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import random
import signal
import socket
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from ._client import CostItemLike, Settleflow
from ._errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    SettleflowError,
)
from ._models import Task
from ._version import __version__

__all__ = ["Worker", "TaskContext", "TaskResult", "TaskStopped", "Permanent"]

logger = logging.getLogger("settleflow")

#: How long a worker whose last claim took all it asked for waits for half
#: its slots to be free before it claims again (seconds): a batch per claim
#: while tasks are waiting, no wait when none are.
BATCH_WAIT = 0.01

#: Why a task was stopped (:attr:`TaskContext.reason`).
LEASE_LOST = "lease_lost"
MARGIN_FLOOR_EXCEEDED = "margin_floor_exceeded"
WORKER_STOPPED = "worker_stopped"


class Permanent(Exception):
    """Raised by a handler: a failure that retrying will not mend. The
    workflow fails for good (``fail`` with ``retry=False``); any other
    exception fails only this attempt, which the server retries after its
    backoff."""


class TaskStopped(SettleflowError):
    """The task was stopped: ``reason`` is ``"lease_lost"`` (the server took
    it back: no heartbeat in time, the execution timed out, the workflow was
    canceled), ``"margin_floor_exceeded"`` (its spend passed the budget: the
    workflow failed, nothing is charged) or ``"worker_stopped"`` (the worker
    stopped and the drain timeout passed; the task is handed back to be
    retried). Raised by :meth:`TaskContext.report_spend` and
    :meth:`TaskContext.raise_if_stopped`; a handler may let it propagate."""

    def __init__(self, reason: str, cause: Optional[BaseException] = None) -> None:
        super().__init__(f"the task was stopped: {reason}" + (f" ({cause})" if cause else ""))
        self.reason = reason


@dataclasses.dataclass
class TaskResult:
    """What a handler may return: the workflow's ``result`` (a dict) and the
    ``cost_items`` of its run besides those reported with
    :meth:`TaskContext.report_spend`. A handler may also return a plain dict
    (the result, no cost items) or None (``{}``)."""

    result: Optional[Mapping[str, Any]] = None
    cost_items: List[CostItemLike] = dataclasses.field(default_factory=list)


Handler = Callable[[Task, "TaskContext"], Union[TaskResult, Mapping[str, Any], None]]


def _stop_reason(e: BaseException) -> Optional[str]:
    """Why an answer about a task means it must be stopped, or None."""
    if isinstance(e, ConflictError) and e.code == MARGIN_FLOOR_EXCEEDED:
        return MARGIN_FLOOR_EXCEEDED
    if isinstance(e, (ConflictError, NotFoundError)):
        return LEASE_LOST
    return None


class TaskContext:
    """What a handler gets besides its task: the ``budget`` the margin floor
    leaves (minor units, None when no floor applies), :meth:`report_spend`,
    and whether the task was ``stopped`` (and why: ``reason``)."""

    def __init__(self, worker: Worker, task: Task) -> None:
        self.task = task
        #: The most the task may spend and keep its margin floor (minor units), or None.
        self.budget: Optional[int] = task.budget.amount if task.budget is not None else None
        self._worker = worker
        self._stopped = threading.Event()
        self._done = threading.Event()
        self._reason: Optional[str] = None
        # Orders the heartbeats (timer and report_spend) and the final report.
        self._lock = threading.Lock()
        self._reported = False
        # When the heartbeat thread extends the lease next (time.monotonic()).
        self._next_beat = time.monotonic() + worker.heartbeat_interval

    @property
    def stopped(self) -> bool:
        """Whether the task was stopped; stop working and return (or raise) soon."""
        return self._stopped.is_set()

    @property
    def reason(self) -> Optional[str]:
        """Why the task was stopped (``lease_lost``, ``margin_floor_exceeded``, ``worker_stopped``), or None."""
        return self._reason

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Sleeps up to ``timeout`` seconds, waking early if the task is
        stopped; returns whether it was stopped."""
        return self._stopped.wait(timeout)

    def raise_if_stopped(self) -> None:
        """Raises :class:`TaskStopped` if the task was stopped."""
        if self._reason is not None:
            raise TaskStopped(self._reason)

    def report_spend(self, *items: CostItemLike) -> None:
        """Reports what the task spent, at once, in a heartbeat: the server adds
        the items to the workflow's cost. Past the budget it raises
        :class:`TaskStopped` (``margin_floor_exceeded``): the workflow failed,
        nothing is charged. An item the server refuses raises its
        :class:`InvalidRequestError` and changes nothing."""
        self.raise_if_stopped()
        self._heartbeat(list(items))

    def _stop(self, reason: str) -> None:
        if self._reason is None:
            self._reason = reason
        self._stopped.set()

    def _heartbeat(self, items: List[CostItemLike]) -> None:
        with self._lock:
            if self._reported:
                raise TaskStopped(self._reason or WORKER_STOPPED)
            try:
                self._worker._client.tasks.heartbeat(self.task.id, items)
            except APIError as e:
                reason = _stop_reason(e)
                if reason is None:
                    raise
                self._stop(reason)
                raise TaskStopped(reason, e) from None


def _truncate(s: str, n: int) -> str:
    """``s`` cut to at most ``n`` bytes of UTF-8, at a character boundary."""
    return s.encode("utf-8")[:n].decode("utf-8", "ignore")


class Worker:
    """Runs handlers for remote products' tasks.

    >>> worker = Worker(Settleflow(api_key="rk_test_…", ca="settleflow-data/tls/cert.pem"))
    >>> @worker.handle("ticket-triage")
    ... def triage(task, ctx):
    ...     ctx.report_spend({"category": "model", "provider": "openai", "units": 1200, "amount": 90})
    ...     return {"queue": "billing"}
    >>> worker.run()  # until SIGTERM or worker.stop()

    ``concurrency`` tasks run at once, each in a thread (the worker keeps
    ``concurrency`` threads while it runs); each task's lease is extended
    every ``heartbeat_interval`` seconds (the server's lease is 30 s
    by default); a claim waits up to ``wait`` seconds (at most 30) for a
    task. While tasks are waiting (the last claim took all it asked for),
    the worker claims them in batches: it waits up to :data:`BATCH_WAIT`
    for half its slots to be free before claiming again. Once stopped, the worker claims no more, lets the tasks in flight
    finish within ``drain_timeout`` seconds, then marks those left stopped
    (``worker_stopped``) and hands them back to the server to be retried.
    A stop takes effect when the claim in flight returns (within ``wait``).

    Each claim says which worker sends it (the server's dashboard lists
    workers by key, host and name, and shows which ran each attempt):
    ``host`` defaults to the hostname, ``name`` to ``pid-`` and the process
    id (``Worker(client, name="triage-1")`` to choose one).
    """

    def __init__(
        self,
        client: Settleflow,
        *,
        concurrency: int = 4,
        heartbeat_interval: float = 10.0,
        wait: float = 20.0,
        drain_timeout: float = 30.0,
        name: Optional[str] = None,
        host: Optional[str] = None,
    ) -> None:
        for what, v in (("heartbeat_interval", heartbeat_interval), ("wait", wait), ("drain_timeout", drain_timeout)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise ValueError(f"{what} must be a number of seconds >= 0")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= 100:
            raise ValueError("concurrency must be an int from 1 to 100")
        if heartbeat_interval <= 0:
            raise ValueError("heartbeat_interval must be positive")
        for what, v in (("name", name), ("host", host)):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"{what} must be a str")
        self._client = client
        #: What the worker says of itself on each claim (the server's
        #: dashboard shows it): its host, its name ("pid-" and the process
        #: id unless given) and this library's version.
        self.identity = {
            "host": _truncate(host if host is not None else socket.gethostname(), 255),
            "name": name if name is not None else f"pid-{os.getpid()}",
            "sdk": f"settleflow-python/{__version__}",
        }
        self.concurrency = concurrency
        self.heartbeat_interval = float(heartbeat_interval)
        self.wait = int(min(wait, 30))
        self.drain_timeout = float(drain_timeout)
        self._handlers: Dict[str, Handler] = {}
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._running: Dict[str, TaskContext] = {}
        # Signalled when a task ends (the drain waits on it).
        self._ended = threading.Condition(self._lock)
        # The tasks claimed, for the runner threads: (handler, task, ctx, slots), None to end.
        self._queue: "queue.SimpleQueue[Optional[Tuple[Handler, Task, TaskContext, threading.Semaphore]]]" = queue.SimpleQueue()

    def handle(self, product: str, handler: Optional[Handler] = None) -> Any:
        """Registers ``handler(task, ctx)`` for the remote product named
        ``product``; without ``handler``, a decorator. Register every handler
        before :meth:`run`."""
        if not isinstance(product, str) or not product:
            raise ValueError("product must be a non-empty string")

        def register(h: Handler) -> Handler:
            self._handlers[product] = h
            return h

        return register if handler is None else register(handler)

    def stop(self) -> None:
        """Stops claiming; :meth:`run` drains the tasks in flight and returns.
        Safe from any thread and from a signal handler."""
        self._stopping.set()

    def run(self, *, handle_signals: bool = True) -> None:
        """Claims and runs tasks until :meth:`stop` (or, with
        ``handle_signals`` in the main thread, SIGTERM or SIGINT), then drains
        them (``drain_timeout``) and returns. A claim that fails is never
        resent: after a pause (from 0.5 s doubling to 30 s, with jitter) the
        worker sends a new claim (the tasks of a claim whose answer was lost
        come back when their lease passes). A completion or failure is
        retried as the client's ``max_retries`` says (those calls are
        idempotent), through any of its base URLs. An error no retry mends (a key that is not a worker
        key, a product it may not serve or the server does not run remotely)
        is raised, after the drain."""
        handlers = dict(self._handlers)
        if not handlers:
            raise ValueError("the worker has no handler: call handle() first")
        products = sorted(handlers)
        restore: Dict[int, Any] = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                restore[sig] = signal.signal(sig, lambda *_: self.stop())
        slots = threading.Semaphore(self.concurrency)
        batch = max(1, self.concurrency // 2)
        saturated = False
        pause = 0.5
        failure: Optional[BaseException] = None
        beats_end = threading.Event()
        threads = [threading.Thread(target=self._heartbeats, args=(beats_end,), name="settleflow-heartbeats", daemon=True)]
        threads += [
            threading.Thread(target=self._runner, name=f"settleflow-task-runner-{i}", daemon=True) for i in range(self.concurrency)
        ]
        for t in threads:
            t.start()
        try:
            while not self._stopping.is_set():
                if not slots.acquire(timeout=0.2):
                    continue
                free = 1
                if saturated:
                    # The last claim took all it asked for: more tasks are
                    # likely waiting. Gather a batch of free slots (a short
                    # wait) rather than claim one task at a time.
                    until = time.monotonic() + BATCH_WAIT
                    while free < batch:
                        left = until - time.monotonic()
                        if left <= 0 or not slots.acquire(timeout=left):
                            break
                        free += 1
                while free < self.concurrency and slots.acquire(blocking=False):
                    free += 1
                try:
                    got = self._client.tasks.claim(products, max=free, wait_seconds=self.wait, worker=self.identity)
                except (PermissionDeniedError, AuthenticationError, InvalidRequestError) as e:
                    for _ in range(free):
                        slots.release()
                    failure = e
                    break
                except (APIError, APIConnectionError) as e:
                    for _ in range(free):
                        slots.release()
                    # Half the pause plus a random part of the other half: workers cut off together do not all come back at once.
                    wait = pause / 2 + random.random() * pause / 2
                    logger.warning("settleflow: claiming tasks failed (%s); claiming again in %.1fs", e, wait)
                    self._stopping.wait(wait)
                    pause = min(2 * pause, 30.0)
                    continue
                pause = 0.5
                saturated = len(got) == free
                for _ in range(free - len(got)):
                    slots.release()
                for task in got:
                    if self._stopping.is_set():
                        # Claimed as the worker stopped: handed back at once.
                        self._report(lambda t=task: self._client.tasks.fail(t.id, "the worker stopped before the task started", retry=True), task)
                        slots.release()
                        continue
                    self._start(handlers[task.product], task, slots)
            self._drain()
        finally:
            beats_end.set()
            for _ in range(self.concurrency):
                self._queue.put(None)  # a runner still in a handler ends after it
            for sig, old in restore.items():
                signal.signal(sig, old)
        if failure is not None:
            raise failure

    def _start(self, handler: Handler, task: Task, slots: threading.Semaphore) -> None:
        ctx = TaskContext(self, task)
        with self._lock:
            self._running[task.id] = ctx
        self._queue.put((handler, task, ctx, slots))

    def _runner(self) -> None:
        """A thread running the claimed tasks' handlers, one at a time, until it takes None."""
        while True:
            item = self._queue.get()
            if item is None:
                return
            handler, task, ctx, slots = item
            try:
                self._run(handler, task, ctx)
            finally:
                with self._lock:
                    self._running.pop(task.id, None)
                    self._ended.notify_all()
                slots.release()

    def _drain(self) -> None:
        deadline = time.monotonic() + self.drain_timeout
        with self._lock:
            while self._running:
                left_s = deadline - time.monotonic()
                if left_s <= 0:
                    break
                self._ended.wait(left_s)
            left = list(self._running.values())
        for ctx in left:
            # Past the drain timeout: the handler is told to stop, and the task
            # is handed back now; whatever the handler returns later is dropped.
            ctx._stop(WORKER_STOPPED)
            with ctx._lock:
                if ctx._reported:
                    continue
                ctx._reported = True
            self._report(lambda c=ctx: self._client.tasks.fail(c.task.id, "the worker stopped before the task finished", retry=True), ctx.task)

    def _heartbeats(self, end: threading.Event) -> None:
        """The thread extending the leases of the running tasks, each every
        ``heartbeat_interval`` seconds from its start or its last heartbeat,
        until ``end`` is set."""
        interval = self.heartbeat_interval
        while True:
            with self._lock:
                running = list(self._running.values())
            for ctx in running:
                if ctx._done.is_set() or ctx.stopped or ctx._next_beat > time.monotonic():
                    continue
                try:
                    ctx._heartbeat([])
                except TaskStopped:
                    continue
                except SettleflowError as e:
                    logger.warning("settleflow: heartbeat of task %s failed: %s", ctx.task.id, e)
                ctx._next_beat = time.monotonic() + interval
            # A task started from now on is due interval seconds after its
            # start: never before this wait ends.
            now = time.monotonic()
            wait = interval
            with self._lock:
                for ctx in self._running.values():
                    if not ctx._done.is_set() and not ctx.stopped:
                        wait = min(wait, max(0.0, ctx._next_beat - now))
            if end.wait(wait):
                return

    def _run(self, handler: Handler, task: Task, ctx: TaskContext) -> None:
        error: Optional[BaseException] = None
        out: Any = None
        try:
            out = handler(task, ctx)
        except Exception as e:  # noqa: BLE001 - any handler failure fails the attempt
            error = e
        ctx._done.set()
        with ctx._lock:
            if ctx._reported:
                return  # handed back by the drain
            ctx._reported = True
        if ctx.reason in (LEASE_LOST, MARGIN_FLOOR_EXCEEDED):
            return  # the server stopped it: nothing to report
        tasks = self._client.tasks
        if error is not None:
            retry = not isinstance(error, Permanent) or ctx.reason == WORKER_STOPPED
            self._report(lambda: tasks.fail(task.id, _fail_message(error), retry=retry), task)
            return
        if isinstance(out, TaskResult):
            result, items = out.result, out.cost_items
        else:
            result, items = out, []
        try:
            tasks._complete(task.id, result, items)
        except InvalidRequestError as e:
            if isinstance(e, NotFoundError):
                logger.warning("settleflow: completing task %s: %s", task.id, e)
                return
            # The result or its cost items were refused: the same run would give the same again.
            self._report(lambda: tasks.fail(task.id, _fail_message(Permanent(f"the result was refused: {e.message}")), retry=False), task)
        except SettleflowError as e:
            logger.warning("settleflow: completing task %s failed: %s", task.id, e)

    @staticmethod
    def _report(call: Callable[[], Any], task: Task) -> None:
        try:
            call()
        except SettleflowError as e:
            logger.warning("settleflow: reporting the end of task %s failed: %s", task.id, e)


def _fail_message(e: BaseException) -> str:
    """e's text as a task's failure message: not empty, at most 1,024 bytes of UTF-8."""
    msg = str(e) or type(e).__name__
    data = msg.encode("utf-8", "replace")[:1024]
    return data.decode("utf-8", "ignore") or "the handler failed"

