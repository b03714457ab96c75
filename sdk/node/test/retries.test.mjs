// Retries, timeouts and idempotency through a TLS proxy in front of the real
// server: a 429 answered by the proxy then success, a create whose connection
// is cut after the server committed it, 5xx, timeouts, refused connections.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { Settleflow, RateLimitError, APIError, ConnectionError, TimeoutError } from '../src/index.js';
import { startServer } from '../test-support/server.mjs';
import { startProxy } from '../test-support/proxy.mjs';

let server;
let direct;
const cleanups = [];
before(async () => {
  server = await startServer();
  direct = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
});
after(async () => {
  for (const c of cleanups.reverse()) await c();
  direct?.close();
  await server?.stop();
});

const ticket = () => ({ ticketId: 'T-42', subject: 'Refund for invoice 7', attachments: 1 });
const customer = () => 'cus_' + randomUUID().replaceAll('-', '');
const rateLimited = (headers) => ({
  status: 429,
  headers,
  body: { error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'slow down', requestId: 'req_proxy' } },
});
const unavailable = { status: 503, body: { error: { type: 'api_error', code: 'service_unavailable', message: 'shutting down', requestId: 'req_proxy' } } };

async function viaProxy(decide, clientOptions = {}) {
  const proxy = await startProxy(server, decide);
  const client = new Settleflow({ apiKey: server.apiKey, baseUrl: proxy.baseUrl, ca: server.ca, ...clientOptions });
  cleanups.push(async () => {
    client.close();
    await proxy.close();
  });
  return { proxy, client };
}

describe('retries', () => {
  test('a 429 with Retry-After: 1 is retried after a second with the same Idempotency-Key, then succeeds', async () => {
    const { proxy, client } = await viaProxy((r, n) => (n === 1 ? rateLimited({ 'Retry-After': '1' }) : 'forward'));
    const cus = customer();
    const t0 = Date.now();
    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() });
    const elapsed = Date.now() - t0;
    assert.equal(wf.status, 'Pending');
    assert.equal(proxy.requests.length, 2);
    assert.ok(elapsed >= 1000, `waited ${elapsed} ms`);
    const [a, b] = proxy.requests.map((r) => r.headers['idempotency-key']);
    assert.match(a, /^[0-9a-f-]{36}$/);
    assert.equal(b, a);
    assert.equal(proxy.requests[1].body, proxy.requests[0].body);
    assert.equal((await direct.workflows.list({ customerId: cus })).data.length, 1);
  });

  test('a 429 without Retry-After waits until X-RateLimit-Reset', async () => {
    let reset;
    const { proxy, client } = await viaProxy((r, n) => {
      if (n > 1) return 'forward';
      reset = Math.floor(Date.now() / 1000) + 2;
      return rateLimited({ 'X-RateLimit-Reset': String(reset), 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': '0' });
    });
    const page = await client.products.list();
    assert.ok(page.data.length > 0);
    assert.equal(proxy.requests.length, 2);
    assert.ok(Date.now() >= reset * 1000 - 5, 'retried at the reset, not before');
  });

  test('a 429 asking for more than 60 s is not retried; RateLimitError carries retryAfter', async () => {
    const { proxy, client } = await viaProxy(() => rateLimited({ 'Retry-After': '120' }));
    const e = await client.products.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof RateLimitError);
    assert.equal(e.retryAfter, 120);
    assert.equal(e.headers['retry-after'], '120');
    assert.equal(proxy.requests.length, 1);
  });

  test('maxRetries bounds attempts: 503s are tried 1 + maxRetries times; 0 disables', async () => {
    const { proxy, client } = await viaProxy(() => unavailable);
    const e = await client.products.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof APIError);
    assert.equal(e.status, 503);
    assert.equal(e.code, 'service_unavailable');
    assert.equal(proxy.requests.length, 3, 'default maxRetries is 2');
    proxy.requests.length = 0;
    await assert.rejects(client.products.list({ maxRetries: 0 }), { status: 503 });
    assert.equal(proxy.requests.length, 1);
    proxy.requests.length = 0;
    const none = new Settleflow({ apiKey: server.apiKey, baseUrl: proxy.baseUrl, ca: server.ca, maxRetries: 0 });
    await assert.rejects(none.products.list(), { status: 503 });
    assert.equal(proxy.requests.length, 1);
    none.close();
  });

  test('5xx then success; 501 and 4xx are not retried', async () => {
    const { proxy, client } = await viaProxy((r, n) => (n <= 2 ? unavailable : 'forward'));
    const p = await client.products.fetch('ticket-triage');
    assert.equal(p.name, 'ticket-triage');
    assert.equal(proxy.requests.length, 3);

    const notImpl = await viaProxy(() => ({ status: 501, body: 'not implemented' }));
    const e = await notImpl.client.products.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof APIError);
    assert.equal(e.status, 501);
    assert.match(e.message, /501/);
    assert.equal(notImpl.proxy.requests.length, 1);

    const bad = await viaProxy(() => 'forward');
    await assert.rejects(bad.client.workflows.create({ product: 'ticket-triage', customerId: customer() }), { status: 400 });
    assert.equal(bad.proxy.requests.length, 1);
  });

  test('a create whose connection is cut after the server committed it is retried to exactly one workflow', async () => {
    const { proxy, client } = await viaProxy((r, n) => (n === 1 ? 'drop-after-forward' : 'forward'));
    const cus = customer();
    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() });
    assert.equal(proxy.requests.length, 2);
    assert.equal(proxy.requests[0].upstreamStatus, 201, 'the server committed the first attempt');
    const first = JSON.parse(proxy.requests[0].upstreamBody);
    assert.equal(wf.id, first.id, 'the retry returned the workflow the first attempt made');
    assert.equal(wf.lastResponse.idempotentReplayed, true);
    assert.equal(proxy.requests[1].headers['idempotency-key'], proxy.requests[0].headers['idempotency-key']);
    const listed = await direct.workflows.list({ customerId: cus });
    assert.deepEqual(listed.data.map((w) => w.id), [wf.id]);
  });

  test('a cut connection with maxRetries 0 is a ConnectionError (and the create may have happened)', async () => {
    const { proxy, client } = await viaProxy(() => 'drop-after-forward', { maxRetries: 0 });
    const e = await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() }).then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof ConnectionError, String(e));
    assert.ok(!(e instanceof TimeoutError));
    assert.equal(proxy.requests.length, 1);
  });

  test('cancel (a POST without body) also sends an Idempotency-Key, reused on retry; GETs send none', async () => {
    const { proxy, client } = await viaProxy((r, n) => (n === 1 ? unavailable : 'forward'));
    await client.workflows.cancel('wf_01M835T2ZC03XQ0RBX68RJJRB0').catch(() => {});
    assert.equal(proxy.requests.length, 2);
    assert.ok(proxy.requests[0].headers['idempotency-key']);
    assert.equal(proxy.requests[1].headers['idempotency-key'], proxy.requests[0].headers['idempotency-key']);
    proxy.requests.length = 0;
    await client.products.list();
    assert.equal(proxy.requests[0].headers['idempotency-key'], undefined);
  });

  test('every request names the library: User-Agent, Authorization, Accept', async () => {
    const { proxy, client } = await viaProxy(() => 'forward');
    await client.quotes.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() });
    const h = proxy.requests[0].headers;
    assert.equal(h['user-agent'], `settleflow-node/${Settleflow.VERSION} node/${process.version}`);
    assert.equal(h.authorization, 'Bearer ' + server.apiKey);
    assert.equal(h['content-type'], 'application/json');
    assert.equal(h.accept, 'application/json');
  });
});

