// Customers, refunds and the test faucet against a scripted loopback server:
// the requests each method sends, the 402 and refund errors it maps, paging,
// argument checks. test/money-api.test.mjs runs the same against the real server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  Settleflow,
  OPERATIONS,
  APIError,
  SettleflowError,
  PaymentError,
  InsufficientFundsError,
  InvalidRequestError,
  ConflictError,
  NotFoundError,
} from '../src/index.js';

const key = 'sk_test_' + 'M'.repeat(36) + 'a1b2';
let srv;
let client;
const seen = [];
let answer = () => ({ status: 200, body: {} });

before(async () => {
  srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const r = { method: req.method, url: req.url, headers: req.headers, body: raw ? JSON.parse(raw) : undefined };
      seen.push(r);
      const { status, body, headers } = answer(r);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req_fake', ...headers }).end(JSON.stringify(body));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  client = new Settleflow({ apiKey: key, baseUrl: `http://127.0.0.1:${srv.address().port}`, maxRetries: 0 });
});
after(async () => {
  client?.close();
  await new Promise((r) => srv.close(r));
});

function reset(fn) {
  seen.length = 0;
  answer = fn;
}

const CUSTOMER = {
  object: 'customer',
  id: 'cus_123',
  livemode: false,
  balance: { onChain: 100000, reserved: 358, pendingWithdrawal: 0, available: 99642, currency: 'usd' },
  deposit: { chainId: 84532, network: 'base-sepolia', contract: '0x' + 'c'.repeat(40), token: '0x' + 't'.repeat(40), customerRef: '0x' + 'a'.repeat(64) },
};
const refund = (n, extra = {}) => ({
  object: 'refund',
  id: `re_${String(n).padStart(26, '0')}`,
  livemode: false,
  workflowId: 'wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J',
  amount: 100,
  currency: 'usd',
  reason: '',
  status: 'Pending',
  settlement: null,
  failure: null,
  createdAt: '2026-11-24T00:00:00Z',
  updatedAt: '2026-11-24T00:00:00Z',
  ...extra,
});
const apiError = (status, error) => ({ status, body: { error: { requestId: 'req_fake', ...error } } });
const rejection = (p) => p.then(() => assert.fail('no error'), (e) => e);

test('OPERATIONS names the money methods, and each is a function of the client', () => {
  for (const [op, name] of Object.entries({
    fetchCustomer: 'customers.fetch',
    createOwnerGrant: 'customers.createOwnerGrant',
    setOwner: 'customers.setOwner',
    createRefund: 'refunds.create',
    fetchRefund: 'refunds.fetch',
    listRefunds: 'refunds.list',
    fundTestCustomer: 'testHelpers.fundCustomer',
  })) {
    assert.equal(OPERATIONS[op], name);
    const [res, method] = name.split('.');
    assert.equal(typeof client[res][method], 'function', name);
  }
});

test('customers.fetch: GET /v1/customers/{id}, the id path-escaped', async () => {
  reset(() => ({ status: 200, body: CUSTOMER }));
  const c = await client.customers.fetch('cus_123');
  assert.deepEqual(c, CUSTOMER);
  assert.equal(c.lastResponse.requestId, 'req_fake');
  await client.customers.fetch('cus_a/b');
  assert.deepEqual(seen.map((r) => [r.method, r.url, r.body]), [
    ['GET', '/v1/customers/cus_123', undefined],
    ['GET', '/v1/customers/cus_a%2Fb', undefined],
  ]);
  assert.equal(seen[0].headers['idempotency-key'], undefined);
  await assert.rejects(client.customers.fetch(''), TypeError);
  await assert.rejects(client.customers.fetch(42), /customerId must be a non-empty string/);
});

