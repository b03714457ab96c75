// Customer portal links against the real reference server:
// customers.createPortalSession issues a one-time link that names its
// customer and environment, expires when asked, and opens the portal once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { Settleflow, InvalidRequestError } from '../src/index.js';
import { startServer } from '../test-support/server.mjs';

let server;
let client;

const customer = () => 'cus_' + randomUUID().replaceAll('-', '');
const rejection = (p) => p.then(() => assert.fail('no error'), (e) => e);

// request sends one HTTPS request to the server, trusting its certificate,
// following no redirect.
const request = (url, { method = 'GET', form } = {}) =>
  new Promise((resolve, reject) => {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const req = https.request(
      url,
      { method, ca: server.ca, headers: body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

before(async () => {
  server = await startServer();
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
});
after(async () => {
  client?.close();
  await server?.stop();
});

test('customers.createPortalSession: a one-time link to the customer portal', async () => {
  const cus = customer();
  const ps = await client.customers.createPortalSession(cus);
  assert.equal(ps.object, 'portal_session');
  assert.match(ps.id, /^ps_[0-9A-Z]{26}$/);
  assert.equal(ps.customerId, cus);
  assert.equal(ps.livemode, false);
  const ahead = (Date.parse(ps.expiresAt) - Date.now()) / 1000;
  assert.ok(ahead > 14 * 60 && ahead < 16 * 60, `expires ${ahead}s ahead, want 15 minutes`);
  const link = new URL(ps.url);
  assert.equal(link.origin, new URL(server.baseUrl).origin);
  const token = link.searchParams.get('token');
  assert.ok(token, 'the link carries its token');

  const short = await client.customers.createPortalSession(cus, { expiresIn: 120 });
  const shortAhead = (Date.parse(short.expiresAt) - Date.now()) / 1000;
  assert.ok(shortAhead > 100 && shortAhead < 140, `a 2-minute link expires ${shortAhead}s ahead`);
  assert.notEqual(short.url, ps.url);

  // The link opens the portal once.
  const page = await request(ps.url);
  assert.equal(page.status, 200);
  const signin = () => request(server.baseUrl + link.pathname, { method: 'POST', form: { token } });
  const first = await signin();
  assert.equal(first.status, 303, 'the first sign-in redirects to the portal');
  assert.ok(first.headers['set-cookie']?.length, 'with the portal cookie');
  const second = await signin();
  assert.ok(second.status >= 400, `the link used again answered ${second.status}`);
  assert.equal(second.headers['set-cookie'], undefined);
});

test('customers.createPortalSession: bad input is refused, naming it', async () => {
  for (const [cus, params, param] of [
    ['not a customer', {}, 'customerId'],
    [customer(), { expiresIn: 30 }, 'expiresIn'],
    [customer(), { expiresIn: 86_401 }, 'expiresIn'],
  ]) {
    const err = await rejection(client.customers.createPortalSession(cus, params));
    assert.ok(err instanceof InvalidRequestError, `${cus} ${JSON.stringify(params)}: ${err}`);
    assert.equal(err.param, param);
    assert.equal(err.status, 400);
  }
  // Checked before anything is sent.
  await assert.rejects(client.customers.createPortalSession(customer(), { expiresIn: 1.5 }), TypeError);
  await assert.rejects(client.customers.createPortalSession('', {}), TypeError);
});
