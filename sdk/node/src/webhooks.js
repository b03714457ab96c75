// Webhook verification: the service scheme (`service-signature: t=<unix>,v1=<hex>`)
// and the Standard Webhooks scheme (webhook-id, webhook-timestamp,
// webhook-signature), as the Go webhook package verifies them, reason for
// reason.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SignatureVerificationError, REASONS } from './errors.js';

/** Deliveries signed longer ago (or further ahead) than this many seconds are refused. */
export const DEFAULT_TOLERANCE = 300;

/** The default name of the service scheme's signature header. */
export const SIGNATURE_HEADER = 'service-signature';

const MAX_HEADER_LEN = 8 << 10;
const MAX_SIGNATURES = 32;
const INT_RE = /^[+-]?[0-9]+$/;
const HEX_SHA256_RE = /^[0-9a-fA-F]{64}$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const INT64_LIMIT = 2n ** 63n;

const fail = (reason, detail) => new SignatureVerificationError(reason, detail);

function bodyBytes(rawBody) {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (Buffer.isBuffer(rawBody)) return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  if (rawBody instanceof ArrayBuffer) return Buffer.from(rawBody);
  const kind = rawBody === null ? 'null' : Array.isArray(rawBody) ? 'array' : typeof rawBody;
  throw fail(
    REASONS.BODY_NOT_RAW,
    `rawBody is ${kind === 'object' || kind === 'array' ? 'an ' : 'a '}${kind}, not the raw request body: ` +
      'the body was parsed before verification. Pass the bytes exactly as received ' +
      "(with Express: express.raw({ type: 'application/json' }) on the webhook route, then req.body); " +
      'a parsed and re-serialized body does not match its signature.',
  );
}

function secretKey(secret) {
  if (typeof secret !== 'string') throw fail(REASONS.BAD_SECRET, 'the secret must be a string (whsec_…)');
  const s = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  if (s === '' || !BASE64_RE.test(s)) throw fail(REASONS.BAD_SECRET, 'the secret is not whsec_ followed by base64');
  return Buffer.from(s, 'base64');
}

function parseInt64(v) {
  if (!INT_RE.test(v)) return null;
  const n = BigInt(v);
  if (n >= INT64_LIMIT || n < -INT64_LIMIT) return null;
  return Number(n);
}

function nowSeconds(now) {
  let v = typeof now === 'function' ? now() : now;
  if (v === undefined || v === null) v = Date.now() / 1000;
  else if (v instanceof Date) v = v.getTime() / 1000;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError('now must be Unix seconds, a Date, or a function returning one');
  return Math.floor(v);
}

function toleranceSeconds(tolerance) {
  if (tolerance === undefined || tolerance === null) return DEFAULT_TOLERANCE;
  if (typeof tolerance !== 'number' || !(tolerance > 0)) throw new TypeError('tolerance must be a positive number of seconds');
  return Math.floor(tolerance);
}

function checkTimestamp(t, opts) {
  const now = nowSeconds(opts.now);
  const tol = toleranceSeconds(opts.tolerance);
  if (t < now - tol || t > now + tol) {
    throw fail(REASONS.TIMESTAMP_OUTSIDE_TOLERANCE, `timestamp ${t}, now ${now}, tolerance ${tol}s`);
  }
}

function headerValue(v) {
  if (Array.isArray(v)) return v.length ? String(v[0]) : '';
  return v === undefined || v === null ? '' : String(v);
}

function anyMatch(sigs, want) {
  let ok = false;
  for (const s of sigs) {
    // Every signature is compared (no early exit) in constant time.
    if (s.length === want.length && timingSafeEqual(s, want)) ok = true;
  }
  return ok;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** Whether s is an RFC 3339 date-time with valid fields (what Go's time.RFC3339 and Python's client accept). */
function isRFC3339(s) {
  const m = RFC3339_RE.exec(s);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const offH = m[7] === undefined ? 0 : Number(m[7]);
  const offM = m[8] === undefined ? 0 : Number(m[8]);
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= days && hour <= 23 && minute <= 59 && second <= 60 && offH <= 23 && offM <= 59;
}

function parseEvent(body) {
  let ev;
  try {
    ev = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw fail(REASONS.INVALID_PAYLOAD, `the body is not JSON: ${e.message}`);
  }
  if (ev === null || typeof ev !== 'object' || Array.isArray(ev)) {
    throw fail(REASONS.INVALID_PAYLOAD, 'the body is not a JSON object');
  }
  if (typeof ev.id !== 'string' || ev.id === '' || typeof ev.type !== 'string' || ev.type === '') {
    throw fail(REASONS.INVALID_PAYLOAD, 'event without id or type');
  }
  // createdAt may be absent or null (as in the Go and Python libraries: the
  // signature already proved the body authentic, and id, not createdAt, is
  // what a receiver dedupes on); present, it must be an RFC 3339 timestamp.
  const created = ev.createdAt;
  if (created !== undefined && created !== null && (typeof created !== 'string' || !isRFC3339(created))) {
    throw fail(REASONS.INVALID_PAYLOAD, 'event.createdAt is not an RFC 3339 timestamp');
  }
  return ev;
}

/** Parses `t=<int>,v1=<hex>[,v1=<hex>…]`: unknown keys and v1 values that are not 64 hex digits are ignored; t must appear exactly once. */
function parseSignatureHeader(header) {
  if (header.length > MAX_HEADER_LEN) throw fail(REASONS.MALFORMED_HEADER, `header longer than ${MAX_HEADER_LEN} bytes`);
  let t = null;
  const sigs = [];
  for (const part of header.split(',')) {
    const p = part.trim();
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq);
    const v = p.slice(eq + 1);
    if (k === 't') {
      if (t !== null) throw fail(REASONS.MALFORMED_HEADER, 'more than one timestamp');
      t = parseInt64(v);
      if (t === null) throw fail(REASONS.MALFORMED_HEADER, 'timestamp is not an integer');
    } else if (k === 'v1') {
      if (sigs.length === MAX_SIGNATURES || !HEX_SHA256_RE.test(v)) continue;
      sigs.push(Buffer.from(v, 'hex'));
    }
  }
  if (t === null) throw fail(REASONS.MALFORMED_HEADER, 'no timestamp');
  if (sigs.length === 0) throw fail(REASONS.NO_V1_SIGNATURE, '');
  return { t, sigs };
}

