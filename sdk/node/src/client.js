import { inspect } from 'node:util';
import { Transport } from './http.js';
import { VERSION } from './version.js';
import { webhooks } from './webhooks.js';

/** The reference server's address (`go run ./examples/server`); pass baseUrl for any other. */
export const DEFAULT_BASE_URL = 'https://127.0.0.1:8443';
export const DEFAULT_TIMEOUT = 30_000;
export const DEFAULT_MAX_RETRIES = 2;

function redactedKey(key) {
  const m = /^((?:sk|rk)_(?:test|live)_)/.exec(key);
  return key.length >= 16 ? (m ? m[1] : '') + '…' + key.slice(-4) : '[redacted]';
}

function checkId(what, id) {
  if (typeof id !== 'string' || id === '') throw new TypeError(`${what} must be a non-empty string`);
  // encodeURIComponent leaves "." alone; "." and ".." would be dot segments.
  return id === '.' || id === '..' ? id.replace(/\./g, '%2E') : encodeURIComponent(id);
}

function checkTimeout(name, v) {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new TypeError(`${name} must be a positive number of milliseconds`);
  return v;
}

function checkRetries(name, v) {
  if (!Number.isInteger(v) || v < 0) throw new TypeError(`${name} must be a non-negative integer`);
  return v;
}

function checkParams(name, v) {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new TypeError(`${name} must be an object`);
  return v;
}

function withResponse(res) {
  const data = res.data;
  if (data !== null && typeof data === 'object') {
    // Not enumerable: JSON.stringify, deepEqual and spreads see the API object only.
    Object.defineProperty(data, 'lastResponse', {
      value: Object.freeze({
        status: res.status,
        headers: res.headers,
        requestId: res.headers['request-id'],
        idempotentReplayed: res.headers['idempotent-replayed'] === 'true',
      }),
      enumerable: false,
      configurable: true,
    });
  }
  return data;
}

/**
 * The items of every page of a list, fetched one page at a time as they are
 * consumed. Newest first; with endingBefore, oldest first from the cursor on
 * (towards newer items).
 */
export class AutoPager {
  #list;
  #params;
  #gen;

  constructor(list, params) {
    this.#list = list;
    this.#params = params;
  }

  async *#items() {
    const params = { ...this.#params };
    const backwards = params.endingBefore !== undefined && params.endingBefore !== null;
    for (;;) {
      const page = await this.#list(params);
      const data = page.data ?? [];
      if (backwards) {
        for (let i = data.length - 1; i >= 0; i--) yield data[i];
      } else {
        yield* data;
      }
      if (!page.hasMore || data.length === 0) return;
      if (backwards) params.endingBefore = data[0].id;
      else params.startingAfter = data[data.length - 1].id;
    }
  }

  #iter() {
    this.#gen ??= this.#items();
    return this.#gen;
  }

  next() {
    return this.#iter().next();
  }

  return(value) {
    return this.#iter().return(value);
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** Collects up to `limit` items (required, to bound memory) into an array. */
  async toArray({ limit } = {}) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError('toArray needs { limit }: a positive integer');
    const out = [];
    for await (const item of this) {
      out.push(item);
      if (out.length >= limit) break;
    }
    return out;
  }
}

class Resource {
  #request;
  constructor(request) {
    this.#request = request;
  }
  _request(args, opts) {
    return this.#request(args, opts);
  }
}

export class Workflows extends Resource {
  /** POST /v1/workflows (createWorkflow). */
  async create(params, opts = {}) {
    checkParams('params', params);
    return this._request({ method: 'POST', path: '/v1/workflows', body: params }, opts);
  }

  /** GET /v1/workflows/{id} (fetchWorkflow). */
  async fetch(id, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/workflows/' + checkId('id', id) }, opts);
  }

  /** GET /v1/workflows (listWorkflows): one page, newest first. */
  async list(params, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/workflows', query: checkParams('params', params) }, opts);
  }

  /** Every workflow matching params, across pages, as an async iterator. */
  listAutoPaging(params, opts = {}) {
    const p = { ...checkParams('params', params) };
    return new AutoPager((q) => this.list(q, opts), p);
  }

