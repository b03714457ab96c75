// Type-checked by `npm run typecheck` (tsc --noEmit -p .), never run: the
// declarations must accept what the README shows and refuse what is wrong.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import Default, {
  Settleflow,
  APIError,
  AuthenticationError,
  RateLimitError,
  SettleflowError,
  SignatureVerificationError,
  ConnectionError,
  TimeoutError,
  InvalidRequestError,
  ConflictError,
  PaymentError,
  InsufficientFundsError,
  webhooks,
  OPERATIONS,
  Worker,
  Permanent,
  TaskStoppedError,
  type Task,
  type TaskList,
  type Workflow,
  type WorkflowStatus,
  type Event,
  type Product,
  type SignatureVerificationReason,
  type WorkflowListParams,
  type EventType,
  type Refund,
  type RefundStatus,
  type Customer,
  type OwnerGrant,
  type OwnerChange,
  type PortalSession,
  type RefundListParams,
  type MarginReport,
  type MarginRow,
  type MarginReportParams,
  type Criterion,
  type Pricing,
  type PricingModel,
  type Cost,
  type CostItem,
  type CostCategory,
  type Outcome,
  type OutcomeStep,
} from 'settleflow';

const client = new Settleflow({
  apiKey: 'sk_test_…',
  baseUrl: 'https://127.0.0.1:8443',
  ca: readFileSync('settleflow-data/tls/cert.pem'),
  timeout: 10_000,
  maxRetries: 3,
});
new Default({ ca: 'PEM', apiKey: 'sk_test_x' });
new Settleflow({ apiKey: process.env.SETTLEFLOW_API_KEY, baseUrl: process.env.SETTLEFLOW_BASE_URL, timeout: undefined });
const several = new Settleflow({ apiKey: 'rk_test_x', baseUrl: ['https://10.0.0.1:8443', 'https://10.0.0.2:8443'] });
const firstUrl: string = several.baseUrl;
const allUrls: readonly string[] = several.baseUrls;
void firstUrl;
void allUrls;
await client.workflows.list({ status: undefined, limit: Number(process.env.LIMIT) || undefined });
new Settleflow({ ca: [readFileSync('a.pem'), 'PEM'] });
// @ts-expect-error timeout is milliseconds, a number
new Settleflow({ apiKey: 'k', timeout: '30s' });
// @ts-expect-error no such option
new Settleflow({ apiKey: 'k', api_key: 'k' });

interface Ticket {
  ticketId: string;
  subject: string;
  attachments: number;
}