test('testHelpers.fundCustomer: POST {"amount"}; amount checked', async () => {
  reset(() => ({ status: 200, body: CUSTOMER }));
  const c = await client.testHelpers.fundCustomer('cus_123', 50_000);
  assert.equal(c.balance.available, 99642);
  await client.testHelpers.fundCustomer('cus_123', 1, { timeout: 60_000 });
  assert.deepEqual(seen.map((r) => [r.method, r.url, r.body]), [
    ['POST', '/v1/test_helpers/customers/cus_123/fund', { amount: 50_000 }],
    ['POST', '/v1/test_helpers/customers/cus_123/fund', { amount: 1 }],
  ]);
  for (const bad of ['500', 1.5, NaN, undefined, 2 ** 53]) {
    await assert.rejects(client.testHelpers.fundCustomer('cus_123', bad), /amount must be an integer number of minor units/, String(bad));
  }
  await assert.rejects(client.testHelpers.fundCustomer(undefined, 5), /customerId/);
  assert.equal(seen.length, 2, 'nothing sent for a bad argument');
});

test('refunds.create: POST /v1/workflows/{id}/refunds with the params as body; {} without; the key is an option', async () => {
  reset((r) => ({ status: 201, body: refund(1, r.body) }));
  const partial = await client.refunds.create('wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J', { amount: 100, reason: 'duplicate' }, { idempotencyKey: 'refund-1' });
  assert.equal(partial.object, 'refund');
  assert.equal(partial.amount, 100);
  assert.equal(partial.reason, 'duplicate');
  assert.equal(partial.lastResponse.status, 201);
  await client.refunds.create('wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J');
  assert.deepEqual(seen.map((r) => [r.method, r.url, r.body]), [
    ['POST', '/v1/workflows/wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J/refunds', { amount: 100, reason: 'duplicate' }],
    ['POST', '/v1/workflows/wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J/refunds', {}],
  ]);
  assert.equal(seen[0].headers['idempotency-key'], 'refund-1');
  assert.match(seen[1].headers['idempotency-key'], /^[0-9a-f-]{36}$/);
  await assert.rejects(client.refunds.create('wf_x', { idempotencyKey: 'k' }), /idempotencyKey is a request option/);
  await assert.rejects(client.refunds.create('wf_x', 100), /params must be an object/);
  await assert.rejects(client.refunds.create('', {}), /workflowId/);
  await assert.rejects(client.refunds.create('wf_x', {}, { idempotencyKey: 'a\nb' }), /idempotencyKey/);
  assert.equal(seen.length, 2);
});

test('testHelpers.fundCustomer is not retried (every call deposits) unless maxRetries says so', async () => {
  const retrying = new Settleflow({ apiKey: key, baseUrl: client.baseUrl, maxRetries: 2 });
  try {
    reset(() => apiError(500, { type: 'api_error', code: 'internal_error', message: 'x' }));
    const e = await rejection(retrying.testHelpers.fundCustomer('cus_123', 500));
    assert.equal(e.status, 500);
    assert.equal(seen.length, 1, 'one deposit asked for, not three');
    let n = 0;
    reset(() => (++n === 1 ? apiError(503, { type: 'api_error', code: 'service_unavailable', message: 'x' }) : { status: 200, body: CUSTOMER }));
    await retrying.testHelpers.fundCustomer('cus_123', 500, { maxRetries: 1 });
    assert.equal(seen.length, 2);
  } finally {
    retrying.close();
  }
});

test('refunds.create retries a 503 with the same Idempotency-Key and body', async () => {
  let n = 0;
  reset(() => (++n === 1 ? apiError(503, { type: 'api_error', code: 'service_unavailable', message: 'x' }) : { status: 201, body: refund(1) }));
  const retrying = new Settleflow({ apiKey: key, baseUrl: client.baseUrl, maxRetries: 1 });
  try {
    await retrying.refunds.create('wf_x', { amount: 100 });
  } finally {
    retrying.close();
  }
  assert.equal(seen.length, 2);
  assert.equal(seen[1].headers['idempotency-key'], seen[0].headers['idempotency-key']);
  assert.deepEqual(seen[1].body, seen[0].body);
});

