// A Node.js worker for the end-to-end tests of examples/server
// (workers_lang_test.go), the twin of plan_worker.py: it serves the products
// named in SETTLEFLOW_TEST_PRODUCTS with one handler driven by the plan in
// the JSON file SETTLEFLOW_TEST_PLAN (customer id → spend, costItems,
// result, hang, permanent) and prints each step as a JSON line. Node's
// built-ins and the settleflow package only.
import { readFileSync } from 'node:fs';
import { Settleflow, Worker, Permanent, TaskStoppedError } from 'settleflow';

const plans = JSON.parse(readFileSync(process.env.SETTLEFLOW_TEST_PLAN, 'utf8'));
const say = (fields) => process.stdout.write(JSON.stringify(fields) + '\n');

const client = new Settleflow({ baseUrl: process.env.SETTLEFLOW_BASE_URL, ca: readFileSync(process.env.SETTLEFLOW_TEST_CA) });
const worker = new Worker(client, { concurrency: 4, heartbeatInterval: 300, wait: 2000, drainTimeout: 5000 });

async function run(task, { budget, reportSpend, signal }) {
  const plan = plans[task.customerId];
  say({ event: 'started', task: task.id, workflow: task.workflowId, product: task.product, attempt: task.attempt, budget, pid: process.pid });
  if (plan.hang && task.attempt === 1) {
    await new Promise((resolve) => {
      const t = setTimeout(resolve, 600_000);
      signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
    });
  }
  if (plan.permanent) throw new Permanent(plan.permanent);
  for (const item of plan.spend ?? []) {
    try {
      await reportSpend(item);
    } catch (e) {
      if (e instanceof TaskStoppedError) say({ event: 'stopped', task: task.id, reason: e.reason, status: e.cause?.status ?? null, code: e.cause?.code ?? null });
      throw e;
    }
  }
  say({ event: 'returned', task: task.id, attempt: task.attempt });
  return { result: plan.result ?? {}, costItems: plan.costItems ?? [] };
}

for (const product of process.env.SETTLEFLOW_TEST_PRODUCTS.split(',')) worker.handle(product, run);
say({ event: 'ready', pid: process.pid });
await worker.run();
say({ event: 'exited' });
