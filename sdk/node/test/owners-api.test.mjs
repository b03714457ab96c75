// Balance owners against the real reference server: a customer's wallet
// signs the grant customers.createOwnerGrant prepares, customers.setOwner
// sends it, and the contract on the server's embedded chain records the
// owner. The client has no secp256k1: the wallet here is the Go helper
// internal/cmd/signgrant (eth_signTypedData_v4 with go-ethereum), run with
// a test key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Settleflow, InvalidRequestError, IdempotencyError } from '../src/index.js';
import { startServer, REPO_ROOT } from '../test-support/server.mjs';

const REQUIRE = process.env.SETTLEFLOW_TEST_FUNDS === 'require';
// Two test keys (never funded with anything real).
const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const KEY2 = '8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';

let server;
let client;
let owners = false;

const wallet = (args, input) =>
  execFileSync('go', ['run', './internal/cmd/signgrant', '-key', ...args], { cwd: REPO_ROOT, input, encoding: 'utf8' }).trim();
const addressOf = (key) => wallet([key, '-address']);
const sign = (key, grant) => wallet([key], JSON.stringify(grant.typedData));
const signed = (g, signature) => ({ address: g.address, nonce: g.nonce, origin: g.origin, deadline: g.deadline, signature });
const customer = () => 'cus_' + randomUUID().replaceAll('-', '');
const rejection = (p) => p.then(() => assert.fail('no error'), (e) => e);

before(async () => {
  server = await startServer();
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  const doc = await client.openAPI();
  const ops = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op?.operationId)));
  owners = ops.has('createOwnerGrant') && ops.has('setOwner') && (await client.customers.fetch(customer())).deposit !== null;
});
after(async () => {
  client?.close();
  await server?.stop();
});

test('customers.createOwnerGrant and setOwner: the wallet signs, the contract records the owner', async (t) => {
  if (!owners) {
    const why = 'the server does not set balance owners (no owner routes, or no customer funds)';
    if (REQUIRE) assert.fail(why);
    return t.skip(why);
  }
  const cus = customer();
  const addr = addressOf(KEY);
  // Funded before it has an owner (the faucet's deposit names none).
  await client.testHelpers.fundCustomer(cus, 10_000);

  const g = await client.customers.createOwnerGrant(cus, { address: addr, origin: 'https://portal.example' });
  assert.equal(g.object, 'owner_grant');
  assert.equal(g.customerId, cus);
  assert.equal(g.address, addr.toLowerCase());
  assert.match(g.nonce, /^0x[0-9a-f]{64}$/);
  assert.equal(g.typedData.primaryType, 'OwnerGrant');
  const ahead = g.deadline - Date.now() / 1000;
  assert.ok(ahead > 14 * 60 && ahead < 16 * 60, `deadline ${ahead} s ahead`);

  // Refused, nothing sent: another customer's grant; an unknown field.
  const other = await client.customers.createOwnerGrant(customer(), { address: addr });
  let e = await rejection(client.customers.setOwner(cus, signed(other, sign(KEY, other))));
  assert.ok(e instanceof InvalidRequestError, String(e));
  assert.equal(e.param, 'signature');
  e = await rejection(client.customers.setOwner(cus, { ...signed(g, sign(KEY, g)), customerRef: '0x01' }));
  assert.ok(e instanceof InvalidRequestError && e.code === 'parameter_unknown' && e.param === 'customerRef', String(e));

  const params = signed(g, sign(KEY, g));
  const idempotencyKey = 'owner-' + cus;
  const ch = await client.customers.setOwner(cus, params, { idempotencyKey });
  assert.equal(ch.object, 'owner_change');
  assert.equal(ch.status, 'sent');
  assert.equal(ch.effective, 'now');
  assert.equal(ch.address, addr.toLowerCase());
  assert.match(ch.txHash, /^0x[0-9a-f]{64}$/);
  const again = await client.customers.setOwner(cus, params, { idempotencyKey });
  assert.equal(again.txHash, ch.txHash);
  e = await rejection(client.customers.setOwner(cus, signed(other, sign(KEY, other)), { idempotencyKey }));
  assert.ok(e instanceof IdempotencyError, String(e));

  // A workflow settled after it: the operator's setOwner went first.
  const wf = await client.workflows.create({ product: 'ticket-triage', customerId: cus, payload: { ticketId: 'T-1', subject: 'owner', attachments: 1 } });
  const end = Date.now() + 60_000;
  while ((await client.workflows.fetch(wf.id)).status !== 'Settled') {
    assert.ok(Date.now() < end, 'the workflow did not settle');
    await new Promise((r) => setTimeout(r, 200));
  }
  // The contract records the owner: the same address again is refused.
  const g2 = await client.customers.createOwnerGrant(cus, { address: addr });
  e = await rejection(client.customers.setOwner(cus, signed(g2, sign(KEY, g2))));
  assert.ok(e instanceof InvalidRequestError, String(e));
  assert.equal(e.param, 'address');
  // Another address: a proposal, effective after the notice.
  const g3 = await client.customers.createOwnerGrant(cus, { address: addressOf(KEY2) });
  assert.equal((await client.customers.setOwner(cus, signed(g3, sign(KEY2, g3)))).effective, 'after_notice');
});
