"""The Python worker of `go run ./cmd/bench -suite workers`: one process
serving the bench's no-op declared product with the SDK's Worker (standard
library only). It is configured by the environment the bench sets:
BENCH_KEY (a worker key), BENCH_URL, BENCH_CA (the server's certificate),
BENCH_CONCURRENCY (the Worker's concurrency). A task whose payload has
"probe": true prints "started WORKFLOW_ID NANOSECONDS" (time.time_ns(), the
clock the bench reads as Go's time.Now) as its handler starts, for the
idle-worker latency; the others print nothing. SIGTERM stops it."""

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


if __name__ == "__main__":
    main()
