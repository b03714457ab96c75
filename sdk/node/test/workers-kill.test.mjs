// A Node.js worker process SIGKILLed in the middle of a task, against a real
// reference server (-remote document-summary, a 2 s lease): the task is
// claimed again once the lease passes and a new worker completes it, once,
// as attempt 2; the first worker's completion, sent late with its task id,
// is 409 lease_lost and changes nothing; the workflow is charged once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, symlink, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Settleflow, Worker, ConflictError } from '../src/index.js';
import { startServer, SDK_DIR } from '../test-support/server.mjs';

let server;
let client;
let dir;
let child;

before(async () => {
  server = await startServer({ args: ['-remote', 'document-summary', '-task-lease', '2s'] });
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  dir = await mkdtemp(path.join(tmpdir(), 'settleflow-node-kill-'));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(SDK_DIR, path.join(dir, 'node_modules', 'settleflow'), 'dir');
});
after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  client?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function settled(id, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const w = await client.workflows.fetch(id);
    if (['Settled', 'Failed', 'Canceled'].includes(w.status)) return w;
    if (Date.now() > end) throw new Error(`workflow ${id} still ${w.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a worker process killed mid-task: claimed again after its lease, completed once, the late completion is 409', async () => {
  const key = await server.addKey(['--name', 'summary', '--kind', 'worker', '--products', 'document-summary']);
  // The first worker: prints the task it started, then hangs (heartbeating) until killed.
  await writeFile(path.join(dir, 'hang.mjs'), `
import { Settleflow, Worker } from 'settleflow';
const worker = new Worker(new Settleflow({ baseUrl: ${JSON.stringify(server.baseUrl)}, ca: ${JSON.stringify(server.ca)} }), { heartbeatInterval: 300, wait: 2000 });
worker.handle('document-summary', async (task) => {
  console.log('started', task.id, task.attempt);
  await new Promise((r) => setTimeout(r, 600_000));
  return { result: { summary: 'first' } };
});
await worker.run();
`);
  child = spawn(process.execPath, ['hang.mjs'], { cwd: dir, env: { ...process.env, SETTLEFLOW_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, sig })));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();

  const cus = 'cus_' + randomUUID().replaceAll('-', '');
  await client.testHelpers.fundCustomer(cus, 100_000);
  const before = (await client.customers.fetch(cus)).balance;
  const wf = await client.workflows.create({ product: 'document-summary', customerId: cus, payload: { text: 'Killed mid-task.' } });
  const first = await Promise.race([lines.next(), exited.then((e) => assert.fail(`the worker exited ${JSON.stringify(e)}: ${stderr}`))]);
  const [word, firstTask, attempt] = first.value.split(' ');
  assert.deepEqual([word, attempt], ['started', '1'], first.value);
  await new Promise((r) => setTimeout(r, 1000)); // a few heartbeats: the lease (2 s) is held while the process lives
  assert.equal((await client.workflows.fetch(wf.id)).status, 'Running');
  child.kill('SIGKILL');
  assert.deepEqual(await exited, { code: null, sig: 'SIGKILL' });

  const w = new Settleflow({ apiKey: key, baseUrl: server.baseUrl, ca: server.ca });
  try {
    const again = new Worker(w, { wait: 1000, heartbeatInterval: 500 });
    const attempts = [];
    again.handle('document-summary', async (task) => {
      attempts.push(task.attempt);
      return { result: { summary: 'second' }, costItems: [{ category: 'model', provider: 'summary-model', units: 4, amount: 1 }] };
    });
    const running = again.run({ handleSignals: false });
    const got = await settled(wf.id);
    again.stop();
    await running;
    assert.equal(got.status, 'Settled', JSON.stringify(got));
    assert.deepEqual(got.result, { summary: 'second' });
    assert.deepEqual(attempts, [2]);
    // Fixed pricing, minimum charge 25: charged the quote, once.
    assert.equal(got.charged.amount, got.quoted.amount);
    const charged = got.charged.amount;

    // The first worker's completion, arriving late, is 409 and changes nothing.
    await assert.rejects(w.tasks.complete(firstTask, { result: { summary: 'first' } }),
      (e) => e instanceof ConflictError && e.status === 409 && e.code === 'lease_lost');
    const after = await client.workflows.fetch(wf.id);
    assert.deepEqual([after.status, after.result, after.charged.amount, after.settlement.txHash], ['Settled', { summary: 'second' }, charged, got.settlement.txHash]);
    // Charged once: the customer's balance fell by the charge alone.
    const { balance } = await client.customers.fetch(cus);
    assert.deepEqual([balance.onChain, balance.reserved, balance.available], [before.onChain - charged, 0, before.available - charged], JSON.stringify([before, balance]));
  } finally {
    w.close();
  }
});