test('refunds.fetch and refunds.list: the paths and the camelCase query', async () => {
  reset((r) => (r.url.startsWith('/v1/refunds/') ? { status: 200, body: refund(3) } : { status: 200, body: { object: 'list', url: '/v1/refunds', data: [refund(2)], hasMore: false } }));
  assert.equal((await client.refunds.fetch(refund(3).id)).id, refund(3).id);
  const page = await client.refunds.list({ workflowId: 'wf_1', status: 'Succeeded', limit: 5, startingAfter: 're_9' });
  assert.equal(page.url, '/v1/refunds');
  await client.refunds.list();
  assert.deepEqual(seen.map((r) => [r.method, r.url]), [
    ['GET', '/v1/refunds/' + refund(3).id],
    ['GET', '/v1/refunds?workflowId=wf_1&status=Succeeded&limit=5&startingAfter=re_9'],
    ['GET', '/v1/refunds'],
  ]);
  await assert.rejects(client.refunds.fetch(undefined), TypeError);
  await assert.rejects(client.refunds.list('Succeeded'), TypeError);
  assert.throws(() => client.refunds.listAutoPaging(3), TypeError);
});

test('refunds.listAutoPaging follows startingAfter (and endingBefore backwards)', async () => {
  // Five refunds, newest first: re_5 … re_1.
  const all = [5, 4, 3, 2, 1].map((n) => refund(n));
  reset((r) => {
    const q = new URL(r.url, 'http://x').searchParams;
    const limit = Number(q.get('limit'));
    let items = all;
    if (q.get('startingAfter')) items = all.slice(all.findIndex((x) => x.id === q.get('startingAfter')) + 1);
    if (q.get('endingBefore')) {
      const i = all.findIndex((x) => x.id === q.get('endingBefore'));
      items = all.slice(Math.max(0, i - limit), i);
      return { status: 200, body: { object: 'list', url: '/v1/refunds', data: items, hasMore: i - limit > 0 } };
    }
    return { status: 200, body: { object: 'list', url: '/v1/refunds', data: items.slice(0, limit), hasMore: items.length > limit } };
  });
  const ids = [];
  for await (const r of client.refunds.listAutoPaging({ workflowId: 'wf_1', limit: 2 })) ids.push(r.id);
  assert.deepEqual(ids, all.map((r) => r.id));
  assert.equal(seen.length, 3);
  assert.ok(seen.every((r) => r.url.includes('workflowId=wf_1')));
  seen.length = 0;
  const newer = await client.refunds.listAutoPaging({ limit: 2, endingBefore: all[4].id }).toArray({ limit: 10 });
  assert.deepEqual(newer.map((r) => r.id), [all[3].id, all[2].id, all[1].id, all[0].id]);
});

test('402 insufficient_funds is an InsufficientFundsError with the amounts; another 402 a PaymentError', async () => {
  reset(() =>
    apiError(402, {
      type: 'payment_error',
      code: 'insufficient_funds',
      message: 'customer cus_insufficient_funds has 0 usd available, the quote is 358',
      available: 0,
      amount: 358,
      currency: 'usd',
      customerId: 'cus_insufficient_funds',
    }),
  );
  const e = await client.workflows
    .create({ product: 'ticket-triage', customerId: 'cus_insufficient_funds', payload: { ticketId: 'T-1' } })
    .then(() => assert.fail('no error'), (x) => x);
  assert.ok(e instanceof InsufficientFundsError && e instanceof PaymentError && e instanceof APIError && e instanceof SettleflowError);
  assert.equal(e.name, 'InsufficientFundsError');
  assert.equal(e.status, 402);
  assert.equal(e.type, 'payment_error');
  assert.equal(e.code, 'insufficient_funds');
  assert.equal(e.available, 0);
  assert.equal(e.amount, 358);
  assert.equal(e.currency, 'usd');
  assert.equal(e.customerId, 'cus_insufficient_funds');
  assert.equal(e.requestId, 'req_fake');
  assert.match(e.message, /has 0 usd available/);
  assert.equal(seen.length, 1, 'a 402 is not retried');

  // Amounts of the wrong type are left undefined rather than trusted.
  reset(() => apiError(402, { type: 'payment_error', code: 'insufficient_funds', message: 'm', available: '0', amount: 1.5 }));
  const loose = await client.workflows.create({ product: 'p', customerId: 'cus_1', payload: {} }).catch((x) => x);
  assert.ok(loose instanceof InsufficientFundsError);
  assert.equal(loose.available, undefined);
  assert.equal(loose.amount, undefined);
  assert.equal(loose.customerId, undefined);

  reset(() => apiError(402, { type: 'payment_error', code: 'card_declined', message: 'declined' }));
  const other = await client.workflows.create({ product: 'p', customerId: 'cus_1', payload: {} }).catch((x) => x);
  assert.ok(other instanceof PaymentError && !(other instanceof InsufficientFundsError));
  assert.equal(other.code, 'card_declined');
  assert.equal(other.available, undefined);
});

