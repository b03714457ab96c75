// Outcome pricing against the reference server: success criteria and a
// margin floor on a quote and a create, the workflow's charge, cost and
// outcome once it ran, in the workflow and in its event, and the refusals.
// ticket-triage is priced fixed: the verdict is recorded and the charge is
// the quote.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Settleflow, InvalidRequestError, IdempotencyError } from '../src/index.js';
import { startServer } from '../test-support/server.mjs';

let server;
let client;
before(async () => {
  server = await startServer();
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
});
after(async () => {
  client?.close();
  await server?.stop();
});

const ticket = { ticketId: 'T-42', subject: 'Refund for invoice 7', attachments: 1 };
const customer = () => 'cus_' + randomUUID().replaceAll('-', '');
// Holds for what ticket-triage makes of the ticket: { ticketId: 'T-42', queue: 'billing' }.
const criteria = {
  type: 'all_of',
  criteria: [
    { type: 'exact', path: '/queue', value: 'billing' },
    { type: 'regex', path: '/ticketId', pattern: '^T-' },
  ],
};

async function terminal(id) {
  const end = Date.now() + 20_000;
  for (;;) {
    const wf = await client.workflows.fetch(id);
    if (['Settled', 'Failed', 'Canceled'].includes(wf.status)) return wf;
    if (Date.now() > end) throw new Error(`${id} still ${wf.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('the catalogue shows each product\'s pricing, criteria and floor', async () => {
  const p = await client.products.fetch('ticket-triage');
  assert.deepEqual(p.pricing, { model: 'fixed' });
  assert.equal(p.successCriteria, null);
  assert.equal(p.marginFloor, null);
});

test('a quote with criteria and a floor: the terms in force and the budget', async () => {
  const cus = customer();
  const q = await client.quotes.create({ product: 'ticket-triage', customerId: cus, payload: ticket, successCriteria: criteria, marginFloor: 0.25 });
  // 1 attachment: an estimated cost of 250 quoted 358 at 30 %; a floor of 25 % leaves floor(358 × 0.75) = 268.
  assert.deepEqual(q.quoted, { amount: 358, currency: 'usd' });
  assert.deepEqual(q.pricing, { model: 'fixed' });
  assert.deepEqual(q.successCriteria, criteria);
  assert.equal(q.marginFloor, 0.25);
  assert.deepEqual(q.budget, { amount: 268, currency: 'usd' });
  const bare = await client.quotes.create({ product: 'ticket-triage', customerId: cus, payload: ticket });
  assert.equal(bare.successCriteria, null);
  assert.equal(bare.marginFloor, null);
  assert.equal(bare.budget, null);
});

test('a workflow keeps its terms, and once it ran has its charge, cost and outcome, in its event too', async () => {
  const cus = customer();
  const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket, successCriteria: criteria, marginFloor: 0.25 });
  assert.deepEqual(wf.pricing, { model: 'fixed' });
  assert.deepEqual(wf.successCriteria, criteria);
  assert.equal(wf.marginFloor, 0.25);
  assert.equal(wf.charged, null);
  assert.equal(wf.cost, null);
  assert.equal(wf.outcome, null);
  const missed = await client.workflows.create({
    product: 'ticket-triage', customerId: cus, payload: ticket, successCriteria: { type: 'exact', path: '/queue', value: 'general' },
  });

  const done = await terminal(wf.id);
  assert.equal(done.status, 'Settled');
  assert.deepEqual(done.charged, done.quoted);
  // ticket-triage costs 170 of model plus 45 per attachment scanned, as items.
  assert.deepEqual(done.cost, { amount: 215, currency: 'usd', items: [
    { category: 'model', provider: 'chat-model', units: 400, amount: 170 },
    { category: 'tools', provider: 'attachment-scanner', units: 1, amount: 45 },
  ] });
  assert.equal(done.outcome.success, true);
  assert.deepEqual(done.outcome.trace.map((s) => [s.node, s.path, s.type, s.matched]), [
    ['', '', 'all_of', true],
    ['criteria[0]', '/queue', 'exact', true],
    ['criteria[1]', '/ticketId', 'regex', true],
  ]);
  for (const s of done.outcome.trace) assert.equal(typeof s.reason, 'string');
  const [ev] = (await client.events.list({ workflowId: wf.id })).data;
  assert.equal(ev.type, 'workflow.completed');
  assert.deepEqual(ev.data.pricing, { model: 'fixed' });
  assert.deepEqual(ev.data.charged, done.charged);
  assert.deepEqual(ev.data.cost, done.cost);
  assert.deepEqual(ev.data.outcome, done.outcome);

  // The criterion does not hold: recorded; fixed pricing charges the quote all the same.
  const m = await terminal(missed.id);
  assert.equal(m.status, 'Settled');
  assert.equal(m.outcome.success, false);
  assert.equal(m.outcome.trace.length, 1);
  assert.deepEqual(m.charged, m.quoted);
  assert.equal(m.marginFloor, null);
});

test('refusals: a floor the quote does not keep, a floor of 1, a tree that does not parse; the floor is part of the idempotency key', async () => {
  const cus = customer();
  const cases = [
    [{ marginFloor: 0.5 }, 'margin_below_floor', /^marginFloor$/],
    [{ marginFloor: 1 }, 'parameter_invalid', /^marginFloor$/],
    [{ successCriteria: { type: 'numeric_threshold', path: '/x', op: '~', value: 1 } }, 'parameter_invalid', /^successCriteria/],
    [{ successCriteria: { type: 'any_of', criteria: [criteria, { type: 'regex', path: '/x', pattern: '(' }] } }, 'parameter_invalid', /^successCriteria\.criteria\[1\]/],
  ];
  for (const [extra, code, param] of cases) {
    for (const op of [client.quotes, client.workflows]) {
      const e = await op.create({ product: 'ticket-triage', customerId: cus, payload: ticket, ...extra }).then(() => assert.fail('no error'), (x) => x);
      assert.ok(e instanceof InvalidRequestError, `${JSON.stringify(extra)}: ${e}`);
      assert.equal(e.status, 400);
      assert.equal(e.code, code, JSON.stringify(extra));
      assert.match(e.param, param);
    }
  }
  const idempotencyKey = 'outcome-' + cus;
  await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket, marginFloor: 0.2 }, { idempotencyKey });
  await assert.rejects(
    client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: ticket, marginFloor: 0.21 }, { idempotencyKey }),
    IdempotencyError,
  );
});
