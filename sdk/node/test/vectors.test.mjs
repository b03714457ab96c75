// Every vector of the shared testdata/webhooks.json: the service scheme through
// webhooks.construct, the standard scheme through webhooks.verifyStandard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { webhooks, Settleflow, SignatureVerificationError, SettleflowError } from '../src/index.js';

const file = JSON.parse(readFileSync(new URL('../../../testdata/webhooks.json', import.meta.url), 'utf8'));

test('the vector file has both schemes and every reason', () => {
  assert.equal(file.tolerance, 300);
  assert.equal(file.signatureHeader, 'service-signature');
  const schemes = new Set(file.vectors.map((v) => v.scheme));
  assert.deepEqual([...schemes].sort(), ['service', 'standard']);
  const reasons = new Set(file.vectors.filter((v) => !v.expect.ok).map((v) => v.expect.reason));
  for (const r of ['missing_header', 'malformed_header', 'no_v1_signature', 'timestamp_outside_tolerance', 'no_matching_signature', 'invalid_payload']) {
    assert.ok(reasons.has(r), r);
  }
  // A verified event of each kind of data: workflow, refund, customer.
  const types = new Set(file.vectors.filter((v) => v.expect.ok && v.expect.type).map((v) => v.expect.type));
  for (const t of ['workflow.completed', 'workflow.failed', 'refund.succeeded', 'refund.failed', 'customer.funded', 'customer.owner_set',
    'customer.withdrawal_requested']) assert.ok(types.has(t), t);
});

function check(v, body) {
  const opts = { tolerance: file.tolerance, now: v.now };
  const run = () =>
    v.scheme === 'service'
      ? webhooks.construct(body, v.headers[file.signatureHeader], v.secret, opts)
      : webhooks.verifyStandard(body, v.headers, v.secret, opts);
  if (v.expect.ok) {
    const ev = run();
    if (v.scheme === 'service') {
      const e = v.expect;
      assert.equal(ev.id, e.eventId);
      assert.equal(ev.type, e.type);
      assert.equal(ev.data.workflowId, e.workflowId);
      if (ev.type.startsWith('refund.')) {
        const r = ev.data.refund;
        assert.deepEqual([r.id, r.amount, r.status, r.workflowId, r.currency], [e.refundId, e.refundAmount, e.refundStatus, e.workflowId, 'usd']);
      } else if (ev.type === 'customer.funded') {
        assert.equal(ev.data.customerId, e.customerId);
        assert.equal(ev.data.deposit.amount.amount, e.depositAmount);
        assert.equal(ev.data.balance.available, e.balanceAvailable);
      } else if (ev.type === 'customer.owner_set') {
        assert.equal(ev.data.customerId, e.customerId);
        assert.equal(ev.data.owner.address, e.ownerAddress);
        assert.equal(ev.data.balance.available, e.balanceAvailable);
      } else if (ev.type === 'customer.withdrawal_requested') {
        assert.equal(ev.data.customerId, e.customerId);
        assert.equal(ev.data.withdrawal.amount.amount, e.withdrawalAmount);
        assert.equal(ev.data.balance.available, e.balanceAvailable);
      } else {
        assert.equal(ev.data.quoted.amount, e.quotedAmount);
        if ('marginAchieved' in e) assert.equal(Math.round(ev.data.margin.achieved * 10000), e.marginAchieved);
        else assert.equal(ev.data.margin.achieved, null);
      }
    } else {
      assert.equal(typeof ev.id, 'string');
    }
  } else {
    assert.throws(run, (e) => {
      assert.ok(e instanceof SignatureVerificationError && e instanceof SettleflowError, String(e));
      assert.equal(e.reason, v.expect.reason);
      assert.ok(e.message.includes(v.expect.reason));
      assert.ok(!e.message.includes(v.secret.slice(6)), 'the secret is not in the message');
      return true;
    });
  }
}

for (const v of file.vectors) {
  test(`vector: ${v.name} (${v.scheme})`, () => {
    check(v, v.body); // string
    check(v, Buffer.from(v.body, 'utf8')); // Buffer
    check(v, new Uint8Array(Buffer.from(v.body, 'utf8'))); // Uint8Array
  });
}

