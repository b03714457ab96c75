"""The Python worker of `go run ./cmd/bench -suite workers`: one process
serving the bench's no-op declared product with the SDK's Worker (standard
library only). It is configured by the environment the bench sets:
BENCH_KEY (a worker key), BENCH_URL, BENCH_CA (the server's certificate),
BENCH_CONCURRENCY (the Worker's concurrency). A task whose payload has
"probe": true prints "started WORKFLOW_ID NANOSECONDS" (time.time_ns(), the
clock the bench reads as Go's time.Now) as its handler starts, for the
idle-worker latency; the others print nothing. SIGTERM stops it. With
BENCH_PROFILE set (-python-profile), every thread runs under cProfile (its CPU time) and
the merged statistics are written to BENCH_PROFILE.PID at the end."""

import os
import sys
import time

from settleflow import Settleflow, Worker


def main() -> None:
    client = Settleflow(api_key=os.environ["BENCH_KEY"], base_url=os.environ["BENCH_URL"], ca=os.environ["BENCH_CA"])
    worker = Worker(client, concurrency=int(os.environ["BENCH_CONCURRENCY"]), wait=20, drain_timeout=5)
    out = sys.stdout

    @worker.handle("noop")
    def noop(task, ctx):  # noqa: ANN001, ANN202 - the bench's handler
        if task.payload.get("probe") is True:
            out.write(f"started {task.workflow_id} {time.time_ns()}\n")
            out.flush()
        return None

    worker.run()
    client.close()


def profiled(path: str) -> None:
    import cProfile
    import pstats
    import threading

    profiles = []
    run = threading.Thread.run

    def profiled_run(self: threading.Thread) -> None:
        p = cProfile.Profile(time.thread_time)
        profiles.append(p)
        p.enable()
        try:
            run(self)
        finally:
            p.disable()

    threading.Thread.run = profiled_run  # type: ignore[method-assign]
    p = cProfile.Profile(time.thread_time)
    p.enable()
    try:
        main()
    finally:
        p.disable()
        stats = pstats.Stats(p)
        for q in profiles:
            stats.add(q)
        stats.dump_stats(f"{path}.{os.getpid()}")


if __name__ == "__main__":
    if os.environ.get("BENCH_PROFILE"):
        profiled(os.environ["BENCH_PROFILE"])
    else:
        main()
