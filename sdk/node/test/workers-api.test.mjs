// Workers against a real reference server serving demo products remotely
// (-remote): the README's worker runs as a process of its own and serves
// ticket-triage end to end; the task endpoints' errors map to the client's
// error classes; a Worker in this process is stopped by its margin floor (its
// AbortSignal) and hands a task back when the drain timeout passes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, copyFile, symlink, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  Settleflow,
  Worker,
  TaskStoppedError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
} from '../src/index.js';
import { startServer, SDK_DIR } from '../test-support/server.mjs';

let server;
let client;
let dir;
const children = [];

before(async () => {
  server = await startServer({ args: ['-remote', 'ticket-triage,document-summary,image-moderation', '-task-lease', '2s'] });
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  dir = await mkdtemp(path.join(tmpdir(), 'settleflow-node-worker-'));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(SDK_DIR, path.join(dir, 'node_modules', 'settleflow'), 'dir');
  await mkdir(path.join(dir, 'settleflow-data', 'tls'), { recursive: true });
  await copyFile(server.certFile, path.join(dir, 'settleflow-data', 'tls', 'cert.pem'));
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  client?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const customer = () => 'cus_' + randomUUID().replaceAll('-', '');
const workerClient = async (...args) => {
  const key = await server.addKey(['--name', 'w', '--kind', 'worker', ...args]);
  assert.match(key, /^rk_test_/);
  return new Settleflow({ apiKey: key, baseUrl: server.baseUrl, ca: server.ca });
};

async function settled(id, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const w = await client.workflows.fetch(id);
    if (['Settled', 'Failed', 'Canceled'].includes(w.status)) return w;
    if (Date.now() > end) throw new Error(`workflow ${id} still ${w.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("the README's worker, as a process, serves ticket-triage end to end and drains on SIGTERM", async () => {
  const readme = await readFile(path.join(SDK_DIR, 'README.md'), 'utf8');
  const m = /^```js worker\n([\s\S]*?)^```$/m.exec(readme);
  assert.ok(m, 'the README has a js worker block');
  let code = m[1].replaceAll("'https://127.0.0.1:8443'", `'${server.baseUrl}'`);
  // A short claim wait, so that SIGTERM is answered within the test's patience.
  code = code.replace('{ concurrency: 8 }', '{ concurrency: 8, wait: 2000 }');
  await writeFile(path.join(dir, 'worker.mjs'), code);
  const key = await server.addKey(['--name', 'triage', '--kind', 'worker', '--products', 'ticket-triage']);
  const child = spawn(process.execPath, ['worker.mjs'], { cwd: dir, env: { ...process.env, SETTLEFLOW_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, sig })));

  const cus = customer();
  await client.testHelpers.fundCustomer(cus, 100_000);
  // Fixed pricing: the charge is the quote.
  const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: { ticketId: 'T-1', subject: 'Refund please', attachments: 1 } });
  const got = await settled(wf.id);
  assert.equal(got.status, 'Settled', JSON.stringify(got) + output);
  assert.deepEqual(got.result, { ticketId: 'T-1', queue: 'billing' });
  assert.equal(got.quoted.amount, 358);
  assert.equal(got.charged.amount, 358);
  assert.equal(got.cost.amount, 90);
  assert.match(got.settlement.txHash, /^0x[0-9a-f]{64}$/);

  // Permanent: failed for good at the first attempt, nothing charged.
  const bad = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: { ticketId: 'T-2' } });
  const failed = await settled(bad.id);
  assert.equal(failed.status, 'Failed');
  assert.equal(failed.failure.code, 'execution_failed');
  assert.match(failed.failure.message, /a ticket needs a subject/);
  assert.equal(failed.charged ?? null, null);

  child.kill('SIGTERM');
  const end = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 30_000))]);
  assert.deepEqual(end, { code: 0, sig: null }, output);
});

test('the task endpoints: claims, the errors of bad input, a lost lease', async () => {
  const w = await workerClient('--products', 'document-summary');
  const any = await workerClient();
  try {
    await assert.rejects(client.tasks.claim({ products: ['document-summary'] }), (e) => e instanceof PermissionError && e.code === 'worker_key_required');
    await assert.rejects(w.tasks.claim({ products: ['image-moderation'] }), (e) => e instanceof PermissionError && e.code === 'product_not_allowed' && e.param === 'products[0]');
    await assert.rejects(w.workflows.list(), (e) => e instanceof PermissionError);
    await assert.rejects(any.tasks.claim({ products: ['no-such-product'] }), (e) => e instanceof InvalidRequestError && e.param === 'products[0]');
    const t0 = Date.now();
    const empty = await w.tasks.claim({ products: ['document-summary'], waitSeconds: 1 });
    assert.deepEqual(empty.data, []);
    assert.ok(Date.now() - t0 >= 900);

    const cus = customer();
    await client.testHelpers.fundCustomer(cus, 100_000);
    const wf = await client.workflows.create({ product: 'document-summary', customerId: cus, payload: { text: 'Revenue is up 12 % on the year.' } });
    const { data } = await w.tasks.claim({ products: ['document-summary'], max: 4, waitSeconds: 10 });
    assert.equal(data.length, 1);
    const [t] = data;
    assert.match(t.id, /^task_/);
    assert.deepEqual([t.object, t.workflowId, t.product, t.customerId, t.attempt, t.status], ['task', wf.id, 'document-summary', cus, 1, 'claimed']);
    assert.deepEqual(t.payload, { text: 'Revenue is up 12 % on the year.' });

    await assert.rejects(w.tasks.heartbeat('task_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J'), NotFoundError);
    await assert.rejects(w.tasks.heartbeat(t.id, { costItems: [{ category: 'model', provider: 'm', units: 1, amount: 1.5 }] }),
      (e) => e instanceof InvalidRequestError && e.param === 'costItems.0.amount');
    await assert.rejects(w.tasks.heartbeat(t.id, { costItems: [{ category: 'model', provider: 'm', units: 1, amount: -1 }] }),
      (e) => e instanceof InvalidRequestError && e.param === 'costItems[0]');
    await assert.rejects(w.tasks.complete(t.id, { result: 'text' }), TypeError);
    await assert.rejects(w.tasks.fail(t.id, { message: 'x'.repeat(1025) }), (e) => e instanceof InvalidRequestError && e.param === 'message');
    const beat = await w.tasks.heartbeat(t.id, { costItems: [{ category: 'model', provider: 'summary-model', units: 8, amount: 1 }] });
    assert.equal(beat.spent.amount, 1);
    assert.equal((await w.tasks.complete(t.id, { result: { summary: 'Revenue is up' } })).status, 'completed');
    assert.equal((await w.tasks.complete(t.id, { result: { summary: 'another' } })).status, 'completed'); // the first result stands
    await assert.rejects(w.tasks.heartbeat(t.id), (e) => e instanceof ConflictError && e.status === 409 && e.code === 'task_ended');
    await assert.rejects(w.tasks.fail(t.id, { message: 'too late' }), (e) => e instanceof ConflictError && e.code === 'task_ended');
    const done = await settled(wf.id);
    assert.deepEqual([done.status, done.result], ['Settled', { summary: 'Revenue is up' }]);

    // A lease that passes: the late completion is 409 lease_lost and changes nothing.
    const wf2 = await client.workflows.create({ product: 'document-summary', customerId: cus, payload: { text: 'Lease test.' } });
    const first = (await w.tasks.claim({ products: ['document-summary'], waitSeconds: 10 })).data;
    assert.deepEqual(first.map((x) => x.workflowId), [wf2.id]);
    await new Promise((r) => setTimeout(r, 3000));
    await assert.rejects(w.tasks.complete(first[0].id, { result: { by: 'late' } }), (e) => e instanceof ConflictError && e.code === 'lease_lost');
    const second = (await w.tasks.claim({ products: ['document-summary'], waitSeconds: 15 })).data;
    assert.deepEqual(second.map((x) => [x.workflowId, x.attempt]), [[wf2.id, 2]]);
    await w.tasks.complete(second[0].id, { result: { by: 'second' } });
    assert.deepEqual((await settled(wf2.id)).result, { by: 'second' });
  } finally {
    w.close();
    any.close();
  }
});

test('a Worker: aborted at its margin floor; past the drain timeout its task is handed back and retried', async () => {
  const w = await workerClient('--products', 'image-moderation');
  try {
    const worker = new Worker(w, { concurrency: 2, heartbeatInterval: 300, wait: 1000, drainTimeout: 1000 });
    const seen = [];
    let release;
    const released = new Promise((r) => (release = r));
    let reachedSlow;
    const slowRunning = new Promise((r) => (reachedSlow = r));
    worker.handle('image-moderation', async (task, ctx) => {
      const n = task.payload.imageUrls.length;
      if (n === 1) {
        const e = await ctx.reportSpend({ category: 'model', provider: 'vision', units: 1, amount: (ctx.budget ?? 0) + 1 }).then(() => null, (x) => x);
        seen.push(['stopped', e instanceof TaskStoppedError && e.reason, ctx.signal.aborted, ctx.signal.reason?.reason]);
        throw e;
      }
      await new Promise((r) => setTimeout(r, 800)); // past a heartbeat or two (the lease is 2 s)
      seen.push(['beat-through', ctx.signal.aborted]);
      reachedSlow();
      await released;
      seen.push(['drained', ctx.signal.aborted, ctx.signal.reason?.reason]);
      return { result: { verdicts: ['allowed', 'allowed'] } };
    });
    const running = worker.run({ handleSignals: false });
    const cus = customer();
    await client.testHelpers.fundCustomer(cus, 100_000);
    const capped = await client.workflows.create({ product: 'image-moderation', customerId: cus, marginFloor: 0.1, payload: { imageUrls: ['https://example.com/a.jpg'] } });
    const failed = await settled(capped.id);
    assert.deepEqual([failed.status, failed.failure?.code, failed.charged ?? null], ['Failed', 'margin_floor_exceeded', null]);
    assert.deepEqual(seen, [['stopped', 'margin_floor_exceeded', true, 'margin_floor_exceeded']]);

    const slow = await client.workflows.create({ product: 'image-moderation', customerId: cus, payload: { imageUrls: ['https://example.com/a.jpg', 'https://example.com/b.jpg'] } });
    await slowRunning;
    worker.stop();
    await running; // the claim is aborted at once; the drain timeout (1 s) passes
    release();
    const again = new Worker(w, { wait: 1000 });
    const attempts = [];
    again.handle('image-moderation', async (task) => {
      attempts.push(task.attempt);
      return { result: { verdicts: ['allowed', 'allowed'] } };
    });
    const running2 = again.run({ handleSignals: false });
    const got = await settled(slow.id);
    again.stop();
    await running2;
    assert.equal(got.status, 'Settled', JSON.stringify(got));
    assert.deepEqual(attempts, [2]);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(seen.slice(1), [['beat-through', false], ['drained', true, 'worker_stopped']]);
  } finally {
    w.close();
  }
});