test('the refund errors: 409 workflow_not_settled and refunds_not_supported, 400 amount_exceeds_refundable, 404', async () => {
  for (const [status, error, Cls] of [
    [409, { type: 'invalid_request_error', code: 'workflow_not_settled', message: 'workflow wf_x is Running' }, ConflictError],
    [409, { type: 'invalid_request_error', code: 'refunds_not_supported', message: 'no refunds here' }, ConflictError],
    [400, { type: 'invalid_request_error', code: 'amount_exceeds_refundable', param: 'amount', message: 'only 258 is left to refund' }, InvalidRequestError],
    [404, { type: 'invalid_request_error', code: 'resource_missing', message: 'no such workflow' }, NotFoundError],
  ]) {
    reset(() => apiError(status, error));
    const e = await client.refunds.create('wf_x', { amount: 500 }).then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof Cls, `${error.code}: ${e}`);
    assert.equal(e.status, status);
    assert.equal(e.code, error.code);
    assert.equal(e.param, error.param);
    assert.equal(seen.length, 1);
  }
});

test('InsufficientFundsError and PaymentError can be made by hand (for tests of your own code)', () => {
  const e = new InsufficientFundsError('m', { status: 402, code: 'insufficient_funds', available: 5, amount: 358, currency: 'usd', customerId: 'cus_1' });
  assert.deepEqual([e.available, e.amount, e.currency, e.customerId, e.status], [5, 358, 'usd', 'cus_1', 402]);
  assert.equal(new PaymentError('p', { status: 402 }).name, 'PaymentError');
});

test('customers.createOwnerGrant and setOwner: POST the params as body; the key is an option', async () => {
  const grant = { address: '0x' + 'a'.repeat(40), nonce: '0x' + '1'.repeat(64), origin: 'https://portal.example', deadline: 1_900_000_000 };
  reset((r) =>
    r.url.endsWith('/owner_grants')
      ? { status: 200, body: { object: 'owner_grant', livemode: false, customerId: 'cus_123', ...grant, typedData: { primaryType: 'OwnerGrant' } } }
      : { status: 202, body: { object: 'owner_change', livemode: false, customerId: 'cus_123', address: grant.address, status: 'sent', txHash: '0x' + 'b'.repeat(64), effective: 'now' } },
  );
  const g = await client.customers.createOwnerGrant('cus_123', { address: grant.address, origin: grant.origin });
  assert.equal(g.typedData.primaryType, 'OwnerGrant');
  const ch = await client.customers.setOwner('cus_a/b', { ...grant, signature: '0xsig' }, { idempotencyKey: 'owner-1' });
  assert.equal(ch.effective, 'now');
  assert.equal(ch.lastResponse.status, 202);
  assert.deepEqual(seen.map((r) => [r.method, r.url, r.body]), [
    ['POST', '/v1/customers/cus_123/owner_grants', { address: grant.address, origin: grant.origin }],
    ['POST', '/v1/customers/cus_a%2Fb/owner', { ...grant, signature: '0xsig' }],
  ]);
  assert.equal(seen[1].headers['idempotency-key'], 'owner-1');
  await assert.rejects(client.customers.setOwner('cus_123', { ...grant, idempotencyKey: 'k' }), /idempotencyKey is a request option/);
  await assert.rejects(client.customers.createOwnerGrant('cus_123', '0xabc'), /params must be an object/);
  await assert.rejects(client.customers.setOwner('', grant), /customerId/);
  assert.equal(seen.length, 2, 'nothing sent for a bad argument');
});
