// A worker given several base URLs (docs/workers.md, "Several instances and
// retries"), against two HTTPS proxies on loopback in front of a real
// reference server that leaves image-moderation to workers (with a 2 s
// lease), each proxy counting what it was sent:
//   - a first URL that refuses connections: every call goes to the next;
//   - a completion answered 502 (after the server recorded it) is retried, and
//     the server counts it once: the workflow settles with one completion's cost;
//   - a completion answered 409 lease_lost is final: sent once;
//   - a claim whose connection is cut after it was sent is never sent again,
//     to the same URL or the other, even on a kept-alive connection: the
//     worker claims anew later and gets the attempt the server ran again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { ConnectionError, Settleflow, Worker } from '../src/index.js';
import { startServer } from '../test-support/server.mjs';
import { startProxy } from '../test-support/proxy.mjs';

const PRODUCT = 'image-moderation';
let server;
let api;
let workerKey;
let proxies = [];
// hook, when set, decides what the proxies do with a request; null forwards.
let hook = null;
const clients = [];

before(async () => {
  server = await startServer({ args: ['-remote', PRODUCT, '-task-lease', '2s'] });
  api = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  workerKey = await server.addKey(['--name', 'w', '--kind', 'worker', '--products', PRODUCT]);
  const decide = (entry) => (hook && hook(entry)) || 'forward';
  proxies = [await startProxy(server, decide), await startProxy(server, decide)];
});
after(async () => {
  for (const c of clients) c.close();
  api?.close();
  for (const p of proxies) await p.close();
  await server?.stop();
});

const urls = () => proxies.map((p) => p.baseUrl);
const seen = (path) => proxies.flatMap((p) => p.requests).filter((r) => r.url === path);
const workerClient = (...baseUrl) => {
  const c = new Settleflow({ apiKey: workerKey, baseUrl, ca: server.ca });
  clients.push(c);
  return c;
};

async function create() {
  const cus = 'cus_' + randomUUID().replaceAll('-', '');
  await api.testHelpers.fundCustomer(cus, 100_000);
  const wf = await api.workflows.create({ product: PRODUCT, customerId: cus, payload: { imageUrls: ['https://example.com/cat.jpg'] } });
  return wf.id;
}

async function settled(id, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const w = await api.workflows.fetch(id);
    if (['Settled', 'Failed', 'Canceled'].includes(w.status)) {
      assert.deepEqual([w.status, w.cost?.amount], ['Settled', 3], 'want Settled, costing the 3 of one completion');
      return w;
    }
    if (Date.now() > end) throw new Error(`workflow ${id} still ${w.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// attempts records, per workflow, the tasks the workers' handlers ran.
const attempts = new Map();

// startWorker runs a worker; the returned stop() resolves once it drained
// (its tasks' ends reported). The first attempt of the workflow slow sleeps
// past its lease.
function startWorker(c, { heartbeatInterval = 500, slow = null } = {}) {
  const w = new Worker(c, { concurrency: 4, heartbeatInterval, wait: 5000 });
  w.handle(PRODUCT, async (task) => {
    if (!attempts.has(task.workflowId)) attempts.set(task.workflowId, []);
    attempts.get(task.workflowId).push(task);
    if (task.workflowId === slow && task.attempt === 1) {
      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(task.leaseExpiresAt) - Date.now()) + 2000));
    }
    return { result: { verdicts: ['allowed'] }, costItems: [{ category: 'model', provider: 'vision-model', units: 1, amount: 3 }] };
  });
  const running = w.run({ handleSignals: false });
  return async () => {
    w.stop();
    await running;
  };
}

function closedPort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

test('a first URL that refuses connections: every call goes to the next', async () => {
  const c = workerClient(`https://127.0.0.1:${await closedPort()}`, proxies[0].baseUrl);
  const before = seen('/v1/tasks/claim').length;
  for (let k = 0; k < 4; k++) await c.tasks.claim({ products: [PRODUCT] });
  assert.equal(seen('/v1/tasks/claim').length - before, 4);
  const stop = startWorker(c);
  try {
    const id = await create();
    await settled(id);
    const tasks = attempts.get(id);
    assert.deepEqual(tasks.map((t) => t.attempt), [1]);
    assert.equal(seen(`/v1/tasks/${tasks[0].id}/complete`).length, 1);
  } finally {
    await stop();
  }
});

test('a completion answered 502 is retried and counted once', async () => {
  let once = true;
  hook = (entry) => {
    if (!entry.url.endsWith('/complete') || !once) return null;
    once = false;
    // The server records it; the worker hears 502.
    return { afterForward: true, status: 502, body: { error: { type: 'api_error', code: 'bad_gateway', message: 'from the test proxy' } } };
  };
  const stop = startWorker(workerClient(...urls()));
  try {
    const id = await create();
    await settled(id);
    const tasks = attempts.get(id);
    assert.equal(tasks.length, 1);
    // The workflow can settle on the first completion before the
    // worker's retry of it (after the 502 and its backoff) is answered.
    const path = `/v1/tasks/${tasks[0].id}/complete`;
    for (let i = 0; i < 200 && !(seen(path).length >= 2 && seen(path).every((r) => r.upstreamStatus !== undefined)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const got = seen(path);
    assert.deepEqual(got.map((r) => r.upstreamStatus), [200, 200], 'want 2 completions, each answered 200 by the server');
  } finally {
    hook = null;
    await stop();
  }
});

test('a completion answered 409 lease_lost is final', async () => {
  const id = await create();
  const stop = startWorker(workerClient(...urls()), { heartbeatInterval: 3_600_000, slow: id });
  try {
    await settled(id);
  } finally {
    await stop(); // the slow attempt's handler has returned and its end was reported
  }
  const tasks = attempts.get(id);
  assert.deepEqual(tasks.map((t) => t.attempt), [1, 2]);
  const lost = seen(`/v1/tasks/${tasks[0].id}/complete`);
  assert.deepEqual(lost.map((r) => r.upstreamStatus), [409], 'the late completion: once, answered 409');
  assert.match(lost[0].upstreamBody, /"lease_lost"/);
  assert.equal(seen(`/v1/tasks/${tasks[1].id}/complete`).length, 1);
});

test('a claim cut after it was sent is not sent again', async () => {
  const c = workerClient(...urls());
  // One claim to each URL, so the next finds a kept-alive connection.
  await c.tasks.claim({ products: [PRODUCT] });
  await c.tasks.claim({ products: [PRODUCT] });
  const claims = [];
  hook = (entry) => {
    if (entry.url !== '/v1/tasks/claim') return null;
    claims.push(entry);
    // The server leases the task; the worker never hears of it.
    return claims.length === 1 ? 'drop-after-forward' : null;
  };
  let stop;
  try {
    const id = await create();
    await assert.rejects(c.tasks.claim({ products: [PRODUCT], waitSeconds: 10 }), (e) => e instanceof ConnectionError);
    assert.equal(claims.length, 1, 'the claim was sent again');
    assert.equal(claims[0].upstreamStatus, 200);
    assert.ok(claims[0].upstreamBody.includes(id), "the claim that was cut leased the workflow's task");
    hook = null;
    // The worker claims anew and gets the attempt the server runs again once the lost one's lease passed.
    stop = startWorker(c);
    await settled(id);
    assert.deepEqual(attempts.get(id).map((t) => t.attempt), [2]);
  } finally {
    hook = null;
    await stop?.();
  }
});
