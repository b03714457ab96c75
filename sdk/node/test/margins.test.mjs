// margins.report against a scripted loopback server: the request it sends
// (the query camelCase, Dates as RFC 3339, no body, no Idempotency-Key), the
// report as sent, the argument checks. test/api.test.mjs runs it against the
// real server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Settleflow, OPERATIONS, InvalidRequestError } from '../src/index.js';

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
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const { status, body } = answer();
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req_fake' }).end(JSON.stringify(body));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  client = new Settleflow({ apiKey: key, baseUrl: `http://127.0.0.1:${srv.address().port}`, maxRetries: 0 });
});
after(async () => {
  client?.close();
  await new Promise((r) => srv.close(r));
});

const usd = (amount) => ({ amount, currency: 'usd' });
const REPORT = {
  object: 'margin_report',
  livemode: false,
  groupBy: 'day',
  createdAfter: '2026-11-01T00:00:00Z',
  createdBefore: null,
  product: 'ticket-triage',
  currency: 'usd',
  data: [
    { key: '2026-11-01', workflows: 2, charged: usd(572), refunded: usd(100), cost: usd(300), margin: 0.3644 },
    { key: '2026-11-02', workflows: 1, charged: usd(286), refunded: usd(286), cost: usd(150), margin: null },
  ],
  total: { key: '', workflows: 3, charged: usd(858), refunded: usd(386), cost: usd(450), margin: 0.0466 },
};

test('OPERATIONS maps reportMargins to margins.report, a function of the client', () => {
  assert.equal(OPERATIONS.reportMargins, 'margins.report');
  assert.equal(typeof client.margins.report, 'function');
});

test('margins.report: GET /v1/margins with the params as query, Dates as RFC 3339; the report as sent', async () => {
  seen.length = 0;
  answer = () => ({ status: 200, body: REPORT });
  const rep = await client.margins.report({
    groupBy: 'day',
    createdAfter: new Date('2026-11-01T00:00:00Z'),
    createdBefore: '2026-12-01T00:00:00Z',
    product: 'ticket-triage',
  });
  assert.deepEqual(rep, REPORT);
  assert.equal(rep.data[1].margin, null);
  assert.equal(rep.lastResponse.requestId, 'req_fake');
  await client.margins.report({ groupBy: 'customer', product: undefined });
  assert.deepEqual(seen.map((r) => [r.method, r.url, r.body]), [
    ['GET', '/v1/margins?groupBy=day&createdAfter=2026-11-01T00%3A00%3A00.000Z&createdBefore=2026-12-01T00%3A00%3A00Z&product=ticket-triage', ''],
    ['GET', '/v1/margins?groupBy=customer', ''],
  ]);
  assert.equal(seen[0].headers['idempotency-key'], undefined);
});

test('margins.report: params must be an object; a 400 is an InvalidRequestError naming the parameter', async () => {
  seen.length = 0;
  await assert.rejects(client.margins.report('day'), /params must be an object/);
  await assert.rejects(client.margins.report({ groupBy: 'day' }, { idempotencyKey: 5 }), TypeError);
  assert.equal(seen.length, 0, 'nothing sent for a bad argument');
  answer = () => ({
    status: 400,
    body: { error: { type: 'invalid_request_error', code: 'parameter_invalid', param: 'createdAfter', message: 'the report would hold more than 1000 groups', requestId: 'req_fake' } },
  });
  const e = await client.margins.report({ groupBy: 'day' }).then(() => assert.fail('no error'), (x) => x);
  assert.ok(e instanceof InvalidRequestError);
  assert.equal(e.param, 'createdAfter');
  assert.equal(e.code, 'parameter_invalid');
  assert.equal(seen.length, 1, 'a 400 is not retried');
});
