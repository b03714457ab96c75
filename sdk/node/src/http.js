// The transport: one HTTPS (or HTTP) request per attempt over a keep-alive
// agent, retries with backoff, errors mapped to classes. Not exported from the
// package; Settleflow (client.js) owns one.
import http from 'node:http';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  IdempotencyError,
  InsufficientFundsError,
  InvalidRequestError,
  NotFoundError,
  PaymentError,
  PermissionError,
  RateLimitError,
  TimeoutError,
} from './errors.js';

/** The n-th retry (n from 0) waits a uniformly random time in [0, min(MAX_BACKOFF, INITIAL_BACKOFF * 2^n)) ms: full jitter. */
export const INITIAL_BACKOFF = 500;
export const MAX_BACKOFF = 8000;
/** A server that asks to wait longer than this (ms) is not retried: the error is thrown at once. */
export const MAX_RETRY_AFTER = 60_000;
const MAX_RESPONSE_BYTES = 64 << 20;

// TLS failures that a retry cannot fix.
const PERMANENT_TLS = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS_CERT_ALTNAME_INVALID|ERR_SSL_/;
// How a kept-alive connection the server closed while idle fails.
const STALE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Full-jitter backoff delay in ms before retry number `attempt` (0-based). */
export function backoff(attempt, random = Math.random) {
  return random() * Math.min(MAX_BACKOFF, INITIAL_BACKOFF * 2 ** attempt);
}

/** Retry-After (seconds or an HTTP date) in ms from nowMs, or null. */
export function parseRetryAfter(value, nowMs = Date.now()) {
  if (value === undefined || value === null) return null;
  const v = String(value).trim();
  if (/^[0-9]+$/.test(v)) return Number(v) * 1000;
  const when = Date.parse(v);
  if (Number.isNaN(when) || !/[a-z]/i.test(v)) return null;
  return Math.max(0, when - nowMs);
}

/** X-RateLimit-Reset (Unix epoch seconds) as ms from nowMs, or null. */
export function parseRateLimitReset(value, nowMs = Date.now()) {
  if (value === undefined || value === null) return null;
  const v = String(value).trim();
  if (!/^[0-9]+$/.test(v)) return null;
  return Math.max(0, Number(v) * 1000 - nowMs);
}

/**
 * How long to wait (ms) before retrying a response with this status and
 * these headers, or null when it must not be retried: 429 and 5xx but 501
 * are retried; Retry-After is honoured (on a 429 without it, the time to
 * X-RateLimit-Reset), and a wait longer than MAX_RETRY_AFTER is not retried.
 */
export function retryDelay(status, headers, attempt, { nowMs = Date.now(), random = Math.random } = {}) {
  if (!(status === 429 || (status >= 500 && status !== 501))) return null;
  let wait = parseRetryAfter(headers['retry-after'], nowMs);
  if (wait === null && status === 429) wait = parseRateLimitReset(headers['x-ratelimit-reset'], nowMs);
  if (wait === null) return backoff(attempt, random);
  return wait > MAX_RETRY_AFTER ? null : wait;
}

function errorClass(status, type, code) {
  if (status === 401) return AuthenticationError;
  if (status === 402) return code === 'insufficient_funds' ? InsufficientFundsError : PaymentError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 409) return type === 'idempotency_error' ? IdempotencyError : ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 400 && status < 500 && (type === 'invalid_request_error' || type === undefined)) return InvalidRequestError;
  return APIError;
}

