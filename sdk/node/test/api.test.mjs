// The client against the real reference server: every operation, paging,
// typed errors from real responses, the operationId coverage check.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  Settleflow,
  OPERATIONS,
  APIError,
  SettleflowError,
  AuthenticationError,
  InvalidRequestError,
  NotFoundError,
  ConflictError,
  IdempotencyError,
  RateLimitError,
  PermissionError,
} from '../src/index.js';
import { startServer } from '../test-support/server.mjs';

let server;
let client;
// Workflows created up front so that they settle (a few seconds) while other tests run.
const early = {};
before(async () => {
  server = await startServer();
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  early.main = { cus: customer() };
  early.main.wf = await client.workflows.create({ product: 'ticket-triage', customerId: early.main.cus, payload: ticket() });
  early.toCancel = await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() });
  early.events = [];
  for (let i = 0; i < 3; i++) {
    early.events.push((await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket(i) })).id);
  }
});
after(async () => {
  client?.close();
  await server?.stop();
});

const ticket = (n = 1) => ({ ticketId: `T-${n}`, subject: 'Refund for invoice 7', attachments: 1 });
const customer = () => 'cus_' + randomUUID().replaceAll('-', '');

async function waitFor(fn, what, ms = 15_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('workflows', () => {
  test('create, fetch, list, and the workflow settles', async () => {
    const { cus, wf } = early.main;
    assert.match(wf.id, /^wf_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(wf.object, 'workflow');
    assert.equal(wf.livemode, false);
    assert.equal(wf.customerId, cus);
    assert.deepEqual(wf.payload, ticket());
    assert.equal(wf.status, 'Pending');
    assert.equal(wf.quoted.currency, 'usd');
    assert.ok(Number.isInteger(wf.quoted.amount) && wf.quoted.amount > 0);
    assert.equal(wf.margin.target, 0.3);
    assert.equal(wf.margin.achieved, null);
    assert.equal(wf.lastResponse.status, 201);
    assert.match(wf.lastResponse.requestId, /^req_/);
    assert.equal(wf.lastResponse.idempotentReplayed, false);
    assert.ok(!Object.keys(wf).includes('lastResponse'), 'lastResponse is not enumerable');

    const fetched = await client.workflows.fetch(wf.id);
    assert.equal(fetched.id, wf.id);
    assert.equal(fetched.createdAt, wf.createdAt);
    assert.equal(fetched.quoted.amount, wf.quoted.amount);

    const page = await client.workflows.list({ customerId: cus });
    assert.equal(page.object, 'list');
    assert.equal(page.url, '/v1/workflows');
    assert.equal(page.hasMore, false);
    assert.deepEqual(page.data.map((w) => w.id), [wf.id]);

    const settled = await waitFor(async () => {
      const w = await client.workflows.fetch(wf.id);
      return w.status === 'Settled' && w;
    }, 'Settled');
    assert.equal(typeof settled.margin.achieved, 'number');
    assert.ok(settled.settlement && typeof settled.settlement.txHash === 'string');
    assert.ok(Number.isInteger(settled.settlement.blockNumber));
    assert.equal(settled.failure, null);
    const bySettled = await client.workflows.list({ customerId: cus, status: 'Settled', limit: 5 });
    assert.deepEqual(bySettled.data.map((w) => w.id), [wf.id]);
    const byPending = await client.workflows.list({ customerId: cus, status: 'Pending' });
    assert.deepEqual(byPending.data, []);
  });

  test('listAutoPaging walks 4 pages with no duplicate and no gap, newest first', async () => {
    const cus = customer();
    const created = [];
    for (let i = 0; i < 7; i++) {
      created.push((await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket(i) })).id);
    }
    // A workflow of another customer in between must not appear.
    await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() });

    const calls = [];
    const list = client.workflows.list.bind(client.workflows);
    client.workflows.list = (params, opts) => {
      calls.push({ ...params });
      return list(params, opts);
    };
    try {
      const seen = [];
      for await (const wf of client.workflows.listAutoPaging({ customerId: cus, limit: 2 })) {
        assert.equal(wf.customerId, cus);
        seen.push(wf.id);
      }
      assert.deepEqual(seen, [...created].reverse(), 'every workflow once, newest first');
      assert.equal(calls.length, 4, '7 workflows at 2 a page are 4 pages');
      assert.equal(calls[0].startingAfter, undefined);
      assert.equal(calls[1].startingAfter, created[5]);
      assert.equal(calls[3].startingAfter, created[1]);

      // endingBefore pages towards newer workflows: oldest first from the cursor on.
      calls.length = 0;
      const newer = [];
      for await (const wf of client.workflows.listAutoPaging({ customerId: cus, limit: 2, endingBefore: created[0] })) {
        newer.push(wf.id);
      }
      assert.deepEqual(newer, created.slice(1));
      assert.equal(calls.length, 3);

      // Breaking out early stops fetching; toArray bounds what it collects.
      calls.length = 0;
      for await (const wf of client.workflows.listAutoPaging({ customerId: cus, limit: 2 })) {
        assert.equal(wf.id, created[6]);
        break;
      }
      assert.equal(calls.length, 1);
      const three = await client.workflows.listAutoPaging({ customerId: cus, limit: 2 }).toArray({ limit: 3 });
      assert.deepEqual(three.map((w) => w.id), [created[6], created[5], created[4]]);
    } finally {
      delete client.workflows.list;
    }
  });

  test('an explicit idempotencyKey replays the first create; another body with it is an IdempotencyError', async () => {
    const cus = customer();
    const key = 'order-' + randomUUID();
    const a = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() }, { idempotencyKey: key });
    const b = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() }, { idempotencyKey: key });
    assert.equal(b.id, a.id);
    assert.equal(b.lastResponse.idempotentReplayed, true);
    const err = await client.workflows
      .create({ product: 'ticket-triage', customerId: cus, payload: ticket(2) }, { idempotencyKey: key })
      .then(() => assert.fail('no error'), (e) => e);
    assert.ok(err instanceof IdempotencyError && err instanceof ConflictError && err instanceof APIError);
    assert.equal(err.status, 409);
    assert.equal(err.code, 'idempotency_key_reused');
    assert.equal((await client.workflows.list({ customerId: cus })).data.length, 1);
  });

  test('cancel: a Settled workflow is a ConflictError naming its status; an unknown id is NotFoundError', async () => {
    const wf = early.toCancel;
    await waitFor(async () => (await client.workflows.fetch(wf.id)).status === 'Settled', 'Settled');
    const err = await client.workflows.cancel(wf.id).then(() => assert.fail('no error'), (e) => e);
    assert.ok(err instanceof ConflictError);
    assert.equal(err.status, 409);
    assert.equal(err.code, 'workflow_settled');
    const missing = await client.workflows.cancel('wf_01M835T2ZC03XQ0RBX68RJJRB0').then(() => assert.fail('no error'), (e) => e);
    assert.ok(missing instanceof NotFoundError && missing instanceof InvalidRequestError);
    assert.equal(missing.code, 'resource_missing');
  });

  test('cancel right after create: Canceled, or a ConflictError if a worker claimed it first', async () => {
    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() });
    try {
      const canceled = await client.workflows.cancel(wf.id);
      assert.equal(canceled.id, wf.id);
      assert.equal(canceled.status, 'Canceled');
      assert.equal((await client.workflows.fetch(wf.id)).status, 'Canceled');
    } catch (e) {
      assert.ok(e instanceof ConflictError, String(e));
      assert.match(e.code, /^workflow_(running|settling|settled)$/);
    }
  });

  test('fetch of an unknown id is NotFoundError; an id is path-escaped', async () => {
    const e = await client.workflows.fetch('wf_nope/../../products').then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof NotFoundError, String(e));
    await assert.rejects(client.workflows.fetch(''), TypeError);
  });
});

