// Without a server: backoff and Retry-After arithmetic, option checks, the
// package's shape (exports, declarations, no dependencies).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as sdk from '../src/index.js';
import { backoff, retryDelay, parseRetryAfter, parseRateLimitReset, INITIAL_BACKOFF, MAX_BACKOFF, MAX_RETRY_AFTER } from '../src/http.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const key = 'sk_test_' + 'Q'.repeat(36) + 'a1b2';

test('VERSION is package.json version; the package has no runtime dependencies, ESM exports with types, Node 20+', () => {
  assert.equal(sdk.VERSION, pkg.version);
  assert.equal(sdk.Settleflow.VERSION, pkg.version);
  assert.equal(pkg.name, 'settleflow');
  assert.equal(pkg.type, 'module');
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), []);
  assert.deepEqual(pkg.exports['.'], { types: './src/index.d.ts', import: './src/index.js' });
  assert.equal(pkg.engines.node, '>=20');
  assert.ok(pkg.files.includes('src'));
  assert.equal(sdk.default, sdk.Settleflow);
});

test('the declarations name every runtime export, and nothing that is not one', () => {
  const dts = readFileSync(new URL('../src/index.d.ts', import.meta.url), 'utf8');
  const declared = new Set([...dts.matchAll(/^export declare (?:class|const|function) (\w+)/gm)].map((m) => m[1]));
  const runtime = new Set(Object.keys(sdk).filter((k) => k !== 'default'));
  assert.deepEqual([...declared].sort(), [...runtime].sort());
  assert.match(dts, /^export default Settleflow;$/m);
});

test('full-jitter backoff: uniform in [0, min(8 s, 0.5 s × 2^n))', () => {
  for (let n = 0; n < 8; n++) {
    const cap = Math.min(MAX_BACKOFF, INITIAL_BACKOFF * 2 ** n);
    assert.equal(backoff(n, () => 0), 0);
    assert.equal(backoff(n, () => 0.5), cap / 2);
    assert.ok(backoff(n, () => 0.999999) < cap);
  }
  assert.equal(backoff(0, () => 0.999999) < 500, true);
  assert.equal(Math.round(backoff(10, () => 0.999999)), 8000);
  const samples = Array.from({ length: 2000 }, () => backoff(2));
  assert.ok(Math.min(...samples) < 200 && Math.max(...samples) > 1800, 'spread over the whole interval');
});

test('Retry-After: seconds or an HTTP date; X-RateLimit-Reset: epoch seconds', () => {
  const now = Date.parse('2026-11-23T03:00:00Z');
  assert.equal(parseRetryAfter('7', now), 7000);
  assert.equal(parseRetryAfter(' 0 ', now), 0);
  assert.equal(parseRetryAfter('Mon, 23 Nov 2026 03:00:05 GMT', now), 5000);
  assert.equal(parseRetryAfter('Mon, 23 Nov 2026 02:59:00 GMT', now), 0);
  assert.equal(parseRetryAfter('soon', now), null);
  assert.equal(parseRetryAfter('-1', now), null);
  assert.equal(parseRetryAfter(undefined, now), null);
  assert.equal(parseRateLimitReset(String(now / 1000 + 3), now), 3000);
  assert.equal(parseRateLimitReset(String(now / 1000 - 3), now), 0);
  assert.equal(parseRateLimitReset('x', now), null);
});

test('retryDelay: which answers are retried and after how long', () => {
  const now = Date.parse('2026-11-23T03:00:00Z');
  const o = { nowMs: now, random: () => 0.5 };
  assert.equal(retryDelay(429, { 'retry-after': '2' }, 0, o), 2000);
  assert.equal(retryDelay(429, { 'x-ratelimit-reset': String(now / 1000 + 4) }, 0, o), 4000, '429 without Retry-After: until the reset');
  assert.equal(retryDelay(429, { 'retry-after': '1', 'x-ratelimit-reset': String(now / 1000 + 4) }, 0, o), 1000, 'Retry-After wins');
  assert.equal(retryDelay(429, {}, 1, o), 500, 'neither header: backoff');
  assert.equal(retryDelay(503, { 'x-ratelimit-reset': String(now / 1000 + 4) }, 0, o), 250, 'the reset is a 429 matter');
  assert.equal(retryDelay(503, { 'retry-after': '3' }, 0, o), 3000);
  for (const s of [500, 502, 503, 504, 599]) assert.equal(retryDelay(s, {}, 0, o), 250, String(s));
  for (const s of [200, 301, 400, 401, 403, 404, 409, 413, 501]) assert.equal(retryDelay(s, {}, 0, o), null, String(s));
  assert.equal(retryDelay(429, { 'retry-after': String(MAX_RETRY_AFTER / 1000) }, 0, o), MAX_RETRY_AFTER);
  assert.equal(retryDelay(429, { 'retry-after': String(MAX_RETRY_AFTER / 1000 + 1) }, 0, o), null, 'too long a wait is not retried');
});