/**
 * Verifies the service scheme's signature header of a delivery without
 * parsing the body. Throws SignatureVerificationError.
 */
export function verifySignature(rawBody, signatureHeader, secret, opts = {}) {
  const body = bodyBytes(rawBody);
  const header = headerValue(signatureHeader);
  if (header === '') throw fail(REASONS.MISSING_HEADER, `no ${SIGNATURE_HEADER} header`);
  const { t, sigs } = parseSignatureHeader(header);
  const key = secretKey(secret);
  checkTimestamp(t, opts);
  const want = createHmac('sha256', key).update(String(t) + '.').update(body).digest();
  if (!anyMatch(sigs, want)) throw fail(REASONS.NO_MATCHING_SIGNATURE, '');
}

/**
 * Verifies a delivery and returns its event. rawBody is the request body
 * exactly as received (a string, Buffer or Uint8Array), signatureHeader the
 * value of the `service-signature` header and secret the endpoint's whsec_
 * secret. Throws SignatureVerificationError.
 */
export function construct(rawBody, signatureHeader, secret, opts = {}) {
  verifySignature(rawBody, signatureHeader, secret, opts);
  return parseEvent(bodyBytes(rawBody));
}

function getHeader(headers, name) {
  if (headers === null || headers === undefined) return '';
  if (typeof headers.get === 'function') return headerValue(headers.get(name));
  if (Object.hasOwn(headers, name)) return headerValue(headers[name]);
  for (const k of Object.keys(headers)) {
    if (k.toLowerCase() === name) return headerValue(headers[k]);
  }
  return '';
}

/**
 * Verifies the Standard Webhooks headers of a delivery (webhook-id,
 * webhook-timestamp, webhook-signature) and returns the parsed event.
 * headers is Node's req.headers, a fetch Headers, or any object of header
 * names (any case) to values. Throws SignatureVerificationError.
 */
export function verifyStandard(rawBody, headers, secret, opts = {}) {
  const body = bodyBytes(rawBody);
  const id = getHeader(headers, 'webhook-id');
  const ts = getHeader(headers, 'webhook-timestamp');
  const sigHeader = getHeader(headers, 'webhook-signature');
  if (id === '' || ts === '' || sigHeader === '') {
    throw fail(REASONS.MISSING_HEADER, 'webhook-id, webhook-timestamp and webhook-signature are required');
  }
  if (sigHeader.length > MAX_HEADER_LEN || id.length > MAX_HEADER_LEN) throw fail(REASONS.MALFORMED_HEADER, 'header too long');
  const t = parseInt64(ts);
  if (t === null) throw fail(REASONS.MALFORMED_HEADER, 'webhook-timestamp is not an integer');
  const key = secretKey(secret);
  checkTimestamp(t, opts);
  const sigs = [];
  for (const f of sigHeader.split(/\s+/)) {
    if (sigs.length === MAX_SIGNATURES) break;
    const comma = f.indexOf(',');
    if (comma < 0 || f.slice(0, comma) !== 'v1') continue;
    const sig = f.slice(comma + 1);
    if (!BASE64_RE.test(sig)) continue;
    sigs.push(Buffer.from(sig, 'base64'));
  }
  if (sigs.length === 0) throw fail(REASONS.NO_V1_SIGNATURE, '');
  const want = createHmac('sha256', key).update(id + '.' + ts + '.').update(body).digest();
  if (!anyMatch(sigs, want)) throw fail(REASONS.NO_MATCHING_SIGNATURE, '');
  return parseEvent(body);
}

/**
 * Signs payload as the server does and returns the service-signature header
 * value, for testing your own receiver. timestamp is Unix seconds (default now).
 */
export function generateTestHeader(payload, secret, { timestamp } = {}) {
  const t = timestamp === undefined ? Math.floor(Date.now() / 1000) : nowSeconds(timestamp);
  const key = secretKey(secret);
  const mac = createHmac('sha256', key).update(String(t) + '.').update(bodyBytes(payload)).digest('hex');
  return `t=${t},v1=${mac}`;
}

/** The webhook helpers: also reachable as client.webhooks and Settleflow.webhooks. */
export const webhooks = Object.freeze({
  construct,
  verifySignature,
  verifyStandard,
  generateTestHeader,
  DEFAULT_TOLERANCE,
  SIGNATURE_HEADER,
});
