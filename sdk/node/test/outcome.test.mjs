// Outcome pricing on the wire, against a scripted loopback server: what the
// client sends for successCriteria and marginFloor on a create and a quote,
// and that the answers' pricing, successCriteria, marginFloor, budget,
// charged, cost and outcome come back as sent. outcome-api.test.mjs runs the
// same against the reference server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Settleflow, InvalidRequestError } from '../src/index.js';

const key = 'sk_test_' + 'Q'.repeat(36) + 'a1b2';

const criteria = {
  type: 'all_of',
  criteria: [
    { type: 'exact', path: '/status', value: 'resolved' },
    { type: 'numeric_threshold', path: '/confidence', op: '>=', value: 0.8 },
  ],
};

const workflow = {
  id: 'wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S', object: 'workflow', livemode: false, product: 'ticket-resolution', customerId: 'cus_1',
  payload: { ticketId: 'T-42' }, quoted: { amount: 400, currency: 'usd' },
  pricing: { model: 'success_fee' }, successCriteria: criteria, marginFloor: 0.25,
  margin: { target: 0.3, achieved: 0.2875 }, status: 'Settled', result: { status: 'resolved', confidence: 0.9 },
  settlement: null, failure: null, charged: { amount: 400, currency: 'usd' },
  cost: {
    amount: 285, currency: 'usd',
    items: [
      { category: 'model', provider: 'openai', units: 12000, amount: 240 },
      { category: 'human', provider: 'reviewer', units: 1, amount: 45 },
    ],
  },
  outcome: {
    success: true,
    trace: [
      { node: '', path: '', type: 'all_of', matched: true, reason: '2 of 2 criteria matched' },
      { node: 'criteria[0]', path: '/status', type: 'exact', matched: true, reason: 'status is "resolved"' },
      { node: 'criteria[1]', path: '/confidence', type: 'numeric_threshold', matched: true, reason: 'confidence 0.9 >= 0.8' },
    ],
  },
  refunded: { amount: 0, currency: 'usd' }, createdAt: '2026-11-25T10:00:00Z', updatedAt: '2026-11-25T10:00:01Z',
};

const quote = {
  object: 'quote', livemode: false, product: 'ticket-resolution', customerId: 'cus_1', payload: { ticketId: 'T-42' },
  quoted: { amount: 400, currency: 'usd' },
  pricing: { model: 'capped', markup: 0.2, minimumCharge: { amount: 50, currency: 'usd' } },
  successCriteria: criteria, marginFloor: 0.25, budget: { amount: 300, currency: 'usd' }, margin: { target: 0.3 },
};

const product = {
  object: 'product', name: 'ticket-resolution', description: 'd', targetMargin: 0.3, minimumCharge: { amount: 50, currency: 'usd' },
  pricingSummary: 's', pricing: { model: 'hybrid', baseShare: 0.3 }, successCriteria: criteria, marginFloor: 0.2,
  payloadSchema: { type: 'object' }, example: null,
};

const event = {
  id: 'evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S', object: 'event', type: 'workflow.margin_below_floor', livemode: false,
  createdAt: '2026-11-25T10:00:01Z',
  data: {
    workflowId: workflow.id, status: 'Settling', quoted: { amount: 400, currency: 'usd' }, margin: { target: 0.3, achieved: 0.1 },
    pricing: { model: 'fixed' }, charged: { amount: 400, currency: 'usd' }, cost: { amount: 360, currency: 'usd', items: [] },
    outcome: { success: false, trace: [{ node: '', path: '/status', type: 'exact', matched: false, reason: 'status is missing' }] },
  },
};

let srv;
let client;
const seen = [];

before(async () => {
  srv = http.createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ method: req.method, url: req.url, body });
    const send = (status, obj) => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req_1' }).end(JSON.stringify(obj));
    };
    if (body && JSON.parse(body).marginFloor === 0.9) {
      return send(400, {
        error: { type: 'invalid_request_error', code: 'margin_below_floor', param: 'marginFloor', message: 'below the margin floor', requestId: 'req_1' },
      });
    }
    const route = `${req.method} ${req.url}`;
    const answers = {
      'POST /v1/workflows': [201, workflow],
      'POST /v1/quotes': [200, quote],
      [`GET /v1/workflows/${workflow.id}`]: [200, workflow],
      'GET /v1/products/ticket-resolution': [200, product],
      [`GET /v1/events/${event.id}`]: [200, event],
    };
    const a = answers[route];
    if (!a) return send(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: route } });
    send(...a);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  client = new Settleflow({ apiKey: key, baseUrl: `http://127.0.0.1:${srv.address().port}`, maxRetries: 0 });
});