  /** POST /v1/workflows/{id}/cancel (cancelWorkflow): a Pending workflow becomes Canceled. */
  async cancel(id, opts = {}) {
    return this._request({ method: 'POST', path: '/v1/workflows/' + checkId('id', id) + '/cancel' }, opts);
  }
}

export class Quotes extends Resource {
  /** POST /v1/quotes (createQuote): the price a create with these params would quote now; stores nothing. */
  async create(params, opts = {}) {
    checkParams('params', params);
    return this._request({ method: 'POST', path: '/v1/quotes', body: params }, opts);
  }
}

export class Products extends Resource {
  /** GET /v1/products (listProducts): the catalogue, each product with its payload's JSON Schema. */
  async list(opts = {}) {
    return this._request({ method: 'GET', path: '/v1/products' }, opts);
  }

  /** GET /v1/products/{name} (fetchProduct). */
  async fetch(name, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/products/' + checkId('name', name) }, opts);
  }
}

export class Events extends Resource {
  /** GET /v1/events (listEvents): one page, newest first. */
  async list(params, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/events', query: checkParams('params', params) }, opts);
  }

  /** Every event matching params, across pages, as an async iterator. */
  listAutoPaging(params, opts = {}) {
    const p = { ...checkParams('params', params) };
    return new AutoPager((q) => this.list(q, opts), p);
  }

  /** GET /v1/events/{id} (fetchEvent): the event, as its webhook deliveries carried it. */
  async fetch(id, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/events/' + checkId('id', id) }, opts);
  }
}

export class Customers extends Resource {
  /** GET /v1/customers/{customerId} (fetchCustomer): the customer's balance and where to deposit for it. */
  async fetch(customerId, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/customers/' + checkId('customerId', customerId) }, opts);
  }

  /**
   * POST /v1/customers/{customerId}/owner_grants (createOwnerGrant): an
   * unsigned grant of params.address as the owner of the customer's balance
   * (optional params.origin, params.deadline in Unix seconds), with the
   * EIP-712 typedData for the customer's wallet to sign
   * (eth_signTypedData_v4). Nothing is sent to the chain.
   */
  async createOwnerGrant(customerId, params, opts = {}) {
    const path = '/v1/customers/' + checkId('customerId', customerId) + '/owner_grants';
    return this._request({ method: 'POST', path, body: checkParams('params', params) }, opts);
  }

  /**
   * POST /v1/customers/{customerId}/owner (setOwner): sends the customer's
   * signed grant (params: address, nonce, origin, deadline as the grant was
   * answered, and the wallet's signature); the operator sets the owner on
   * chain. Answered 202 with the owner change: status 'sent', txHash,
   * effective 'now' or 'after_notice'.
   */
  async setOwner(customerId, params, opts = {}) {
    const path = '/v1/customers/' + checkId('customerId', customerId) + '/owner';
    const body = checkParams('params', params);
    if (Object.hasOwn(body, 'idempotencyKey')) {
      throw new TypeError('idempotencyKey is a request option, not an owner parameter: customers.setOwner(customerId, grant, { idempotencyKey })');
    }
    return this._request({ method: 'POST', path, body }, opts);
  }

  /**
   * POST /v1/customers/{customerId}/portal_sessions (createPortalSession): a
   * one-time link to the customer portal for the customer, in the key's
   * environment. Send the customer to its url before expiresAt; optional
   * params.expiresIn is the link's lifetime in whole seconds (60 to 86,400;
   * 15 minutes by default). The url is in this answer only: do not log it.
   */
  async createPortalSession(customerId, params = {}, opts = {}) {
    const path = '/v1/customers/' + checkId('customerId', customerId) + '/portal_sessions';
    const body = checkParams('params', params);
    if (body.expiresIn !== undefined && !Number.isSafeInteger(body.expiresIn)) {
      throw new TypeError('expiresIn must be a whole number of seconds (60 to 86400)');
    }
    return this._request({ method: 'POST', path, body }, opts);
  }
}

