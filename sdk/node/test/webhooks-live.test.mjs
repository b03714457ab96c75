// A real delivery: the server posts a signed event to a receiver in this test,
// which verifies it with both schemes; a tampered copy is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Settleflow, webhooks, SignatureVerificationError } from '../src/index.js';
import { startServer } from '../test-support/server.mjs';

let server;
let receiver;
let client;
const deliveries = [];
let waiters = [];

before(async () => {
  receiver = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ url: req.url, headers: req.headers, rawBody: Buffer.concat(chunks) });
      for (const w of waiters) w();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  server = await startServer({ webhookUrls: [`http://127.0.0.1:${receiver.address().port}/hook`] });
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
});
after(async () => {
  client?.close();
  await server?.stop();
  await new Promise((r) => receiver.close(r));
});

function delivery(pred, ms = 20_000) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const d = deliveries.find(pred);
      if (d) {
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== check);
        resolve(d);
      }
    };
    const timer = setTimeout(() => reject(new Error(`no delivery within ${ms} ms; got ${deliveries.length}`)), ms);
    waiters.push(check);
    check();
  });
}

test('a real delivery verifies (service and Standard Webhooks schemes); a tampered one does not', async () => {
  const secret = server.secrets[0];
  const cus = 'cus_' + randomUUID().replaceAll('-', '');
  const wf = await client.workflows.create({
    product: 'ticket-triage',
    customerId: cus,
    payload: { ticketId: 'T-42', subject: 'Refund for invoice 7', attachments: 1 },
  });
  const d = await delivery((x) => x.rawBody.includes(wf.id));
  assert.equal(d.url, '/hook');
  assert.match(d.headers['service-signature'], /^t=\d+,v1=[0-9a-f]{64}$/);

  const event = webhooks.construct(d.rawBody, d.headers['service-signature'], secret);
  assert.match(event.id, /^evt_/);
  assert.equal(event.object, 'event');
  assert.equal(event.type, 'workflow.completed');
  assert.equal(event.data.workflowId, wf.id);
  assert.equal(event.data.status, 'Settled');
  assert.equal(event.data.quoted.amount, wf.quoted.amount);
  assert.equal(typeof event.data.margin.achieved, 'number');
  assert.ok(event.data.settlement.txHash);
  // The string form of the body verifies too, and the Standard Webhooks headers.
  assert.equal(webhooks.construct(d.rawBody.toString('utf8'), d.headers['service-signature'], secret).id, event.id);
  assert.equal(d.headers['webhook-id'], event.id);
  assert.deepEqual(webhooks.verifyStandard(d.rawBody, d.headers, secret), event);

  // The event reads back through the API as delivered.
  assert.deepEqual(await client.events.fetch(event.id), event);
  assert.deepEqual((await client.events.list({ workflowId: wf.id })).data, [event]);
  const settled = await client.workflows.fetch(wf.id);
  assert.equal(settled.status, 'Settled');
  assert.equal(settled.margin.achieved, event.data.margin.achieved);

  const tampered = Buffer.from(d.rawBody.toString('utf8').replace(`"amount":${wf.quoted.amount}`, `"amount":${wf.quoted.amount + 1}`));
  assert.notDeepEqual(tampered, d.rawBody);
  for (const verify of [
    () => webhooks.construct(tampered, d.headers['service-signature'], secret),
    () => webhooks.verifyStandard(tampered, d.headers, secret),
  ]) {
    assert.throws(verify, (e) => e instanceof SignatureVerificationError && e.reason === 'no_matching_signature');
  }
  // Another endpoint's secret, a missing header, a parsed body.
  assert.throws(() => webhooks.construct(d.rawBody, d.headers['service-signature'], 'whsec_' + Buffer.alloc(32, 7).toString('base64')), {
    reason: 'no_matching_signature',
  });
  assert.throws(() => webhooks.construct(d.rawBody, undefined, secret), { reason: 'missing_header' });
  assert.throws(() => webhooks.construct(JSON.parse(d.rawBody), d.headers['service-signature'], secret), {
    reason: 'body_not_raw',
    message: /parsed before verification/,
  });
});