describe('quotes, products, events, openAPI', () => {
  test('quotes.create prices without creating', async () => {
    const cus = customer();
    const q = await client.quotes.create({ product: 'ticket-triage', customerId: cus, payload: ticket() });
    assert.equal(q.object, 'quote');
    assert.equal(q.customerId, cus);
    assert.equal(q.quoted.currency, 'usd');
    assert.equal(q.margin.target, 0.3);
    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() });
    assert.equal(wf.quoted.amount, q.quoted.amount);
    assert.equal((await client.workflows.list({ customerId: cus })).data.length, 1);
  });

  test('products.list and products.fetch', async () => {
    const list = await client.products.list();
    assert.equal(list.object, 'list');
    const names = list.data.map((p) => p.name);
    assert.ok(names.includes('ticket-triage'), names.join());
    const p = await client.products.fetch('ticket-triage');
    assert.equal(p.object, 'product');
    assert.equal(p.name, 'ticket-triage');
    assert.equal(p.targetMargin, 0.3);
    assert.equal(p.minimumCharge.currency, 'usd');
    assert.equal(typeof p.payloadSchema, 'object');
    assert.deepEqual(p.example, ticket(42));
    await assert.rejects(client.products.fetch('no-such-product'), NotFoundError);
  });

  test('events.list, events.listAutoPaging and events.fetch', async () => {
    const ids = early.events;
    const events = [];
    for (const id of ids) {
      events.push(
        await waitFor(async () => (await client.events.list({ workflowId: id })).data[0], 'event of ' + id),
      );
    }
    for (const [i, ev] of events.entries()) {
      assert.match(ev.id, /^evt_/);
      assert.equal(ev.object, 'event');
      assert.equal(ev.type, 'workflow.completed');
      assert.equal(ev.data.workflowId, ids[i]);
      assert.equal(ev.data.status, 'Settled');
      assert.equal(typeof ev.data.margin.achieved, 'number');
      assert.deepEqual(await client.events.fetch(ev.id), ev);
    }
    const want = new Set(events.map((e) => e.id));
    const seen = [];
    for await (const ev of client.events.listAutoPaging({ type: 'workflow.completed', limit: 1 })) {
      if (want.has(ev.id)) seen.push(ev.id);
    }
    assert.equal(seen.length, 3);
    assert.equal(new Set(seen).size, 3);
    await assert.rejects(client.events.fetch('evt_01M835T2ZC03XQ0RBX68RJJRB0'), NotFoundError);
    const after = await client.events.list({ workflowId: ids[0], createdAfter: new Date(Date.parse(events[0].createdAt) - 1000) });
    assert.deepEqual(after.data.map((e) => e.id), [events[0].id]);
  });

  test('margins.report: a Settled workflow in the group of its customer, of its product and of its UTC day; the refusals', async () => {
    const { cus, wf } = early.main;
    const settled = await waitFor(async () => {
      const w = await client.workflows.fetch(wf.id);
      return w.status === 'Settled' && w;
    }, 'Settled');
    const createdAfter = new Date(Date.parse(wf.createdAt) - 1000);
    const rep = await client.margins.report({ groupBy: 'customer', createdAfter });
    assert.equal(rep.object, 'margin_report');
    assert.equal(rep.livemode, false);
    assert.equal(rep.groupBy, 'customer');
    assert.equal(Date.parse(rep.createdAfter), createdAfter.getTime());
    assert.equal(rep.createdBefore, null);
    assert.equal(rep.product, '');
    assert.equal(rep.currency, 'usd');
    assert.match(rep.lastResponse.requestId, /^req_/);
    const row = rep.data.find((r) => r.key === cus);
    assert.ok(row, `no group for ${cus}: ${JSON.stringify(rep.data.map((r) => r.key))}`);
    assert.equal(row.workflows, 1);
    assert.deepEqual(row.charged, settled.quoted);
    assert.deepEqual(row.refunded, { amount: 0, currency: 'usd' });
    assert.ok(Number.isInteger(row.cost.amount) && row.cost.amount >= 0);
    // The report truncates to a basis point, the workflow's margin rounds: at most one apart.
    assert.ok(Math.abs(row.margin - settled.margin.achieved) <= 0.0001 + 1e-9, `${row.margin} vs ${settled.margin.achieved}`);
    assert.ok(rep.total.workflows >= 1 && rep.total.key === '');
    const day = await client.margins.report({ groupBy: 'day', product: 'ticket-triage', createdAfter, createdBefore: new Date(Date.now() + 60_000) });
    assert.ok(day.data.some((r) => r.key === settled.createdAt.slice(0, 10)), JSON.stringify(day.data));
    assert.equal(day.product, 'ticket-triage');
    for (const [params, code, param] of [
      [undefined, 'parameter_missing', 'groupBy'],
      [{ groupBy: 'week' }, 'parameter_invalid', 'groupBy'],
      [{ groupBy: 'day', product: 'no-such-product' }, 'parameter_invalid', 'product'],
      [{ groupBy: 'day', createdAfter: new Date(), createdBefore: createdAfter }, 'parameter_invalid', 'createdBefore'],
      [{ groupBy: 'day', group_by: 'day' }, 'parameter_unknown', 'group_by'],
    ]) {
      const e = await client.margins.report(params).then(() => assert.fail('no error'), (x) => x);
      assert.ok(e instanceof InvalidRequestError, String(e));
      assert.equal(e.status, 400);
      assert.equal(e.code, code);
      assert.equal(e.param, param);
    }
  });

  test('every operationId of the served OpenAPI document has a client method', async () => {
    const doc = await client.openAPI();
    assert.equal(doc.openapi.slice(0, 3), '3.1');
    const ops = [];
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) if (op && typeof op === 'object' && op.operationId) ops.push(op.operationId);
    }
    assert.ok(ops.length >= 10, ops.join());
    const missing = [];
    for (const opId of ops) {
      const name = OPERATIONS[opId];
      let target = client;
      let owner = client;
      for (const part of (name ?? '').split('.')) {
        owner = target;
        target = target?.[part];
      }
      if (!name || typeof target !== 'function') missing.push(opId);
      else assert.equal(typeof target.bind(owner), 'function');
    }
    assert.deepEqual(missing, [], 'operations without a client method');
    assert.deepEqual(Object.keys(OPERATIONS).filter((k) => !ops.includes(k)), [], 'OPERATIONS names an operation the server does not serve');
  });
});