test('options are checked, with messages that never hold the key', () => {
  const { Settleflow } = sdk;
  const saved = process.env.SETTLEFLOW_API_KEY;
  delete process.env.SETTLEFLOW_API_KEY;
  try {
    assert.throws(() => new Settleflow(), (e) => e instanceof TypeError && /apiKey is required/.test(e.message) && /webhooks/.test(e.message));
    process.env.SETTLEFLOW_API_KEY = key;
    assert.equal(new Settleflow().toJSON().apiKey, 'sk_test_…a1b2');
  } finally {
    if (saved === undefined) delete process.env.SETTLEFLOW_API_KEY;
    else process.env.SETTLEFLOW_API_KEY = saved;
  }
  const bad = [
    [{ apiKey: key, timeout: 0 }, /timeout/],
    [{ apiKey: key, timeout: '30s' }, /timeout/],
    [{ apiKey: key, maxRetries: -1 }, /maxRetries/],
    [{ apiKey: key, maxRetries: 1.5 }, /maxRetries/],
    [{ apiKey: key, baseUrl: 'not a url' }, /baseUrl/],
    [{ apiKey: key, baseUrl: 'ftp://x' }, /baseUrl/],
    [{ apiKey: key, baseUrl: 'https://user:pw@x' }, /baseUrl/],
    [{ apiKey: key, baseUrl: 'http://api.example.com' }, /loopback address only/],
    [{ apiKey: key, baseUrl: [] }, /empty array/],
    [{ apiKey: key, baseUrl: ['https://127.0.0.1:8443', 8443] }, /array of strings/],
    [{ apiKey: key, baseUrl: ['https://127.0.0.1:8443', 'http://api.example.com'] }, /loopback address only/],
    [{ apiKey: key, ca: 'settleflow-data/tls/cert.pem' }, /not a path/],
    [{ apiKey: key, ca: 42 }, /ca/],
    [{ apiKey: key, api_key: key }, /unknown option "api_key"/],
    [{ apiKey: key + ' \n' }, /apiKey/],
  ];
  for (const [opts, re] of bad) {
    assert.throws(() => new Settleflow(opts), (e) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, re);
      assert.ok(!e.message.includes(key), 'key in ' + e.message);
      return true;
    });
  }
  const c = new Settleflow({ apiKey: key, baseUrl: 'https://example.test/prefix/', timeout: 5, maxRetries: 0 });
  assert.equal(c.baseUrl, 'https://example.test/prefix');
  assert.equal(c.timeout, 5);
  assert.equal(c.maxRetries, 0);
  assert.equal(new Settleflow({ apiKey: key, baseUrl: 'http://127.0.0.1:8080' }).baseUrl, 'http://127.0.0.1:8080');
  const d = new Settleflow({ apiKey: key });
  assert.equal(d.timeout, 30000);
  assert.equal(d.maxRetries, 2);
  assert.equal(d.baseUrl, 'https://127.0.0.1:8443');
});

test('call options are checked before anything is sent', async () => {
  const c = new sdk.Settleflow({ apiKey: key, baseUrl: 'https://127.0.0.1:1' });
  await assert.rejects(c.workflows.list({}, { timeout: -1 }), TypeError);
  await assert.rejects(c.workflows.list({}, { retries: 1 }), /unknown request option "retries"/);
  await assert.rejects(c.workflows.create({ product: 'p', customerId: 'cus_1', payload: {} }, { idempotencyKey: '' }), /idempotencyKey/);
  await assert.rejects(c.workflows.create({ product: 'p', customerId: 'cus_1', payload: {} }, { idempotencyKey: 'a\nb' }), /idempotencyKey/);
  await assert.rejects(c.workflows.fetch(undefined), TypeError);
  await assert.rejects(c.workflows.list('Settled'), TypeError);
  assert.throws(() => c.workflows.listAutoPaging(5), TypeError);
  await assert.rejects(c.workflows.listAutoPaging({}).toArray(), /limit/);
});

