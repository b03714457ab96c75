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
  webhooks,
  OPERATIONS,
  type Workflow,
  type WorkflowStatus,
  type Event,
  type Product,
  type SignatureVerificationReason,
  type WorkflowListParams,
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
    const ty: 'workflow.completed' | 'workflow.failed' | 'workflow.canceled' = ev.type;
    void ty;
  }
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
  void [amount, currency, achieved, status, subject, requestId, replayed, bad, n, created, more, first, ten, c, q, p, schema, example, events, ev, version, ops];
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
void [flows, errors, header, reasonConst];