describe('timeouts and connection failures', () => {
  test('a request that gets no answer within timeout is a TimeoutError, retried', async () => {
    const { proxy, client } = await viaProxy((r, n) => (n === 1 ? 'hang' : 'forward'), { timeout: 300 });
    const t0 = Date.now();
    const page = await client.products.list();
    assert.ok(page.data.length > 0);
    assert.equal(proxy.requests.length, 2);
    assert.ok(Date.now() - t0 >= 300);

    const t1 = Date.now();
    const hang = await viaProxy(() => 'hang', { timeout: 200, maxRetries: 1 });
    const te = await hang.client.products.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(te instanceof TimeoutError && te instanceof ConnectionError, String(te));
    assert.match(te.message, /timed out after 200 ms/);
    assert.equal(hang.proxy.requests.length, 2);
    assert.ok(Date.now() - t1 >= 400);
  });

  test('a refused connection is a ConnectionError', async () => {
    const port = await new Promise((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = s.address().port;
        s.close(() => resolve(p));
      });
    });
    const client = new Settleflow({ apiKey: server.apiKey, baseUrl: `https://127.0.0.1:${port}`, ca: server.ca, maxRetries: 1 });
    const e = await client.workflows.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof ConnectionError, String(e));
    assert.equal(e.cause.code, 'ECONNREFUSED');
    assert.match(e.message, /ECONNREFUSED/);
  });

  test('connections cut before any answer are tried 1 + maxRetries times', async () => {
    const { proxy, client } = await viaProxy(() => 'destroy');
    const e = await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() }).then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof ConnectionError, String(e));
    assert.equal(proxy.requests.length, 3);
    assert.equal(new Set(proxy.requests.map((r) => r.headers['idempotency-key'])).size, 1);
  });

  test('without the ca the self-signed certificate is refused, not retried, with a hint', async () => {
    const { proxy } = await viaProxy(() => 'forward');
    const client = new Settleflow({ apiKey: server.apiKey, baseUrl: proxy.baseUrl, maxRetries: 2 });
    const e = await client.products.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof ConnectionError, String(e));
    assert.match(e.message, /pass the server's certificate as the ca option/);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(proxy.stats.connections, 1, 'one attempt');
    assert.equal(proxy.requests.length, 0);
    client.close();
  });

  test('an aborted signal stops the request and its retries', async () => {
    const { proxy, client } = await viaProxy(() => ({ ...unavailable, headers: { 'Retry-After': '5' } }));
    const ac = new AbortController();
    const t0 = Date.now();
    const p = client.products.list({ signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await assert.rejects(p, { name: 'AbortError' });
    assert.ok(Date.now() - t0 < 2000, 'the wait for Retry-After was cut short');
    assert.equal(proxy.requests.length, 1);
    await assert.rejects(client.products.list({ signal: AbortSignal.abort() }), { name: 'AbortError' });
    assert.equal(proxy.requests.length, 1);
  });

  test('a kept-alive connection the server closed is retried on a new one, even with maxRetries 0', async () => {
    const seen = new Map();
    const { proxy, client } = await viaProxy((r) => {
      const n = (seen.get(r.socket) ?? 0) + 1;
      seen.set(r.socket, n);
      return n === 2 ? 'destroy' : 'forward';
    }, { maxRetries: 0 });
    await client.products.list();
    await client.products.list();
    assert.equal(proxy.requests.length, 3);
    assert.equal(seen.size, 2, 'the retry went over a new connection');
  });
});
