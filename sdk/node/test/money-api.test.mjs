// Customer funds and refunds against the real reference server. What runs
// depends on what the server can do, and each skip says what it waits for:
//
// - the routes (GET /v1/customers/{id}, refunds, the test faucet): without
//   them in the served OpenAPI document, everything here is skipped;
// - customer funds (a settler that charges customer balances: the deposit
//   instructions of a customer are not null): without them, the server must
//   answer refunds and the faucet with 409 refunds_not_supported, and the
//   tests of funds and refunds on chain are skipped.
//
// SETTLEFLOW_TEST_FUNDS=require turns those skips into failures (for a CI
// job that must exercise funds).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  Settleflow,
  APIError,
  PaymentError,
  InsufficientFundsError,
  InvalidRequestError,
  ConflictError,
  NotFoundError,
  PermissionError,
} from '../src/index.js';
import { startServer } from '../test-support/server.mjs';

const REQUIRE = process.env.SETTLEFLOW_TEST_FUNDS === 'require';
let server;
let client;
let routes = false;
let funded = false;

before(async () => {
  server = await startServer();
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  const doc = await client.openAPI();
  const ops = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op?.operationId)));
  routes = ['fetchCustomer', 'createRefund', 'fetchRefund', 'listRefunds', 'fundTestCustomer'].every((op) => ops.has(op));
  if (routes) funded = (await client.customers.fetch(customer())).deposit !== null;
});
after(async () => {
  client?.close();
  await server?.stop();
});

const ticket = (n = 1) => ({ ticketId: `T-${n}`, subject: 'Refund for invoice 7', attachments: 1 });
const customer = () => 'cus_' + randomUUID().replaceAll('-', '');
const rejection = (p) => p.then(() => assert.fail('no error'), (e) => e);

async function waitFor(fn, what, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Skips (or, with SETTLEFLOW_TEST_FUNDS=require, fails) a test the server cannot run yet. */
function needs(t, what) {
  const missing = what === 'routes' ? !routes : !routes || !funded;
  if (!missing) return false;
  const why =
    !routes
      ? 'the server does not serve the customer and refund routes'
      : 'the server does not charge customer balances (customer.deposit is null), as the reference server built from this repository does';
  if (REQUIRE) assert.fail(why);
  t.skip(why);
  return true;
}

describe('any server with the routes', () => {
  test('customers.fetch: a customer never seen has a zero balance in usd, in test mode', async (t) => {
    if (needs(t, 'routes')) return;
    const id = customer();
    const c = await client.customers.fetch(id);
    assert.equal(c.object, 'customer');
    assert.equal(c.id, id);
    assert.equal(c.livemode, false);
    assert.deepEqual(c.balance, { onChain: 0, reserved: 0, pendingWithdrawal: 0, available: 0, currency: 'usd' });
    assert.equal(c.lastResponse.status, 200);
    assert.match(c.lastResponse.requestId, /^req_/);
    if (c.deposit !== null) {
      assert.ok(Number.isInteger(c.deposit.chainId));
      assert.match(c.deposit.contract, /^0x[0-9a-fA-F]{40}$/);
      assert.match(c.deposit.token, /^0x[0-9a-fA-F]{40}$/);
      assert.match(c.deposit.customerRef, /^0x[0-9a-f]{64}$/);
    }
    const bad = await rejection(client.customers.fetch('not-a-customer'));
    assert.ok(bad instanceof InvalidRequestError && !(bad instanceof NotFoundError), String(bad));
    assert.equal(bad.status, 400);
    assert.equal(bad.code, 'parameter_invalid');
    assert.equal(bad.param, 'customerId');
  });

  test('the test faucet with a live key is a PermissionError', async (t) => {
    if (needs(t, 'routes')) return;
    const live = new Settleflow({ apiKey: await server.addKey(['--name', 'live'], 'live'), baseUrl: server.baseUrl, ca: server.ca });
    try {
      const e = await rejection(live.testHelpers.fundCustomer(customer(), 500));
      assert.ok(e instanceof PermissionError, String(e));
      assert.equal(e.status, 403);
      // test_mode_only; a server without live settlement refuses the live key before (livemode_not_configured).
      assert.ok(['test_mode_only', 'livemode_not_configured'].includes(e.code), e.code);
    } finally {
      live.close();
    }
  });

  test('refunds.list and refunds.fetch: an empty list, a 404, and bad parameters named', async (t) => {
    if (needs(t, 'routes')) return;
    const page = await client.refunds.list({ workflowId: 'wf_01M835T2ZC03XQ0RBX68RJJRB0', limit: 5 });
    assert.deepEqual({ ...page }, { object: 'list', url: '/v1/refunds', data: [], hasMore: false });
    assert.deepEqual(await client.refunds.listAutoPaging({ status: 'Failed', workflowId: 'wf_01M835T2ZC03XQ0RBX68RJJRB0' }).toArray({ limit: 5 }), []);
    const missing = await rejection(client.refunds.fetch('re_01M835T2ZC03XQ0RBX68RJJRB0'));
    assert.ok(missing instanceof NotFoundError, String(missing));
    assert.equal(missing.code, 'resource_missing');
    const badStatus = await rejection(client.refunds.list({ status: 'Settled' }));
    assert.ok(badStatus instanceof InvalidRequestError);
    assert.equal(badStatus.param, 'status');
    const badLimit = await rejection(client.refunds.list({ limit: 0 }));
    assert.equal(badLimit.param, 'limit');
  });

  test('a workflow carries refunded: 0 usd until refunded', async () => {
    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() });
    assert.deepEqual(wf.refunded, { amount: 0, currency: 'usd' });
  });

  test('without customer funds, a refund and the test faucet are 409 refunds_not_supported', async (t) => {
    if (!routes) return needs(t, 'routes');
    if (funded) return t.skip('this server charges customer balances: the funded tests below cover refunds and the faucet');
    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: customer(), payload: ticket() });
    await waitFor(async () => (await client.workflows.fetch(wf.id)).status === 'Settled', 'Settled');
    const refund = await rejection(client.refunds.create(wf.id, { amount: 1 }));
    assert.ok(refund instanceof ConflictError, String(refund));
    assert.equal(refund.status, 409);
    assert.equal(refund.code, 'refunds_not_supported');
    const fund = await rejection(client.testHelpers.fundCustomer(customer(), 500));
    assert.ok(fund instanceof ConflictError, String(fund));
    assert.equal(fund.code, 'refunds_not_supported');
  });
});