export class Refunds extends Resource {
  /**
   * POST /v1/workflows/{workflowId}/refunds (createRefund): gives back part
   * (params.amount, in minor units) or, without an amount, all that is left of
   * a Settled workflow's charge. The refund is Pending until the chain
   * confirms it.
   */
  async create(workflowId, params, opts = {}) {
    const path = '/v1/workflows/' + checkId('workflowId', workflowId) + '/refunds';
    const body = checkParams('params', params);
    if (Object.hasOwn(body, 'idempotencyKey')) {
      throw new TypeError('idempotencyKey is a request option, not a refund parameter: refunds.create(workflowId, { amount }, { idempotencyKey })');
    }
    return this._request({ method: 'POST', path, body }, opts);
  }

  /** GET /v1/refunds/{id} (fetchRefund). */
  async fetch(id, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/refunds/' + checkId('id', id) }, opts);
  }

  /** GET /v1/refunds (listRefunds): one page, newest first. */
  async list(params, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/refunds', query: checkParams('params', params) }, opts);
  }

  /** Every refund matching params, across pages, as an async iterator. */
  listAutoPaging(params, opts = {}) {
    const p = { ...checkParams('params', params) };
    return new AutoPager((q) => this.list(q, opts), p);
  }
}

export class Margins extends Resource {
  /**
   * GET /v1/margins (reportMargins): the margins report of the key's
   * environment, its Settled workflows grouped by params.groupBy ('product',
   * 'customer' or 'day', the UTC day of creation), optionally of one
   * params.product and created in [params.createdAfter, params.createdBefore)
   * (Dates or RFC 3339 strings). Each group and the total carry workflows,
   * charged, refunded, cost and margin: (charged − refunded − cost) /
   * (charged − refunded), null when nothing was kept.
   */
  async report(params, opts = {}) {
    return this._request({ method: 'GET', path: '/v1/margins', query: checkParams('params', params) }, opts);
  }
}

export class TestHelpers extends Resource {
  /**
   * POST /v1/test_helpers/customers/{customerId}/fund (fundTestCustomer): a
   * test key's faucet deposits amount (minor units) for the customer and
   * answers, once the deposit is applied, with the customer. Every call
   * deposits (the server does not store its Idempotency-Key), so it is not
   * retried unless options.maxRetries says so.
   */
  async fundCustomer(customerId, amount, opts = {}) {
    const path = '/v1/test_helpers/customers/' + checkId('customerId', customerId) + '/fund';
    if (!Number.isSafeInteger(amount)) throw new TypeError('amount must be an integer number of minor units (500 is 5.00 USD)');
    const o = checkParams('options', opts);
    return this._request({ method: 'POST', path, body: { amount }, resend: (o.maxRetries ?? 0) > 0 }, { ...o, maxRetries: o.maxRetries ?? 0 });
  }
}

/** The longest a claim may wait for a task (waitSeconds), as the API allows. */
export const MAX_CLAIM_WAIT_SECONDS = 30;

function checkCostItems(v) {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new TypeError('costItems must be an array of { category, provider, units, amount }');
  return v;
}

/**
 * The task endpoints a worker calls (docs/api.md §16), with a worker key
 * (rk_test_… or rk_live_…). Worker is built on them. A 409 is a
 * ConflictError whose code is lease_lost, task_ended or
 * margin_floor_exceeded; an unknown task (or another key's) a NotFoundError;
 * an ordinary key or a product the key may not serve a PermissionError. On
 * any 409 or 404 stop the task and report nothing more for it.
 */
export class Tasks extends Resource {
  #timeout;
  constructor(request, timeout) {
    super(request);
    this.#timeout = timeout;
  }

