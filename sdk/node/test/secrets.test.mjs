// The API key never appears in an error (message, stack, inspect, JSON) nor
// in the client's inspect/JSON output, for every kind of failure, even when
// a server echoes it back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Settleflow, SettleflowError } from '../src/index.js';
import { startServer } from '../test-support/server.mjs';
import { startProxy } from '../test-support/proxy.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

function renderings(x) {
  const out = [
    String(x),
    inspect(x),
    inspect(x, { depth: Infinity, showHidden: true }),
    inspect(x, { depth: Infinity, showHidden: true, customInspect: false, getters: true }),
    JSON.stringify(x) ?? '',
  ];
  if (x instanceof Error) out.push(x.message, x.stack ?? '', inspect(x.cause, { depth: Infinity, showHidden: true }));
  return out;
}

function assertNoKey(x, key, what) {
  for (const r of renderings(x)) {
    assert.ok(!r.includes(key), `${what}: the key appears in\n${r}`);
    // Nor a long piece of it (the display form keeps the last 4 characters only).
    assert.ok(!r.includes(key.slice(8, 24)), `${what}: part of the key appears in\n${r}`);
  }
}

test('the client: inspect, JSON, keys and resources never show the key', () => {
  const client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  assertNoKey(client, server.apiKey, 'client');
  for (const r of [client.workflows, client.quotes, client.products, client.events, client.workflows.listAutoPaging({})]) {
    assertNoKey(r, server.apiKey, inspect(r));
  }
  assert.ok(inspect(client).includes('sk_test_…' + server.apiKey.slice(-4)), inspect(client));
  assert.ok(inspect(client).includes(server.baseUrl));
  assert.ok(!Object.values(client).some((v) => typeof v === 'string' && v.includes(server.apiKey)));
  assert.ok(!Object.getOwnPropertyNames(client).some((k) => /key/i.test(k)), Object.getOwnPropertyNames(client).join());
  client.close();
});

test('errors of every kind never hold the key', async () => {
  const errors = [];
  const grab = (p, what) => p.then(() => assert.fail(what + ': no error'), (e) => errors.push([what, e]));
  const client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca, maxRetries: 0 });
  await grab(client.workflows.create({ product: 'ticket-triage', customerId: 'cus_1' }), '400');
  await grab(client.workflows.fetch('wf_missing'), '404');
  await grab(client.workflows.list({ limit: 1000 }), '400 limit');
  const key = 'k-' + randomUUID();
  const payload = { ticketId: 'T-1', subject: 's', attachments: 0 };
  await client.workflows.create({ product: 'ticket-triage', customerId: 'cus_1', payload }, { idempotencyKey: key });
  await grab(client.workflows.create({ product: 'ticket-triage', customerId: 'cus_2', payload }, { idempotencyKey: key }), '409');

  // A well-formed key the server does not know: 401, and it is the key that must not leak.
  const unknownKey = 'sk_test_' + randomUUID().replaceAll('-', '') + 'ZZZZ';
  const unknown = new Settleflow({ apiKey: unknownKey, baseUrl: server.baseUrl, ca: server.ca });
  const e401 = await unknown.workflows.list().then(() => assert.fail('no error'), (e) => e);
  assert.equal(e401.status, 401);
  assertNoKey(e401, unknownKey, '401');
  unknown.close();

  const tiny = new Settleflow({ apiKey: server.tinyKey, baseUrl: server.baseUrl, ca: server.ca, maxRetries: 0 });
  let e429;
  for (let i = 0; i < 3 && !e429; i++) await tiny.products.list().catch((e) => (e429 = e));
  assert.equal(e429?.status, 429);
  assertNoKey(e429, server.tinyKey, '429');
  tiny.close();

  // No response at all: refused, TLS refused, timed out.
  await grab(new Settleflow({ apiKey: server.apiKey, baseUrl: 'https://127.0.0.1:1', maxRetries: 0 }).products.list(), 'refused');
  const hang = await startProxy(server, () => 'hang');
  await grab(new Settleflow({ apiKey: server.apiKey, baseUrl: hang.baseUrl, ca: server.ca, timeout: 100, maxRetries: 0 }).products.list(), 'timeout');
  await grab(new Settleflow({ apiKey: server.apiKey, baseUrl: hang.baseUrl, maxRetries: 0 }).products.list(), 'tls');
  await hang.close();

  // A server (or a proxy) that echoes the Authorization header into its error and its headers.
  const echo = await startProxy(server, (r) => ({
    status: 400,
    headers: { 'X-Echo': r.headers.authorization },
    body: {
      error: { type: 'invalid_request_error', code: 'echo', message: 'bad ' + r.headers.authorization, param: r.headers.authorization, requestId: 'req_echo' },
    },
  }));
  await grab(new Settleflow({ apiKey: server.apiKey, baseUrl: echo.baseUrl, ca: server.ca }).products.list(), 'echo');
  const echo500 = await startProxy(server, (r) => ({ status: 500, body: 'oops ' + r.headers.authorization }));
  await grab(new Settleflow({ apiKey: server.apiKey, baseUrl: echo500.baseUrl, ca: server.ca, maxRetries: 0 }).products.list(), 'echo 500');
  await echo.close();
  await echo500.close();

  const kinds = errors.map(([w, e]) => `${w}:${e.constructor.name}`);
  assert.deepEqual(kinds, [
    '400:InvalidRequestError',
    '404:NotFoundError',
    '400 limit:InvalidRequestError',
    '409:IdempotencyError',
    'refused:ConnectionError',
    'timeout:TimeoutError',
    'tls:ConnectionError',
    'echo:InvalidRequestError',
    'echo 500:APIError',
  ]);
  for (const [what, e] of errors) {
    assert.ok(e instanceof SettleflowError, what);
    assertNoKey(e, server.apiKey, what);
  }
  const echoed = errors.find(([w]) => w === 'echo')[1];
  assert.equal(echoed.message, 'bad Bearer [redacted]');
  assert.equal(echoed.param, 'Bearer [redacted]');
  assert.equal(echoed.headers['x-echo'], 'Bearer [redacted]');
  client.close();
});