after(async () => {
  client?.close();
  await new Promise((r) => srv.close(r));
});

const base = { product: 'ticket-resolution', customerId: 'cus_1', payload: { ticketId: 'T-42' } };

test('create and quote send successCriteria and marginFloor as given, and nothing when not given', async () => {
  seen.length = 0;
  await client.workflows.create({ ...base, successCriteria: criteria, marginFloor: 0.25 });
  await client.quotes.create({ ...base, successCriteria: criteria, marginFloor: 0.1234 });
  await client.workflows.create(base);
  await client.quotes.create({ ...base, successCriteria: undefined, marginFloor: undefined });
  assert.deepEqual(
    seen.map((s) => [s.method, s.url, JSON.parse(s.body)]),
    [
      ['POST', '/v1/workflows', { ...base, successCriteria: criteria, marginFloor: 0.25 }],
      ['POST', '/v1/quotes', { ...base, successCriteria: criteria, marginFloor: 0.1234 }],
      ['POST', '/v1/workflows', base],
      ['POST', '/v1/quotes', base],
    ],
  );
  // The floor is a JSON number, exactly as given.
  assert.match(seen[0].body, /"marginFloor":0\.25[,}]/);
  assert.match(seen[1].body, /"marginFloor":0\.1234[,}]/);
});

test('a floor the quote does not keep: InvalidRequestError margin_below_floor, param marginFloor', async () => {
  const e = await client.quotes.create({ ...base, marginFloor: 0.9 }).then(() => assert.fail('no error'), (x) => x);
  assert.ok(e instanceof InvalidRequestError);
  assert.equal(e.status, 400);
  assert.equal(e.code, 'margin_below_floor');
  assert.equal(e.param, 'marginFloor');
});

test('the new fields of workflows, quotes, products and events come back as the server sent them', async () => {
  const wf = await client.workflows.create({ ...base, successCriteria: criteria });
  assert.deepEqual({ ...wf }, workflow);
  assert.equal(wf.pricing.model, 'success_fee');
  assert.equal(wf.marginFloor, 0.25);
  assert.deepEqual(wf.charged, { amount: 400, currency: 'usd' });
  assert.deepEqual(wf.cost.items.map((i) => [i.category, i.provider, i.units, i.amount]), [['model', 'openai', 12000, 240], ['human', 'reviewer', 1, 45]]);
  assert.equal(wf.outcome.success, true);
  assert.deepEqual(wf.outcome.trace.map((s) => s.node), ['', 'criteria[0]', 'criteria[1]']);
  assert.deepEqual({ ...(await client.workflows.fetch(workflow.id)) }, workflow);

  const q = await client.quotes.create(base);
  assert.deepEqual({ ...q }, quote);
  assert.deepEqual(q.pricing, { model: 'capped', markup: 0.2, minimumCharge: { amount: 50, currency: 'usd' } });
  assert.deepEqual(q.budget, { amount: 300, currency: 'usd' });
  assert.equal(q.marginFloor, 0.25);
  assert.deepEqual(q.successCriteria, criteria);

  const p = await client.products.fetch('ticket-resolution');
  assert.deepEqual(p.pricing, { model: 'hybrid', baseShare: 0.3 });
  assert.equal(p.marginFloor, 0.2);
  assert.deepEqual(p.successCriteria, criteria);

  const ev = await client.events.fetch(event.id);
  assert.equal(ev.type, 'workflow.margin_below_floor');
  assert.deepEqual(ev.data.cost, { amount: 360, currency: 'usd', items: [] });
  assert.equal(ev.data.outcome.success, false);
  assert.deepEqual(ev.data.pricing, { model: 'fixed' });
});
