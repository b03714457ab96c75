"""A Python worker for the end-to-end tests of examples/server (workers_lang_test.go).

It serves the products named in SETTLEFLOW_TEST_PRODUCTS (comma-separated)
with one handler driven by a plan: SETTLEFLOW_TEST_PLAN is a JSON file that
maps a customer id to what its task does:

  spend       cost items reported one by one with ctx.report_spend while it runs
  costItems   cost items sent with the completion
  result      the result (a JSON object)
  hang        on attempt 1, wait until the process is killed
  permanent   fail for good with this message

Each step is printed to stdout as a JSON line ({"event": "started" | "stopped"
| "returned", ...}), so the test knows what the worker saw. Standard library
and the settleflow package only.
"""

import json
import os
import sys
import threading

from settleflow import Permanent, Settleflow, TaskResult, TaskStopped, Worker

out_lock = threading.Lock()


def say(**fields):
    with out_lock:
        print(json.dumps(fields), flush=True)


with open(os.environ["SETTLEFLOW_TEST_PLAN"]) as f:
    plans = json.load(f)

client = Settleflow(base_url=os.environ["SETTLEFLOW_BASE_URL"], ca=os.environ["SETTLEFLOW_TEST_CA"])
worker = Worker(client, concurrency=4, heartbeat_interval=0.3, wait=2, drain_timeout=5)


def run(task, ctx):
    plan = plans[task.customer_id]
    say(event="started", task=task.id, workflow=task.workflow_id, product=task.product, attempt=task.attempt,
        budget=ctx.budget, pid=os.getpid())
    if plan.get("hang") and task.attempt == 1:
        ctx.wait(600)
    if plan.get("permanent"):
        raise Permanent(plan["permanent"])
    for item in plan.get("spend", []):
        try:
            ctx.report_spend(item)
        except TaskStopped as e:
            # The server's answer (a 409 ConflictError) is the exception's context.
            answer = e.__cause__ or e.__context__
            say(event="stopped", task=task.id, reason=e.reason, status=getattr(answer, "status", None),
                code=getattr(answer, "code", None))
            raise
    say(event="returned", task=task.id, attempt=task.attempt)
    return TaskResult(plan.get("result", {}), plan.get("costItems", []))


for product in os.environ["SETTLEFLOW_TEST_PRODUCTS"].split(","):
    worker.handle(product, run)
say(event="ready", pid=os.getpid())
worker.run()
say(event="exited")
sys.exit(0)