async function flows(): Promise<void> {
  const wf = await client.workflows.create(
    { product: 'ticket-triage', customerId: 'cus_123', payload: { ticketId: 'T-42', subject: 'Refund', attachments: 1 } },
    { idempotencyKey: 'order-42' },
  );
  const id: string = wf.id;
  const amount: number = wf.quoted.amount;
  const currency: 'usd' = wf.quoted.currency;
  const achieved: number | null = wf.margin.achieved;
  const status: WorkflowStatus = wf.status;
  const subject: string = wf.payload.subject;
  const requestId: string | undefined = wf.lastResponse.requestId;
  const replayed: boolean = wf.lastResponse.idempotentReplayed;
  // @ts-expect-error the status is one of six names
  const bad: Workflow['status'] = 'Done';
  // @ts-expect-error customerId is required
  await client.workflows.create({ product: 'ticket-triage', payload: {} });
  // @ts-expect-error the wire is camelCase
  await client.workflows.create({ product: 'ticket-triage', customer_id: 'cus_1', payload: {} });

  const fetched = await client.workflows.fetch<Ticket>(id);
  const n: number = fetched.payload.attachments;
  if (fetched.settlement) {
    const tx: string = fetched.settlement.txHash;
    const block: number = fetched.settlement.blockNumber;
    void tx, block;
  }
  if (fetched.failure) console.log(fetched.failure.code, fetched.failure.message);
  const created: string = fetched.createdAt;
  const refundedSoFar: number = fetched.refunded.amount;

  const page = await client.workflows.list({ status: 'Settled', limit: 5, customerId: 'cus_123', product: 'ticket-triage' });
  const more: boolean = page.hasMore;
  const first: Workflow | undefined = page.data[0];
  await client.workflows.list({ startingAfter: 'wf_x' });
  await client.workflows.list({ endingBefore: 'wf_x' });
  await client.workflows.list();
  // @ts-expect-error not both cursors
  await client.workflows.list({ startingAfter: 'wf_x', endingBefore: 'wf_y' });
  // @ts-expect-error no such status
  await client.workflows.list({ status: 'settled' });
  const params: WorkflowListParams = { status: 'Failed' };

  for await (const w of client.workflows.listAutoPaging({ status: 'Settled', limit: 100 })) {
    const a: number | null = w.margin.achieved;
    void a;
  }
  const ten: Workflow[] = await client.workflows.listAutoPaging(params).toArray({ limit: 10 });

  const canceled = await client.workflows.cancel(id, { idempotencyKey: 'cancel-42', timeout: 5000 });
  const c: 'Canceled' | WorkflowStatus = canceled.status;

  const quote = await client.quotes.create({ product: 'ticket-triage', customerId: 'cus_123', payload: { ticketId: 'T-42' } });
  const q: number = quote.quoted.amount;
  // @ts-expect-error a quote has no achieved margin
  quote.margin.achieved;

  const products = await client.products.list();
  const p: Product | undefined = products.data[0];
  const one = await client.products.fetch('ticket-triage');
  const schema: object = one.payloadSchema;
  const example = one.example;

  const events = await client.events.list({ type: 'workflow.completed', workflowId: id, createdAfter: new Date(), limit: 10 });
  for await (const ev of client.events.listAutoPaging({ type: 'workflow.failed' })) {
    const ty: EventType = ev.type;
    // data depends on the type: narrow on it first.
    // @ts-expect-error a customer.funded event has no workflowId
    const anyWf: string = ev.data.workflowId;
    if (ev.type === 'workflow.failed' || ev.type === 'workflow.completed' || ev.type === 'workflow.canceled' || ev.type === 'workflow.margin_below_floor') {
      const q: number = ev.data.quoted.amount;
      void q;
    } else if (ev.type === 'refund.succeeded' || ev.type === 'refund.failed') {
      const r: Refund = ev.data.refund;
      const wfOfRefund: string = ev.data.workflowId;
      void r, wfOfRefund;
    } else if (ev.type === 'customer.owner_set') {
      const owner: string = ev.data.owner.address;
      const at: number = ev.data.owner.blockNumber;
      // @ts-expect-error an owner_set event has no deposit
      const noDeposit = ev.data.deposit;
      void owner, at, noDeposit;
    } else if (ev.type === 'customer.withdrawal_requested') {
      const amount: number = ev.data.withdrawal.amount.amount;
      const due: string | undefined = ev.data.withdrawal.availableAt;
      const pending: number = ev.data.balance.pendingWithdrawal;
      void amount, due, pending;
    } else if (ev.type === 'customer.owner_change_proposed' || ev.type === 'customer.owner_change_canceled') {
      const next: string = ev.data.ownerChange.address;
      const effective: string | undefined = ev.data.ownerChange.effectiveAt;
      void next, effective;
    } else {
      const funded: 'customer.funded' = ev.type;
      const dep: number = ev.data.deposit.amount.amount;
      const avail: number = ev.data.balance.available;
      const tx: string = ev.data.deposit.txHash;
      void funded, dep, avail, tx;
    }
    void ty, anyWf;
  }
  await client.events.list({ type: 'refund.succeeded' });
  await client.events.list({ type: 'customer.funded' });
  await client.events.list({ type: 'customer.owner_set' });
  await client.events.list({ type: 'customer.withdrawal_requested' });
  const link: PortalSession = await client.customers.createPortalSession('cus_1', { expiresIn: 600 });
  const linkUrl: string = link.url;
  await client.customers.createPortalSession('cus_1');
  // @ts-expect-error expiresIn is seconds, a number
  await client.customers.createPortalSession('cus_1', { expiresIn: '600' });
  void linkUrl;
  const ev: Event = await client.events.fetch('evt_x');
  // @ts-expect-error no such event type
  await client.events.list({ type: 'workflow.settled' });

  const doc = await client.openAPI();
  const version: string = doc.openapi;
  const ops: Record<string, string> = OPERATIONS;

  const ac = new AbortController();
  await client.products.list({ signal: ac.signal, maxRetries: 0 });
  // @ts-expect-error a GET takes no idempotency key
  await client.products.list({ idempotencyKey: 'k' });
  client.close();
  void [amount, currency, achieved, status, subject, requestId, replayed, bad, n, created, refundedSoFar, more, first, ten, c, q, p, schema, example, events, ev, version, ops];
}