const str = (v) => (typeof v === 'string' ? v : undefined);

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  #apiKey;
  #agent;
  #mod;
  #base;
  #userAgent;
  #random;

  constructor({ apiKey, baseUrl, ca, userAgent, random }) {
    this.#apiKey = apiKey;
    this.#base = baseUrl;
    this.#mod = baseUrl.protocol === 'https:' ? https : http;
    this.#agent = new this.#mod.Agent(
      baseUrl.protocol === 'https:' ? { keepAlive: true, ca, minVersion: 'TLSv1.2' } : { keepAlive: true },
    );
    this.#userAgent = userAgent;
    this.#random = random ?? Math.random;
  }

  /** Replaces every occurrence of the API key in text. */
  redact(text) {
    const key = this.#apiKey;
    return typeof text === 'string' && key && text.includes(key) ? text.split(key).join('[redacted]') : text;
  }

  close() {
    this.#agent.destroy();
  }

  /**
   * Sends a request with retries and returns { status, headers, data }.
   * method, path (under the base URL), query (object), body (JSON value).
   */
  async request({ method, path, query, body, idempotencyKey, timeout, maxRetries, signal }) {
    const url = new URL(this.#base.href.replace(/\/+$/, '') + path);
    if (query) {
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null) continue;
        url.searchParams.append(k, v instanceof Date ? v.toISOString() : String(v));
      }
    }
    const headers = {
      Authorization: 'Bearer ' + this.#apiKey,
      'User-Agent': this.#userAgent,
      Accept: 'application/json',
    };
    let payload;
    if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body), 'utf8');
      headers['Content-Type'] = 'application/json';
    }
    if (method === 'POST') {
      // One key for every attempt: a retried create is a replay, never a second workflow.
      headers['Idempotency-Key'] = idempotencyKey ?? randomUUID();
      headers['Content-Length'] = String(payload ? payload.length : 0);
    } else if (idempotencyKey !== undefined) {
      headers['Idempotency-Key'] = idempotencyKey;
    }

    let freeRetry = true;
    for (let attempt = 0; ; attempt++) {
      let res;
      try {
        res = await this.#send(method, url, headers, payload, timeout, signal);
      } catch ({ failure, stale: reused, fatal }) {
        if (fatal || (signal?.aborted && failure === signal.reason)) throw failure;
        const { error, retryable, stale } = this.#connectionError(failure, url, reused);
        if (stale && freeRetry) {
          // A kept-alive connection the server had closed: not a failure of the request.
          freeRetry = false;
          attempt--;
          continue;
        }
        if (!retryable || attempt >= maxRetries) throw error;
        await sleep(backoff(attempt, this.#random), signal);
        continue;
      }
      if (res.status >= 200 && res.status < 300) {
        let data;
        try {
          data = res.body.length ? JSON.parse(res.body.toString('utf8')) : null;
        } catch {
          throw new APIError(`the response (HTTP ${res.status}) is not JSON`, {
            status: res.status,
            requestId: str(res.headers['request-id']),
            headers: this.#headers(res.headers),
          });
        }
        return { status: res.status, headers: this.#headers(res.headers), data };
      }
      const wait = retryDelay(res.status, res.headers, attempt, { random: this.#random });
      if (wait === null || attempt >= maxRetries) throw this.#apiError(res);
      await sleep(wait, signal);
    }
  }

  #headers(h) {
    const out = {};
    for (const [k, v] of Object.entries(h)) out[k] = Array.isArray(v) ? v.map((x) => this.redact(x)) : this.redact(v);
    return out;
  }

  #apiError(res) {
    const status = res.status;
    let body = null;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      body = null;
    }
    const e = body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : null;
    const type = e ? str(e.type) : undefined;
    const code = e ? str(e.code) : undefined;
    const param = e ? str(e.param) : undefined;
    const requestId = (e && str(e.requestId)) || str(res.headers['request-id']);
    let message = e ? str(e.message) : undefined;
    if (!message) {
      const snippet = res.body.subarray(0, 200).toString('utf8').trim();
      message = `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim() + (snippet ? ': ' + snippet : '');
      if (status >= 300 && status < 400 && res.headers.location) {
        message += ` (redirected to ${res.headers.location}; use the https:// base URL)`;
      }
    }
    const Cls = errorClass(status, type, code);
    const fields = {
      status,
      type: this.redact(type),
      code: this.redact(code),
      param: this.redact(param),
      requestId: this.redact(requestId),
      headers: this.#headers(res.headers),
    };
    if (Cls === InsufficientFundsError) {
      // The amounts of the 402 body, when they have the types the API documents.
      const int = (v) => (Number.isSafeInteger(v) ? v : undefined);
      fields.available = int(e.available);
      fields.amount = int(e.amount);
      fields.currency = this.redact(str(e.currency));
      fields.customerId = this.redact(str(e.customerId));
    }
    if (Cls === RateLimitError) {
      let wait = parseRetryAfter(res.headers['retry-after']);
      if (wait === null) wait = parseRateLimitReset(res.headers['x-ratelimit-reset']);
      fields.retryAfter = wait === null ? null : Math.ceil(wait / 1000);
    }
    return new Cls(this.redact(message), fields);
  }

  #connectionError(e, url, reused) {
    if (e instanceof TimeoutError) return { error: e, retryable: true, stale: false };
    const code = typeof e?.code === 'string' ? e.code : '';
    const where = url.origin;
    if (PERMANENT_TLS.test(code)) {
      const hint =
        code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN' || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'
          ? " (pass the server's certificate as the ca option: ca: fs.readFileSync('settleflow-data/tls/cert.pem'))"
          : '';
      return {
        error: new ConnectionError(this.redact(`TLS failure talking to ${where}: ${code}: ${e.message}${hint}`), { cause: e }),
        retryable: false,
        stale: false,
      };
    }
    return {
      error: new ConnectionError(this.redact(`could not reach ${where}: ${code ? code + ': ' : ''}${e?.message ?? e}`), { cause: e }),
      retryable: true,
      stale: reused && STALE.has(code),
    };
  }

  #send(method, url, headers, payload, timeout, signal) {
    return new Promise((resolve, reject) => {
      let done = false;
      let gotResponse = false;
      let timer;
      let onAbort;
      const finish = (err, value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (onAbort) signal?.removeEventListener('abort', onAbort);
        if (err) reject({ failure: err, stale: !gotResponse && req.reusedSocket === true });
        else resolve(value);
      };
      if (signal?.aborted) return reject({ failure: signal.reason, stale: false });
      let req;
      try {
        req = this.#mod.request(url, { method, headers, agent: this.#agent });
      } catch (err) {
        // Thrown before anything was sent (an invalid header value, say): not retried.
        return reject({ failure: err, fatal: true });
      }
      req.on('error', (err) => finish(err));
      timer = setTimeout(() => {
        const err = new TimeoutError(`the request to ${url.origin} timed out after ${timeout} ms`);
        finish(err);
        req.destroy(err);
      }, timeout);
      onAbort = () => {
        finish(signal.reason);
        req.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('response', (res) => {
        gotResponse = true;
        const chunks = [];
        let size = 0;
        res.on('data', (c) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            const err = new ConnectionError(`the response from ${url.origin} exceeds ${MAX_RESPONSE_BYTES} bytes`);
            finish(err);
            req.destroy(err);
            return;
          }
          chunks.push(c);
        });
        res.on('error', (err) => finish(err));
        res.on('close', () => {
          if (!res.complete) finish(Object.assign(new Error('the connection closed before the response was complete'), { code: 'ECONNRESET' }));
        });
        res.on('end', () => finish(null, { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.end(payload);
    });
  }
}