test('the clock may be a Date or a function; the client and the class expose the same helpers', () => {
  const v = file.vectors.find((x) => x.name === 'valid');
  const h = v.headers['service-signature'];
  assert.equal(webhooks.construct(v.body, h, v.secret, { now: new Date(v.now * 1000) }).id, v.expect.eventId);
  assert.equal(webhooks.construct(v.body, h, v.secret, { now: () => v.now + 300 }).id, v.expect.eventId);
  assert.throws(() => webhooks.construct(v.body, h, v.secret, { now: () => v.now + 301 }), { reason: 'timestamp_outside_tolerance' });
  assert.equal(webhooks.construct(v.body, h, v.secret, { now: v.now + 1000, tolerance: 1000 }).id, v.expect.eventId);
  // The real clock: a 2026 signature is far outside the default five minutes.
  assert.throws(() => webhooks.construct(v.body, h, v.secret), { reason: 'timestamp_outside_tolerance' });
  assert.equal(Settleflow.webhooks, webhooks);
  const client = new Settleflow({ apiKey: 'sk_test_' + 'k'.repeat(40) });
  assert.equal(client.webhooks.construct(v.body, h, v.secret, { now: v.now }).id, v.expect.eventId);
});

test('a parsed body is refused with a message saying it was parsed before verification', () => {
  const v = file.vectors.find((x) => x.name === 'valid');
  for (const parsed of [JSON.parse(v.body), null, undefined, 42]) {
    assert.throws(
      () => webhooks.construct(parsed, v.headers['service-signature'], v.secret, { now: v.now }),
      (e) => e instanceof SignatureVerificationError && e.reason === 'body_not_raw' && /parsed before verification/.test(e.message),
    );
  }
  assert.throws(() => webhooks.verifyStandard(JSON.parse(v.body), {}, v.secret), { reason: 'body_not_raw' });
});

test('a secret that is not whsec_ base64 is bad_secret; header arrays and Headers objects are read', () => {
  const v = file.vectors.find((x) => x.name === 'valid');
  const h = v.headers['service-signature'];
  assert.throws(() => webhooks.construct(v.body, h, 'whsec_not base64!', { now: v.now }), { reason: 'bad_secret' });
  assert.throws(() => webhooks.construct(v.body, h, undefined, { now: v.now }), { reason: 'bad_secret' });
  assert.equal(webhooks.construct(v.body, [h], v.secret, { now: v.now }).id, v.expect.eventId);
  const s = file.vectors.find((x) => x.name === 'standard: valid');
  assert.ok(webhooks.verifyStandard(s.body, new Headers(s.headers), s.secret, { now: s.now }));
  const upper = Object.fromEntries(Object.entries(s.headers).map(([k, x]) => [k.toUpperCase(), x]));
  assert.ok(webhooks.verifyStandard(s.body, upper, s.secret, { now: s.now }));
  assert.throws(() => webhooks.verifyStandard(s.body, undefined, s.secret, { now: s.now }), { reason: 'missing_header' });
});

test('generateTestHeader signs as the server does', () => {
  const v = file.vectors.find((x) => x.name === 'valid');
  assert.equal(webhooks.generateTestHeader(v.body, v.secret, { timestamp: v.now }), v.headers['service-signature']);
});

test('createdAt may be absent or null (as in Go and Python); present, it must be an RFC 3339 timestamp', () => {
  const v = file.vectors.find((x) => x.name === 'valid');
  const sign = (ev) => {
    const body = JSON.stringify(ev);
    return [body, webhooks.generateTestHeader(body, v.secret, { timestamp: v.now })];
  };
  const base = JSON.parse(v.body);
  for (const created of [undefined, null, '2026-11-24T00:00:00Z', '2026-11-24T01:30:00.123456789+01:30', '2016-12-31T23:59:60Z']) {
    const ev = { ...base };
    if (created === undefined) delete ev.createdAt;
    else ev.createdAt = created;
    const [body, header] = sign(ev);
    const got = webhooks.construct(body, header, v.secret, { now: v.now });
    assert.equal(got.id, v.expect.eventId);
    assert.equal(got.createdAt, created);
  }
  for (const created of ['soon', 1795478400, '2026-11-24', '2026-11-24 00:00:00Z', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', true, {}]) {
    const [body, header] = sign({ ...base, createdAt: created });
    assert.throws(
      () => webhooks.construct(body, header, v.secret, { now: v.now }),
      (e) => e instanceof SignatureVerificationError && e.reason === 'invalid_payload' && /createdAt/.test(e.message),
      String(created),
    );
  }
});