describe('a server that charges customer balances', () => {
  test('402: a workflow for cus_insufficient_funds is an InsufficientFundsError with the amounts; nothing is created', async (t) => {
    if (needs(t, 'funds')) return;
    const cus = 'cus_insufficient_funds';
    const quote = await client.quotes.create({ product: 'ticket-triage', customerId: cus, payload: ticket() });
    const e = await rejection(client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() }));
    assert.ok(e instanceof InsufficientFundsError && e instanceof PaymentError && e instanceof APIError, String(e));
    assert.equal(e.status, 402);
    assert.equal(e.type, 'payment_error');
    assert.equal(e.code, 'insufficient_funds');
    assert.equal(e.customerId, cus);
    assert.equal(e.amount, quote.quoted.amount);
    assert.equal(e.currency, 'usd');
    assert.ok(Number.isInteger(e.available) && e.available < e.amount, `available ${e.available}`);
    assert.match(e.requestId, /^req_/);
    assert.deepEqual((await client.workflows.list({ customerId: cus })).data, []);
    const c = await client.customers.fetch(cus);
    assert.equal(c.balance.available, e.available);
  });

  test('fund a customer, run a workflow, refund part then the rest; a third refund exceeds what is left', async (t) => {
    if (needs(t, 'funds')) return;
    const cus = customer();
    const funded = await client.testHelpers.fundCustomer(cus, 50_000);
    assert.equal(funded.object, 'customer');
    assert.equal(funded.id, cus);
    assert.ok(funded.balance.onChain >= 50_000, JSON.stringify(funded.balance));
    const b0 = funded.balance;
    assert.equal(b0.available, b0.onChain - b0.reserved - b0.pendingWithdrawal);
    assert.notEqual(funded.deposit, null);
    const event = await waitFor(async () => {
      for await (const ev of client.events.listAutoPaging({ type: 'customer.funded', limit: 100 })) {
        if (ev.data.customerId === cus) return ev;
      }
      return null;
    }, 'a customer.funded event');
    assert.equal(event.data.deposit.amount.currency, 'usd');
    assert.ok(event.data.deposit.amount.amount > 0);
    assert.match(event.data.deposit.txHash, /^0x/);

    const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket() });
    assert.equal(wf.status, 'Pending');
    // A workflow that has not settled cannot be refunded (it takes seconds to
    // settle; should it have settled already, this refund of 1 is made and
    // counted with the others).
    const made = [];
    const early = await client.refunds.create(wf.id, { amount: 1 }).catch((e) => e);
    if (early instanceof Error) {
      assert.ok(early instanceof ConflictError, String(early));
      assert.equal(early.status, 409);
      assert.equal(early.code, 'workflow_not_settled');
    } else {
      made.push(early);
    }
    const settled = await waitFor(async () => {
      const w = await client.workflows.fetch(wf.id);
      return w.status === 'Settled' && w;
    }, 'Settled');
    if (made.length > 0) await waitFor(async () => (await client.refunds.fetch(made[0].id)).status === 'Succeeded', 'the early refund');
    const afterCharge = (await client.customers.fetch(cus)).balance;
    if (made.length === 0) assert.deepEqual(settled.refunded, { amount: 0, currency: 'usd' });
    assert.equal(afterCharge.reserved, 0);

    const partial = await client.refunds.create(wf.id, { amount: 100, reason: 'duplicate ticket' }, { idempotencyKey: 'refund-' + wf.id });
    assert.match(partial.id, /^re_/);
    assert.equal(partial.object, 'refund');
    assert.equal(partial.livemode, false);
    assert.equal(partial.workflowId, wf.id);
    assert.equal(partial.amount, 100);
    assert.equal(partial.currency, 'usd');
    assert.equal(partial.reason, 'duplicate ticket');
    assert.equal(partial.status, 'Pending');
    assert.equal(partial.lastResponse.status, 201);
    assert.equal(partial.lastResponse.idempotentReplayed, false);
    const replay = await client.refunds.create(wf.id, { amount: 100, reason: 'duplicate ticket' }, { idempotencyKey: 'refund-' + wf.id });
    assert.equal(replay.id, partial.id);
    assert.equal(replay.lastResponse.idempotentReplayed, true);
    made.push(partial);

    const rest = await client.refunds.create(wf.id);
    assert.ok(rest.amount > 0, String(rest.amount));
    assert.equal(rest.reason, '');
    made.push(rest);
    const over = await rejection(client.refunds.create(wf.id, { amount: 1 }));
    assert.ok(over instanceof InvalidRequestError, String(over));
    assert.equal(over.status, 400);
    assert.equal(over.code, 'amount_exceeds_refundable');
    assert.equal(over.param, 'amount');

    const done = [];
    for (const r of made) {
      done.push(await waitFor(async () => {
        const x = await client.refunds.fetch(r.id);
        assert.notEqual(x.status, 'Failed', JSON.stringify(x.failure));
        return x.status === 'Succeeded' && x;
      }, `refund ${r.id} Succeeded`));
    }
    for (const r of done) {
      assert.ok(r.settlement && /^0x/.test(r.settlement.txHash), JSON.stringify(r.settlement));
      assert.equal(r.failure, null);
    }
    const total = made.reduce((sum, r) => sum + r.amount, 0);
    const refunded = await client.workflows.fetch(wf.id);
    assert.deepEqual(refunded.refunded, { amount: total, currency: 'usd' });
    const afterRefunds = (await client.customers.fetch(cus)).balance;
    assert.equal(afterRefunds.onChain - afterCharge.onChain, total - (made.length === 3 ? made[0].amount : 0), 'the refunds are back in the balance');
    assert.equal(afterRefunds.available, afterRefunds.onChain - afterRefunds.reserved - afterRefunds.pendingWithdrawal);

    // Listed newest first, one workflow's only; auto-paging a page at a time.
    const newestFirst = made.map((r) => r.id).reverse();
    const page = await client.refunds.list({ workflowId: wf.id });
    assert.deepEqual(page.data.map((r) => r.id), newestFirst);
    assert.equal(page.hasMore, false);
    const all = await client.refunds.listAutoPaging({ workflowId: wf.id, limit: 1 }).toArray({ limit: 10 });
    assert.deepEqual(all.map((r) => r.id), newestFirst);
    assert.deepEqual((await client.refunds.list({ workflowId: wf.id, status: 'Pending' })).data, []);
    assert.deepEqual((await client.refunds.list({ workflowId: wf.id, status: 'Succeeded', limit: 1 })).data.map((r) => r.id), [rest.id]);
    const newer = await client.refunds.listAutoPaging({ workflowId: wf.id, endingBefore: partial.id }).toArray({ limit: 10 });
    assert.deepEqual(newer.map((r) => r.id), [rest.id]);

    // Each refund's refund.succeeded event carries it.
    for (const r of done) {
      const ev = await waitFor(async () => {
        for await (const e of client.events.listAutoPaging({ type: 'refund.succeeded', limit: 100 })) {
          if (e.data.refund?.id === r.id) return e;
        }
        return null;
      }, `the refund.succeeded event of ${r.id}`);
      assert.equal(ev.data.workflowId, wf.id);
      assert.equal(ev.data.refund.amount, r.amount);
      assert.equal(ev.data.refund.status, 'Succeeded');
    }
  });
});