async function outcomePricing(): Promise<void> {
  const criteria: Criterion = {
    type: 'all_of',
    criteria: [
      { type: 'exact', path: '/status', value: 'resolved' },
      { type: 'numeric_threshold', path: '/confidence', op: '>=', value: 0.8 },
      { type: 'not', criterion: { type: 'regex', path: '/summary', pattern: '^$' } },
      { type: 'json_schema', path: '/labels', schema: { type: 'array', minItems: 1 } },
    ],
  };
  const quote = await client.quotes.create({ product: 'ticket-triage', customerId: 'cus_123', payload: {}, successCriteria: criteria, marginFloor: 0.25 });
  const model: PricingModel = quote.pricing.model;
  const markup: number | undefined = quote.pricing.markup;
  const budget: number | undefined = quote.budget?.amount;
  const floor: number | null = quote.marginFloor;
  const inForce: Criterion | null = quote.successCriteria;
  // @ts-expect-error the floor is a ratio, not a string
  await client.quotes.create({ product: 'p', customerId: 'cus_1', payload: {}, marginFloor: '0.25' });
  // @ts-expect-error no such criterion type
  await client.workflows.create({ product: 'p', customerId: 'cus_1', payload: {}, successCriteria: { type: 'contains', path: '/x' } });
  // @ts-expect-error numeric_threshold needs an op
  await client.workflows.create({ product: 'p', customerId: 'cus_1', payload: {}, successCriteria: { type: 'numeric_threshold', path: '/x', value: 1 } });
  // @ts-expect-error an exact criterion compares with a value, not null
  await client.workflows.create({ product: 'p', customerId: 'cus_1', payload: {}, successCriteria: { type: 'exact', path: '/x', value: null } });

  const wf = await client.workflows.create({ product: 'ticket-triage', customerId: 'cus_123', payload: {}, successCriteria: criteria, marginFloor: 0.25 });
  const pricing: Pricing = wf.pricing;
  const charged: number | undefined = wf.charged?.amount;
  if (wf.cost) {
    const items: CostItem[] = wf.cost.items;
    const category: CostCategory | undefined = items[0]?.category;
    const total: number = wf.cost.amount;
    void category, total;
  }
  if (wf.outcome) {
    const success: boolean = wf.outcome.success;
    const steps: OutcomeStep[] = wf.outcome.trace;
    const reason: string | undefined = steps[0]?.reason;
    void success, reason;
  }
  const o: Outcome | null = wf.outcome;
  const c: Cost | null = wf.cost;
  // @ts-expect-error charged is null until the workflow ran
  const sure: number = wf.charged.amount;

  const product = await client.products.fetch('ticket-triage');
  const pm: PricingModel = product.pricing.model;
  const share: number | undefined = product.pricing.baseShare;
  const pfloor: number | null = product.marginFloor;

  for await (const ev of client.events.listAutoPaging({ type: 'workflow.margin_below_floor' })) {
    if (ev.type === 'workflow.margin_below_floor') {
      const spent: number | undefined = ev.data.cost?.amount;
      const ok: boolean | undefined = ev.data.outcome?.success;
      void spent, ok;
    }
  }
  void [model, markup, budget, floor, inForce, pricing, charged, o, c, sure, pm, share, pfloor];
}