test('the error classes form one hierarchy', () => {
  const { SettleflowError, APIError } = sdk;
  for (const name of ['InvalidRequestError', 'NotFoundError', 'AuthenticationError', 'PermissionError', 'PaymentError', 'InsufficientFundsError', 'ConflictError', 'IdempotencyError', 'RateLimitError']) {
    const e = new sdk[name]('m', { status: 400 });
    assert.ok(e instanceof APIError && e instanceof SettleflowError && e instanceof Error, name);
    assert.equal(e.name, name);
  }
  assert.ok(new sdk.InsufficientFundsError('i') instanceof sdk.PaymentError);
  assert.ok(new sdk.TimeoutError('t') instanceof sdk.ConnectionError);
  assert.ok(new sdk.ConnectionError('c') instanceof SettleflowError);
  const s = new sdk.SignatureVerificationError('no_matching_signature');
  assert.ok(s instanceof SettleflowError);
  assert.equal(s.reason, 'no_matching_signature');
  assert.equal(sdk.SignatureVerificationError.BODY_NOT_RAW, 'body_not_raw');
  assert.equal(new sdk.RateLimitError('r', { retryAfter: 3 }).retryAfter, 3);
});

test('a redirect (plain HTTP to HTTPS) is not followed: an APIError that says where it points', async () => {
  const http = await import('node:http');
  let hits = 0;
  const srv = http.createServer((req, res) => {
    hits++;
    res.writeHead(308, { Location: 'https://127.0.0.1:8443' + req.url }).end();
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const c = new sdk.Settleflow({ apiKey: key, baseUrl: `http://127.0.0.1:${srv.address().port}` });
  const e = await c.workflows.list().then(() => assert.fail('no error'), (x) => x);
  assert.ok(e instanceof sdk.APIError);
  assert.equal(e.status, 308);
  assert.match(e.message, /redirected to https:\/\/127\.0\.0\.1:8443\/v1\/workflows; use the https:\/\/ base URL/);
  assert.equal(hits, 1);
  c.close();
  await new Promise((r) => srv.close(r));
});

test('several base URLs: taken in turn; one that refuses is passed over, at once, even with retries off', async () => {
  const http = await import('node:http');
  const hits = [0, 0];
  const srvs = [0, 1].map((i) =>
    http.createServer((req, res) => {
      hits[i]++;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"object":"list","url":"/v1/products","data":[],"hasMore":false}');
    }),
  );
  for (const s of srvs) await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const urls = srvs.map((s) => `http://127.0.0.1:${s.address().port}`);
  const c = new sdk.Settleflow({ apiKey: key, baseUrl: [urls[0], urls[1] + '/'], maxRetries: 0 });
  assert.equal(c.baseUrl, urls[0]);
  assert.deepEqual(c.baseUrls, urls);
  assert.deepEqual(c.toJSON().baseUrls, urls);
  for (let k = 0; k < 6; k++) await c.products.list();
  assert.deepEqual(hits, [3, 3]);
  c.close(); // the kept-alive connections, so that the first URL now refuses
  await new Promise((r) => srvs[0].close(r));
  for (let k = 0; k < 6; k++) await c.products.list();
  assert.deepEqual(hits, [3, 9]);
  c.close();
  await new Promise((r) => srvs[1].close(r));
  const old = process.env.SETTLEFLOW_BASE_URL;
  process.env.SETTLEFLOW_BASE_URL = 'https://sf-1:8443, https://sf-2:8443';
  try {
    assert.deepEqual(new sdk.Settleflow({ apiKey: key }).baseUrls, ['https://sf-1:8443', 'https://sf-2:8443']);
  } finally {
    if (old === undefined) delete process.env.SETTLEFLOW_BASE_URL;
    else process.env.SETTLEFLOW_BASE_URL = old;
  }
});