describe('typed errors from real responses', () => {
  test('401: AuthenticationError', async () => {
    const bad = new Settleflow({ apiKey: 'sk_test_' + 'A'.repeat(40), baseUrl: server.baseUrl, ca: server.ca });
    const e = await bad.workflows.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof AuthenticationError && e instanceof APIError && e instanceof SettleflowError);
    assert.equal(e.name, 'AuthenticationError');
    assert.equal(e.status, 401);
    assert.equal(e.type, 'authentication_error');
    assert.equal(e.code, 'api_key_invalid');
    assert.match(e.requestId, /^req_/);
    assert.ok(e.message.length > 0);
    bad.close();
  });

  test('403: PermissionError (a live key on a server without live settlement)', async () => {
    const liveKey = await server.addKey(['--name', 'live'], 'live');
    assert.match(liveKey, /^sk_live_/);
    const live = new Settleflow({ apiKey: liveKey, baseUrl: server.baseUrl, ca: server.ca });
    const e = await live.products.list().then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof PermissionError && e instanceof APIError, String(e));
    assert.equal(e.status, 403);
    assert.equal(e.type, 'permission_error');
    assert.equal(e.code, 'livemode_not_configured');
    live.close();
  });

  test('400: InvalidRequestError with param', async () => {
    const e = await client.workflows
      .create({ product: 'ticket-triage', customerId: customer() })
      .then(() => assert.fail('no error'), (x) => x);
    assert.ok(e instanceof InvalidRequestError && e instanceof APIError);
    assert.equal(e.status, 400);
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.code, 'parameter_missing');
    assert.equal(e.param, 'payload');
    assert.equal(e.message, 'payload is required');
    assert.match(e.requestId, /^req_/);
    assert.equal(e.headers['request-id'], e.requestId);

    const inner = await client.workflows
      .create({ product: 'ticket-triage', customerId: customer(), payload: { ...ticket(), attachments: 'one' } })
      .then(() => assert.fail('no error'), (x) => x);
    assert.equal(inner.param, 'payload.attachments');
    const unknown = await client.workflows.list({ starting_after: 'wf_x' }).then(() => assert.fail('no error'), (x) => x);
    assert.equal(unknown.code, 'parameter_unknown');
  });

  test('429: RateLimitError with headers and retryAfter (tiny enterprise key, maxRetries 0)', async () => {
    const tiny = new Settleflow({ apiKey: server.tinyKey, baseUrl: server.baseUrl, ca: server.ca, maxRetries: 0 });
    let e;
    for (let i = 0; i < 3 && !e; i++) {
      await tiny.products.list().catch((x) => (e = x));
    }
    assert.ok(e instanceof RateLimitError && e instanceof APIError, String(e));
    assert.equal(e.status, 429);
    assert.equal(e.type, 'rate_limit_error');
    assert.equal(e.headers['x-ratelimit-limit'], '2');
    assert.equal(e.headers['x-ratelimit-remaining'], '0');
    assert.match(e.headers['x-ratelimit-reset'], /^\d+$/);
    assert.ok(Number.isInteger(e.retryAfter) && e.retryAfter > 0 && e.retryAfter <= 60, String(e.retryAfter));
    assert.equal(e.retryAfter, Number(e.headers['retry-after']));
    tiny.close();
  });
});
