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
/** How long (ms) a base URL that gave a connection error is passed over, unless every one did. */
export const DOWN_FOR = 5_000;
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

/**
 * Several base URLs: each request goes to the next in turn (round-robin); one
 * that gave a connection error is passed over for DOWN_FOR ms (unless every
 * one is), and a request that could not even be sent (the connection was
 * refused: nothing of it was written) goes to the next URL at once, without
 * counting as a retry. A request sent with resend false (a claim, a heartbeat
 * carrying spend: not idempotent on the server) is never written a second
 * time, whatever happens to its answer.
 */
export class Transport {
  #apiKey;
  #endpoints;
  #turn = 0;
  #userAgent;
  #random;

  constructor({ apiKey, baseUrls, ca, userAgent, random }) {
    this.#apiKey = apiKey;
    this.#endpoints = baseUrls.map((base) => {
      const mod = base.protocol === 'https:' ? https : http;
      const agent = new mod.Agent(base.protocol === 'https:' ? { keepAlive: true, ca, minVersion: 'TLSv1.2' } : { keepAlive: true });
      return { base, mod, agent, downUntil: 0 };
    });
    this.#userAgent = userAgent;
    this.#random = random ?? Math.random;
  }

  // The index of the endpoint for the next attempt: the next in turn that is
  // neither down nor in skip, else the next not in skip.
  #pick(skip) {
    const n = this.#endpoints.length;
    const start = this.#turn;
    this.#turn = (this.#turn + 1) % n;
    const now = Date.now();
    let fallback = -1;
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (skip.has(i)) continue;
      if (this.#endpoints[i].downUntil <= now) return i;
      if (fallback < 0) fallback = i;
    }
    return fallback >= 0 ? fallback : start;
  }

  /** Replaces every occurrence of the API key in text. */
  redact(text) {
    const key = this.#apiKey;
    return typeof text === 'string' && key && text.includes(key) ? text.split(key).join('[redacted]') : text;
  }

  close() {
    for (const e of this.#endpoints) e.agent.destroy();
  }

  /**
   * Sends a request with retries and returns { status, headers, data }.
   * method, path (under the base URL), query (object), body (JSON value);
   * without resend, a request once written is never written again.
   */
  async request({ method, path, query, body, idempotencyKey, timeout, maxRetries, signal, resend = true }) {
    const urlOf = (endpoint) => {
      const url = new URL(endpoint.base.href.replace(/\/+$/, '') + path);
      if (query) {
        for (const [k, v] of Object.entries(query)) {
          if (v === undefined || v === null) continue;
          url.searchParams.append(k, v instanceof Date ? v.toISOString() : String(v));
        }
      }
      return url;
    };
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
    // The endpoints this attempt could not send the request to.
    const unsentTo = new Set();
    let i = -1;
    for (let attempt = 0; ; attempt++) {
      if (i < 0) i = this.#pick(unsentTo);
      const at = i;
      const endpoint = this.#endpoints[at];
      const url = urlOf(endpoint);
      let res;
      try {
        res = await this.#send(endpoint, method, url, headers, payload, timeout, signal);
      } catch ({ failure, stale: reused, fatal, unsent }) {
        if (fatal || (signal?.aborted && failure === signal.reason)) throw failure;
        const { error, retryable, stale } = this.#connectionError(failure, url, reused);
        if (stale && freeRetry && (resend || unsent)) {
          // A kept-alive connection the server had closed: not a failure of the request.
          freeRetry = false;
          attempt--;
          continue;
        }
        endpoint.downUntil = Date.now() + DOWN_FOR;
        i = -1;
        if (unsent && retryable) {
          // Nothing was written: the server cannot have acted on it. The next URL, at once.
          unsentTo.add(at);
          if (unsentTo.size < this.#endpoints.length) {
            attempt--;
            continue;
          }
        }
        if (!retryable || attempt >= maxRetries || !resend) throw error;
        unsentTo.clear();
        await sleep(backoff(attempt, this.#random), signal);
        continue;
      }
      i = -1;
      unsentTo.clear();
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
      if (wait === null || attempt >= maxRetries || !resend) throw this.#apiError(res);
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

  #send(endpoint, method, url, headers, payload, timeout, signal) {
    return new Promise((resolve, reject) => {
      let done = false;
      let gotResponse = false;
      // Whether the whole request was handed to the connection.
      let written = false;
      let timer;
      let onAbort;
      const finish = (err, value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (onAbort) signal?.removeEventListener('abort', onAbort);
        if (err) reject({ failure: err, stale: !gotResponse && req.reusedSocket === true, unsent: !written });
        else resolve(value);
      };
      if (signal?.aborted) return reject({ failure: signal.reason, stale: false });
      let req;
      try {
        req = endpoint.mod.request(url, { method, headers, agent: endpoint.agent });
      } catch (err) {
        // Thrown before anything was sent (an invalid header value, say): not retried.
        return reject({ failure: err, fatal: true });
      }
      req.on('error', (err) => finish(err));
      req.on('finish', () => (written = true));
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