async function money(): Promise<void> {
  const customer: Customer = await client.customers.fetch('cus_123');
  const available: number = customer.balance.available;
  const onChain: number = customer.balance.onChain;
  const reserved: number = customer.balance.reserved;
  const pending: number = customer.balance.pendingWithdrawal;
  const ref: string | undefined = customer.deposit?.customerRef;
  const contract: string | undefined = customer.deposit?.contract;
  // @ts-expect-error deposit is null where charges are not paid from balances
  const chain: number = customer.deposit.chainId;
  // @ts-expect-error a customer id is a string
  await client.customers.fetch(123);

  const grant: OwnerGrant = await client.customers.createOwnerGrant('cus_123', { address: '0x…', origin: 'https://portal.example' });
  const typed: string = JSON.stringify(grant.typedData);
  const change: OwnerChange = await client.customers.setOwner(
    'cus_123',
    { address: grant.address, nonce: grant.nonce, origin: grant.origin, deadline: grant.deadline, signature: '0x…' },
    { idempotencyKey: 'owner-1' },
  );
  const effective: 'now' | 'after_notice' = change.effective;
  // @ts-expect-error the signature is required
  await client.customers.setOwner('cus_123', { address: grant.address, nonce: grant.nonce, origin: grant.origin, deadline: grant.deadline });
  // @ts-expect-error the deadline is Unix seconds, a number
  await client.customers.createOwnerGrant('cus_123', { address: '0x…', deadline: '2026-12-01' });
  void [typed, effective];

  const funded = await client.testHelpers.fundCustomer('cus_123', 50_000, { timeout: 60_000, maxRetries: 0 });
  // @ts-expect-error not idempotent: the server stores no key for it
  await client.testHelpers.fundCustomer('cus_123', 1, { idempotencyKey: 'fund-1' });
  const after: number = funded.balance.available;
  // @ts-expect-error the amount is an integer of minor units, not a string
  await client.testHelpers.fundCustomer('cus_123', '500');
  // @ts-expect-error the amount is required
  await client.testHelpers.fundCustomer('cus_123');

  const partial = await client.refunds.create('wf_x', { amount: 100, reason: 'duplicate charge' }, { idempotencyKey: 'refund-1' });
  const rest = await client.refunds.create('wf_x');
  await client.refunds.create('wf_x', {});
  const rid: string = partial.id;
  const ramount: number = partial.amount;
  const rcur: 'usd' = partial.currency;
  const rstatus: RefundStatus = rest.status;
  const rreplayed: boolean = partial.lastResponse.idempotentReplayed;
  if (rest.settlement) {
    const tx: string = rest.settlement.txHash;
    void tx;
  }
  const rfail: string | undefined = rest.failure?.code;
  // @ts-expect-error the status is Pending, Succeeded or Failed
  const rbad: RefundStatus = 'Settled';
  // @ts-expect-error the wire is camelCase and amount a number
  await client.refunds.create('wf_x', { amount: '1' });
  // @ts-expect-error the idempotency key is an option, not a parameter
  await client.refunds.create('wf_x', { idempotencyKey: 'k' });
  const again: Refund = await client.refunds.fetch(rid);
  const page = await client.refunds.list({ workflowId: 'wf_x', status: 'Succeeded', limit: 10 });
  const rmore: boolean = page.hasMore;
  const url: '/v1/refunds' = page.url;
  const rparams: RefundListParams = { startingAfter: rid };
  for await (const r of client.refunds.listAutoPaging({ workflowId: 'wf_x' })) {
    const a: number = r.amount;
    void a;
  }
  const some: Refund[] = await client.refunds.listAutoPaging(rparams).toArray({ limit: 5 });
  // @ts-expect-error not both cursors
  await client.refunds.list({ startingAfter: 're_x', endingBefore: 're_y' });
  // @ts-expect-error no such refund status
  await client.refunds.list({ status: 'Pending ' });

  try {
    await client.workflows.create({ product: 'ticket-triage', customerId: 'cus_insufficient_funds', payload: {} });
  } catch (e) {
    if (e instanceof InsufficientFundsError) {
      const av: number | undefined = e.available;
      const need: number | undefined = e.amount;
      const cur: string | undefined = e.currency;
      const who: string | undefined = e.customerId;
      const st: number | undefined = e.status;
      void av, need, cur, who, st;
    } else if (e instanceof PaymentError) {
      const code: string | undefined = e.code;
      void code;
    } else if (e instanceof ConflictError && e.code === 'workflow_not_settled') {
      console.log(e.message);
    }
  }
  const pe: PaymentError = new InsufficientFundsError('m', { status: 402, available: 0, amount: 358, currency: 'usd', customerId: 'cus_x' });
  void [available, onChain, reserved, pending, ref, contract, chain, after, ramount, rcur, rstatus, rreplayed, rfail, rbad, again, rmore, url, some, pe];
}

async function margins(): Promise<void> {
  const rep: MarginReport = await client.margins.report({ groupBy: 'day', createdAfter: new Date('2026-11-01T00:00:00Z'), createdBefore: '2026-12-01T00:00:00Z', product: 'ticket-triage' });
  const byCustomer = await client.margins.report({ groupBy: 'customer' }, { timeout: 60_000 });
  const rid: string | undefined = byCustomer.lastResponse.requestId;
  const kind: 'product' | 'customer' | 'day' = rep.groupBy;
  const from: string | null = rep.createdAfter;
  for (const row of rep.data) {
    const m: number | null = row.margin;
    const kept: number = row.charged.amount - row.refunded.amount;
    const cost: number = row.cost.amount;
    void m, kept, cost;
  }
  const total: MarginRow = rep.total;
  const params: MarginReportParams = { groupBy: 'product' };
  // @ts-expect-error groupBy is required
  await client.margins.report({ product: 'ticket-triage' });
  // @ts-expect-error no such grouping
  await client.margins.report({ groupBy: 'week' });
  // @ts-expect-error the margin may be null (nothing kept)
  const sure: number = rep.total.margin;
  void [rid, kind, from, total, params, sure];
}