  /**
   * POST /v1/tasks/claim (claimTasks): up to params.max (1–100) tasks of
   * params.products, waiting up to params.waitSeconds (0–30) for a first one;
   * answered with a list whose data is empty when the wait ends with nothing.
   * Its timeout is the client's, or the wait plus 10 s if that is longer. Sent
   * once, never retried: tasks whose answer was lost come back after their lease.
   * Only a claim that could not be sent at all (the connection was refused:
   * nothing was written) goes on to the client's next base URL; one cut off
   * after it was sent rejects with a ConnectionError, and the caller claims
   * again later with a new claim (Worker does, after a pause).
   */
  async claim(params, opts = {}) {
    const body = checkParams('params', params);
    const o = checkParams('options', opts);
    const wait = body.waitSeconds ?? 0;
    const timeout = o.timeout ?? Math.max(this.#timeout(), (Number.isFinite(wait) ? wait : 0) * 1000 + 10_000);
    return this._request(
      { method: 'POST', path: '/v1/tasks/claim', body, resend: (o.maxRetries ?? 0) > 0 },
      { ...o, timeout, maxRetries: o.maxRetries ?? 0 },
    );
  }

  /**
   * POST /v1/tasks/{id}/heartbeat (heartbeatTask): extends the task's lease and
   * adds params.costItems to its spend. Past the budget it is a ConflictError
   * margin_floor_exceeded: the workflow failed, stop working. A heartbeat
   * without cost items only extends the lease, so it is retried as
   * configured, like complete; one carrying spend is not idempotent and is
   * sent once unless options.maxRetries says otherwise (only one that could
   * not be sent at all goes on to the next base URL).
   */
  async heartbeat(id, params, opts = {}) {
    const path = '/v1/tasks/' + checkId('id', id) + '/heartbeat';
    const body = { costItems: checkCostItems(checkParams('params', params).costItems) };
    const o = checkParams('options', opts);
    if (body.costItems.length === 0) return this._request({ method: 'POST', path, body }, o);
    return this._request({ method: 'POST', path, body, resend: (o.maxRetries ?? 0) > 0 }, { ...o, maxRetries: o.maxRetries ?? 0 });
  }

  /**
   * POST /v1/tasks/{id}/complete (completeTask): records params.result (a
   * JSON object, {} when absent) and params.costItems, the run's cost besides
   * what heartbeats reported. Idempotent per task: retried as configured
   * (maxRetries) on a connection error, a timeout, 429 and 5xx, after a random
   * backoff, through any of the client's base URLs; any other answer (409
   * lease_lost, task_ended, margin_floor_exceeded, a 4xx) is final and rejects
   * at once.
   */
  async complete(id, params, opts = {}) {
    const path = '/v1/tasks/' + checkId('id', id) + '/complete';
    const p = checkParams('params', params);
    const result = p.result ?? {};
    if (typeof result !== 'object' || Array.isArray(result)) throw new TypeError('result must be an object (a JSON object)');
    return this._request({ method: 'POST', path, body: { result, costItems: checkCostItems(p.costItems) } }, opts);
  }

  /**
   * POST /v1/tasks/{id}/fail (failTask): ends the task as failed with
   * params.message (1–1,024 bytes); with params.retry the workflow is tried
   * again after the engine's backoff, without it fails for good. Idempotent
   * per task: retried as complete is.
   */
  async fail(id, params, opts = {}) {
    const path = '/v1/tasks/' + checkId('id', id) + '/fail';
    const p = checkParams('params', params);
    if (typeof p.message !== 'string') throw new TypeError('message must be a string');
    return this._request({ method: 'POST', path, body: { message: p.message, retry: p.retry === true } }, opts);
  }
}

// checkBaseUrl parses one base URL: https, or http to a loopback address.
function checkBaseUrl(base) {
  if (typeof base !== 'string') throw new TypeError('baseUrl must be a string or an array of strings');
  let url;
  try {
    url = new URL(base);
  } catch {
    throw new TypeError('baseUrl is not a URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
    throw new TypeError('baseUrl must be an https:// URL without query, fragment or credentials');
  }
  if (url.protocol === 'http:' && !['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname)) {
    // The key would cross the network in clear text.
    throw new TypeError('baseUrl must be https:// (plain http:// is allowed for a loopback address only)');
  }
  return url;
}

export class Settleflow {
  /** The webhook helpers; they need no client. */
  static webhooks = webhooks;
  static VERSION = VERSION;

  #apiKey;
  #transport;

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('new Settleflow({ apiKey, ... }) takes an options object');
    const known = new Set(['apiKey', 'timeout', 'baseUrl', 'maxRetries', 'ca']);
    for (const k of Object.keys(options)) {
      if (!known.has(k)) throw new TypeError(`unknown option ${JSON.stringify(k)}; the options are ${[...known].join(', ')}`);
    }
    const apiKey = options.apiKey ?? process.env.SETTLEFLOW_API_KEY;
    if (typeof apiKey !== 'string' || apiKey === '') {
      throw new TypeError('apiKey is required (sk_test_… or sk_live_…), or set SETTLEFLOW_API_KEY; to verify webhooks only, use the webhooks export');
    }
    if (/[^\x21-\x7e]/.test(apiKey)) throw new TypeError('apiKey contains white space or a character an HTTP header cannot carry');
    let bases = options.baseUrl ?? process.env.SETTLEFLOW_BASE_URL ?? DEFAULT_BASE_URL;
    if (typeof bases === 'string' && options.baseUrl === undefined && bases.includes(',')) bases = bases.split(',').map((u) => u.trim());
    if (Array.isArray(bases) && bases.length === 0) throw new TypeError('baseUrl is an empty array: give at least one URL');
    const urls = (Array.isArray(bases) ? bases : [bases]).map(checkBaseUrl);
    const ca = options.ca;
    if (ca !== undefined) {
      const items = Array.isArray(ca) ? ca : [ca];
      for (const c of items) {
        if (typeof c === 'string') {
          if (!c.includes('-----BEGIN')) {
            throw new TypeError("ca takes the PEM text of a certificate (or a Buffer of it), not a path: ca: fs.readFileSync('settleflow-data/tls/cert.pem')");
          }
        } else if (!(c instanceof Uint8Array)) {
          throw new TypeError('ca takes PEM text, a Buffer, or an array of them');
        }
      }
    }
    this.#apiKey = apiKey;
    /** @readonly */
    this.baseUrl = urls[0].href.replace(/\/+$/, '');
    /** @readonly Every base URL, in the order given. */
    this.baseUrls = urls.map((u) => u.href.replace(/\/+$/, ''));
    this.timeout = checkTimeout('timeout', options.timeout ?? DEFAULT_TIMEOUT);
    this.maxRetries = checkRetries('maxRetries', options.maxRetries ?? DEFAULT_MAX_RETRIES);
    this.#transport = new Transport({
      apiKey,
      baseUrls: urls,
      ca,
      userAgent: `settleflow-node/${VERSION} node/${process.version}`,
    });
    const request = (args, opts) => this.#request(args, opts);
    this.workflows = new Workflows(request);
    this.quotes = new Quotes(request);
    this.products = new Products(request);
    this.events = new Events(request);
    this.customers = new Customers(request);
    this.refunds = new Refunds(request);
    this.margins = new Margins(request);
    this.testHelpers = new TestHelpers(request);
    this.tasks = new Tasks(request, () => this.timeout);
    this.webhooks = webhooks;
  }

  async #request(args, opts) {
    opts = checkParams('options', opts);
    for (const k of Object.keys(opts)) {
      if (!['idempotencyKey', 'timeout', 'maxRetries', 'signal'].includes(k)) {
        throw new TypeError(`unknown request option ${JSON.stringify(k)}; the options are idempotencyKey, timeout, maxRetries, signal`);
      }
    }
    if (opts.idempotencyKey !== undefined && (typeof opts.idempotencyKey !== 'string' || !/^[\x20-\x7e]+$/.test(opts.idempotencyKey))) {
      throw new TypeError('idempotencyKey must be a non-empty string of printable ASCII');
    }
    const res = await this.#transport.request({
      ...args,
      idempotencyKey: opts.idempotencyKey,
      timeout: checkTimeout('timeout', opts.timeout ?? this.timeout),
      maxRetries: checkRetries('maxRetries', opts.maxRetries ?? this.maxRetries),
      signal: opts.signal,
    });
    return withResponse(res);
  }

  /** GET /v1/openapi.json (openAPI): the served OpenAPI 3.1 document. */
  async openAPI(opts = {}) {
    return this.#request({ method: 'GET', path: '/v1/openapi.json' }, opts);
  }

  /** Closes the kept-alive connections. The client makes new ones if used again. */
  close() {
    this.#transport.close();
  }

  toJSON() {
    const out = { baseUrl: this.baseUrl, apiKey: redactedKey(this.#apiKey), timeout: this.timeout, maxRetries: this.maxRetries };
    if (this.baseUrls.length > 1) out.baseUrls = [...this.baseUrls];
    return out;
  }

  [inspect.custom](depth, options) {
    return 'Settleflow ' + inspect(this.toJSON(), { ...options, depth: 1 });
  }
}