async function errors(): Promise<void> {
  try {
    await client.workflows.fetch('wf_x');
  } catch (e) {
    if (e instanceof RateLimitError) {
      const s: number | null = e.retryAfter;
      const h: string | string[] | undefined = e.headers['x-ratelimit-reset'];
      void s, h;
    } else if (e instanceof AuthenticationError) {
      const st: number | undefined = e.status;
      void st;
    } else if (e instanceof InvalidRequestError) {
      const param: string | undefined = e.param;
      void param;
    } else if (e instanceof APIError) {
      console.log(e.status, e.message, e.type, e.code, e.param, e.requestId);
    } else if (e instanceof TimeoutError || e instanceof ConnectionError) {
      console.log(e.message, e.cause);
    }
    if (e instanceof SettleflowError) console.log(e.name);
  }
}

// A plain node:http receiver.
const secret = process.env.SETTLEFLOW_WEBHOOK_SECRET ?? '';
http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    try {
      const event = webhooks.construct(raw, req.headers['service-signature'], secret);
      if (event.type === 'workflow.completed') {
        const wfId: string = event.data.workflowId;
        const margin: number | null = event.data.margin.achieved;
        void wfId, margin;
      }
      // createdAt may be absent (or null) in a webhook body: checked before use.
      // @ts-expect-error createdAt is not always a string
      const createdAt: string = event.createdAt;
      const when: Date | null = typeof event.createdAt === 'string' ? new Date(event.createdAt) : null;
      void createdAt, when;
      webhooks.verifyStandard(raw, req.headers, secret, { tolerance: 600, now: () => Date.now() / 1000 });
      webhooks.verifyStandard(raw.toString('utf8'), new Headers(), secret, { now: new Date() });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
    } catch (e) {
      if (e instanceof SignatureVerificationError) {
        const reason: SignatureVerificationReason = e.reason;
        void reason;
        res.writeHead(400).end();
        return;
      }
      throw e;
    }
  });
});
// @ts-expect-error a parsed body is not a raw body
webhooks.construct({ id: 'evt_x' }, 't=1,v1=00', secret);
const header: string = Settleflow.webhooks.generateTestHeader('{}', secret, { timestamp: 1795478400 });
const reasonConst: 'body_not_raw' = SignatureVerificationError.BODY_NOT_RAW;
void [flows, errors, money, margins, outcomePricing, header, reasonConst];

// Workers: the task endpoints and a Worker with typed payloads.
{
  const wc = new Settleflow({ apiKey: 'rk_test_x', baseUrl: 'https://127.0.0.1:8443' });
  const page: TaskList = await wc.tasks.claim({ products: ['ticket-triage'], max: 4, waitSeconds: 20 });
  const first: Task | undefined = page.data[0];
  if (first) {
    const b: number | null = first.budget ? first.budget.amount : null;
    void b;
    await wc.tasks.heartbeat(first.id, { costItems: [{ category: 'model', provider: 'openai', units: 1, amount: 2 }] });
    await wc.tasks.complete(first.id, { result: { queue: 'billing' } });
    await wc.tasks.fail(first.id, { message: 'boom', retry: true });
    // @ts-expect-error fail needs a message
    await wc.tasks.fail(first.id, {});
  }
  const worker = new Worker(wc, { concurrency: 8, heartbeatInterval: 10_000, drainTimeout: 30_000 });
  worker.handle<{ ticketId: string; subject?: string }>('ticket-triage', async (task, ctx) => {
    const id: string = task.payload.ticketId;
    if (!task.payload.subject) throw new Permanent('no subject');
    try {
      await ctx.reportSpend({ category: 'model', provider: 'openai', units: 1200, amount: 90 });
    } catch (e) {
      if (e instanceof TaskStoppedError) {
        const r: 'lease_lost' | 'margin_floor_exceeded' | 'worker_stopped' = e.reason;
        void r;
      }
      throw e;
    }
    const aborted: boolean = ctx.signal.aborted;
    void aborted;
    return { result: { ticketId: id, queue: 'billing' } };
  });
  // @ts-expect-error an unknown stop reason
  new TaskStoppedError('nope');
  await worker.run({ handleSignals: true });
  worker.stop();
}
