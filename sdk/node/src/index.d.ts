// Type declarations of the settleflow package, written by hand from the served
// OpenAPI document (httpapi/openapi.json). Every name on the wire is camelCase
// and the objects are returned as the API sends them.

// ---------------------------------------------------------------- JSON

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object, such as a product's payload or a workflow's result. */
export type JsonObject = { [key: string]: JsonValue };

// ---------------------------------------------------------------- resources

/** The states of a workflow: Pending → Running → Settling → Settled, or Failed, or (from Pending) Canceled. */
export type WorkflowStatus = 'Pending' | 'Running' | 'Settling' | 'Settled' | 'Failed' | 'Canceled';

export type Currency = 'usd';

/** An amount of money in minor units: 1250 is 12.50 USD. */
export interface Money {
  amount: number;
  currency: Currency;
}

/** The on-chain record of a workflow's charge. */
export interface Settlement {
  chainId: number;
  network: string;
  txHash: string;
  blockNumber: number;
  confirmations: number;
  /** The workflow's share of its batch transaction's gas; absent when not known. */
  gasUsed?: number;
  /** The same share of the fee, in the chain's native unit (ETH), as a decimal string. */
  fee?: string;
}

/**
 * Why a workflow failed: code is execution_failed, payload_invalid,
 * margin_floor_exceeded (the product's reported spend passed the budget its
 * margin floor leaves: it was stopped and nothing was charged), a settlement
 * failure code, …
 */
export interface Failure {
  code: string;
  message: string;
}

// ---------------------------------------------------------------- outcome pricing

/**
 * How a workflow's charge follows from its quote: fixed charges the quote;
 * capped charges cost plus markup, at least minimumCharge, at most the quote;
 * success_fee charges the quote when the result meets the success criteria
 * and nothing otherwise; hybrid charges baseShare of the quote always and the
 * rest on success.
 */
export type PricingModel = 'fixed' | 'capped' | 'success_fee' | 'hybrid';

/** A pricing model as the wire shows it, on every product, quote and workflow. */
export interface Pricing {
  model: PricingModel;
  /** capped: the markup on cost, a ratio (0.2 is cost + 20 %). */
  markup?: number;
  /** capped: the least charged. */
  minimumCharge?: Money;
  /** hybrid: the part of the quote charged whatever the outcome, a ratio (0.3 is 30 %). */
  baseShare?: number;
}

/** A JSON value a criterion can compare with (not null). */
export type CriterionValue = string | number | boolean | JsonValue[] | { [key: string]: JsonValue };

/** The comparisons of a numeric_threshold criterion: `value op threshold`, exact in decimal. */
export type ThresholdOp = '<' | '<=' | '>' | '>=' | '==' | '!=';

/**
 * A success criteria tree, judged against a workflow's result. Leaves test the
 * value at path, an RFC 6901 JSON Pointer ('' is the whole result, '/labels/0'
 * the first label); a leaf whose path finds nothing does not match. At most 64
 * nodes and 8 levels.
 */
export type Criterion =
  /** Every child matches (all_of) or at least one does (any_of); at least one child. */
  | { type: 'all_of' | 'any_of'; criteria: Criterion[] }
  /** The child does not match. */
  | { type: 'not'; criterion: Criterion }
  /** The value is present and equal as JSON (numbers by value: 1 equals 1.0). */
  | { type: 'exact'; path: string; value: CriterionValue }
  /** The value is a number and `value op threshold` holds. */
  | { type: 'numeric_threshold'; path: string; op: ThresholdOp; value: number }
  /** The value is a string matched by pattern (RE2 syntax, unanchored unless it anchors itself; at most 1,000 bytes). */
  | { type: 'regex'; path: string; pattern: string }
  /** The value is valid against schema (JSON Schema 2020-12, no references to other documents). */
  | { type: 'json_schema'; path: string; schema: JsonObject | boolean };

/** The layer a cost item belongs to. */
export type CostCategory = 'model' | 'tools' | 'compute' | 'human' | 'other';

/** One line of a workflow's cost: what was spent in one category at one provider. */
export interface CostItem {
  category: CostCategory;
  /** Who was paid ('openai', 'ocr-service', 'reviewer'); may be empty. */
  provider: string;
  /** How much was used, in the provider's unit (tokens, calls, milliseconds); informational. */
  units: number;
  /** What it cost, in minor units of the cost's currency. */
  amount: number;
}

/** What a workflow's execution cost: the sum of its items (none when the product reported a total only). */
export interface Cost {
  amount: number;
  currency: Currency;
  items: CostItem[];
}

/** One criterion's verdict, in tree order (a combinator before its children). */
export interface OutcomeStep {
  /** The criterion's place in the tree: '' for the root, 'criteria[1]', 'criteria[0].criterion'. */
  node: string;
  /** The JSON Pointer a leaf tested ('' for the whole result and for combinators). */
  path: string;
  /** The criterion's type. */
  type: Criterion['type'];
  matched: boolean;
  /** Why, for people. */
  reason: string;
}

/** The verdict of a workflow's success criteria on its result, with every criterion's step. */
export interface Outcome {
  success: boolean;
  trace: OutcomeStep[];
}

/** Margins are ratios with at most four decimals (0.3 is 30 %). */
export interface Margin {
  target: number;
  /** (quoted − actual cost) / quoted; null until execution reported its cost; may be negative. */
  achieved: number | null;
}

/** A workflow: a product run on behalf of a customer, quoted at creation, settled on chain. */
export interface Workflow<P extends object = JsonObject, R extends object = JsonObject> {
  /** wf_ followed by 26 characters. */
  id: string;
  object: 'workflow';
  /** true for a live key's workflow, false for a test key's. */
  livemode: boolean;
  product: string;
  /** cus_…, as given at creation. */
  customerId: string;
  /** The product's input, as given at creation (compacted). */
  payload: P;
  /** The price quoted at creation: the most that can be charged, and what the customer's balance reserves. */
  quoted: Money;
  /** The pricing model the workflow was created under. */
  pricing: Pricing;
  /** The criteria its outcome is judged by (the request's, else the product's), or null. */
  successCriteria: Criterion | null;
  /** The margin floor in force (the product's, or the request's if higher), a ratio, or null. */
  marginFloor: number | null;
  margin: Margin;
  status: WorkflowStatus;
  /** The product's output once it ran, else null. */
  result: R | null;
  /** Set once the charge settled on chain, else null. */
  settlement: Settlement | null;
  /** Set when status is Failed, else null. */
  failure: Failure | null;
  /**
   * What the workflow is charged, decided once it ran: at most quoted, 0 for an
   * outcome that earns nothing; null before, and when it failed.
   */
  charged: Money | null;
  /** What the execution cost, with its breakdown; null until executed. */
  cost: Cost | null;
  /** The verdict of successCriteria on the result; null without criteria or before it ran. */
  outcome: Outcome | null;
  /** The sum of the workflow's Succeeded refunds (amount 0 when none). */
  refunded: Money;
  /** RFC 3339 timestamps. */
  createdAt: string;
  updatedAt: string;
}

/** A page of a list, newest first. */
export interface List<T, U extends string = string> {
  object: 'list';
  url: U;
  data: T[];
  /** Whether another page follows (in the direction of the cursor). */
  hasMore: boolean;
}

export type WorkflowList<P extends object = JsonObject, R extends object = JsonObject> = List<Workflow<P, R>, '/v1/workflows'>;

/** The states of a refund: Pending until the chain confirms it (Succeeded) or refuses it for good (Failed: nothing was given back). */
export type RefundStatus = 'Pending' | 'Succeeded' | 'Failed';

/** A refund of part or all of a Settled workflow's charge, back to its customer's balance. */
export interface Refund {
  /** re_ followed by 26 characters. */
  id: string;
  object: 'refund';
  livemode: boolean;
  /** The refunded workflow (wf_…). */
  workflowId: string;
  /** What is given back, in minor units of currency (at least 1). */
  amount: number;
  currency: Currency;
  /** As given at creation; empty if none. */
  reason: string;
  status: RefundStatus;
  /** The refund's transaction once there is one (it may be set while Pending), else null. */
  settlement: Settlement | null;
  /** Set when status is Failed, else null. */
  failure: Failure | null;
  /** RFC 3339 timestamps. */
  createdAt: string;
  updatedAt: string;
}

export type RefundList = List<Refund, '/v1/refunds'>;

/** A task's status: claimed while a worker holds it, then completed or failed. */
export type TaskStatus = 'claimed' | 'completed' | 'failed';

/** One attempt of a remote product's execution, leased to the worker that claimed it (docs/api.md §16). */
export interface Task<P extends object = JsonObject> {
  /** task_…, new for every attempt of the workflow. */
  id: string;
  object: 'task';
  livemode: boolean;
  workflowId: string;
  product: string;
  /** The workflow's payload, as priced. */
  payload: P;
  customerId: string;
  /** Which attempt of the workflow this is, from 1. */
  attempt: number;
  status: TaskStatus;
  /** RFC 3339, UTC: when the task is taken back unless a heartbeat extends it. */
  leaseExpiresAt: string;
  /** The most the task may spend and keep the margin floor at the price quoted; null when no floor applies. */
  budget: Money | null;
  /** What the task's heartbeats reported spending so far. */
  spent: Money;
}

export type TaskList = List<Task, '/v1/tasks/claim'>;

/** What a margins report groups Settled workflows by; day is the UTC day a workflow was created. */
export type MarginGroupBy = 'product' | 'customer' | 'day';

/** One group of a margins report (or its total): every amount in minor units of the report's currency. */
export interface MarginRow {
  /** The product's name, the customer's id or the day (YYYY-MM-DD, UTC); '' in the total. */
  key: string;
  /** How many Settled workflows the group counts. */
  workflows: number;
  charged: Money;
  /** The sum of the workflows' Succeeded refunds. */
  refunded: Money;
  /** Their actual cost. */
  cost: Money;
  /**
   * (charged − refunded − cost) / (charged − refunded), rounded toward zero to
   * a basis point (four decimals); may be negative; null when nothing was kept.
   */
  margin: number | null;
}

/** GET /v1/margins: an environment's Settled workflows' charges, refunds, costs and margin, by group and in total. */
export interface MarginReport {
  object: 'margin_report';
  livemode: boolean;
  groupBy: MarginGroupBy;
  /** The range asked for (RFC 3339, UTC); null when unbounded. */
  createdAfter: string | null;
  createdBefore: string | null;
  /** The one product counted; '' for all. */
  product: string;
  currency: Currency;
  /** The groups, by key; at most 1000. */
  data: MarginRow[];
  /** Every group summed, key ''. */
  total: MarginRow;
}

/**
 * A customer's funds, in minor units: available = onChain − reserved −
 * pendingWithdrawal is what new workflows may reserve (negative when charges
 * admitted before a withdrawal request exceed what it left).
 */
export interface Balance {
  /** Deposits less withdrawals less charges plus refunds, as confirmed on chain. */
  onChain: number;
  /** The quotes of the customer's workflows not yet Settled, Failed or Canceled. */
  reserved: number;
  /** Balance under withdrawal notice. */
  pendingWithdrawal: number;
  available: number;
  currency: Currency;
}

/** Where to deposit for a customer: the settlement contract and the customer's key in it. */
export interface DepositInfo {
  chainId: number;
  network: string;
  /** The settlement contract's address (0x…). */
  contract: string;
  /** The token deposited (0x…). */
  token: string;
  /** The customer's key in the contract: 0x and 64 hex digits. */
  customerRef: string;
}

/** A customer's prepaid funds in the key's environment. */
export interface Customer {
  /** cus_…, as given at workflow creation. */
  id: string;
  object: 'customer';
  livemode: boolean;
  balance: Balance;
  /** Where to deposit; null where charges are not paid from customer balances. */
  deposit: DepositInfo | null;
  /** The address (0x…) that owns the balance in the contract and alone can withdraw; null while it has none. */
  owner: string | null;
  /** The change of owner proposed on chain: the address takes the balance at effectiveAt unless the current owner cancels first; null while none. */
  ownerChange?: OwnerChangeProposal | null | undefined;
}

/** A change of a balance's owner proposed on chain. */
export interface OwnerChangeProposal {
  /** The proposed owner, checksummed hex. */
  address: string;
  /** RFC 3339: when it takes effect. */
  effectiveAt: string;
}

/** customers.createOwnerGrant's body. */
export interface OwnerGrantCreateParams {
  /** The 0x address that will own the balance: the customer's wallet, which signs. */
  address: string;
  /** Shown by the wallet: where the customer signs (https://…); the server's default otherwise. */
  origin?: string | undefined;
  /** Unix seconds, at most 24 hours ahead; 15 minutes ahead by default. */
  deadline?: number | undefined;
}

/** An unsigned owner grant, for the customer's wallet to sign. */
export interface OwnerGrant {
  object: 'owner_grant';
  livemode: boolean;
  customerId: string;
  /** 0x and lowercase hex. */
  address: string;
  /** 32 random bytes, 0x-hex: the grant's one-time key. */
  nonce: string;
  origin: string;
  /** Unix seconds. */
  deadline: number;
  /** EIP-712 typed data: pass JSON.stringify(typedData) to eth_signTypedData_v4. */
  typedData: JsonObject;
}

/** customers.createPortalSession's body. */
export interface PortalSessionCreateParams {
  /** How long the link works if unused, in whole seconds: 60 to 86,400 (15 minutes by default). */
  expiresIn?: number | undefined;
}

/** A one-time link to the customer portal. */
export interface PortalSession {
  object: 'portal_session';
  /** ps_ followed by 26 characters: names the link in the server's log; not a secret. */
  id: string;
  customerId: string;
  livemode: boolean;
  /** The one-time sign-in link to send the customer to. Shown once: do not log it. */
  url: string;
  /** RFC 3339: when the link stops working if unused. */
  expiresAt: string;
}

/** customers.setOwner's body: the grant's fields as answered, and the wallet's signature. */
export interface SetOwnerParams {
  address: string;
  nonce: string;
  origin: string;
  deadline: number;
  /** The 65-byte signature (r, s, v), 0x-hex. */
  signature: string;
}

/** An owner grant the operator sent to the chain. */
export interface OwnerChange {
  object: 'owner_change';
  livemode: boolean;
  customerId: string;
  address: string;
  /** The transaction is sent; the owner is set once it is mined. */
  status: 'sent';
  txHash: string;
  /** now: the customer had no owner. after_notice: it had one; the new address owns the balance after the withdrawal notice unless the current owner cancels. */
  effective: 'now' | 'after_notice';
}

/** A product of the catalogue, with its payload's JSON Schema. */
export interface Product {
  object: 'product';
  name: string;
  description: string;
  targetMargin: number;
  minimumCharge: Money;
  pricingSummary: string;
  /** The product's pricing model. */
  pricing: Pricing;
  /** The criteria its workflows are judged by unless a create passes its own, or null. */
  successCriteria: Criterion | null;
  /** The least margin a workflow must keep at the price quoted (a ratio), or null when none. */
  marginFloor: number | null;
  /** The JSON Schema (2020-12) of this product's payload. */
  payloadSchema: JsonObject;
  /** A payload to start from, or null. */
  example: JsonObject | null;
}

export type ProductList = List<Product, '/v1/products'>;

/** The price a create with the same parameters would quote now. Nothing is stored. */
export interface Quote<P extends object = JsonObject> {
  object: 'quote';
  livemode: boolean;
  product: string;
  customerId: string;
  payload: P;
  /** The price: the most the workflow can be charged. */
  quoted: Money;
  /** The product's pricing model. */
  pricing: Pricing;
  /** The criteria in force (the request's, else the product's), or null. */
  successCriteria: Criterion | null;
  /** The margin floor in force (the product's, or the request's if higher), a ratio, or null. */
  marginFloor: number | null;
  /** With a floor, the most the execution may spend and keep it at quoted: floor(quoted × (1 − marginFloor)); else null. */
  budget: Money | null;
  margin: { target: number };
}

export type WorkflowEventType = 'workflow.completed' | 'workflow.failed' | 'workflow.canceled' | 'workflow.margin_below_floor';
export type RefundEventType = 'refund.succeeded' | 'refund.failed';
export type CustomerEventType =
  | 'customer.funded'
  | 'customer.owner_set'
  | 'customer.withdrawal_requested'
  | 'customer.owner_change_proposed'
  | 'customer.owner_change_canceled';
export type EventType = WorkflowEventType | RefundEventType | CustomerEventType;

/** The data of a workflow.* event: the workflow's outcome. */
export interface EventData<R extends object = JsonObject> {
  workflowId: string;
  /** The workflow's customer (absent from events recorded before it was added). */
  customerId?: string | undefined;
  status: WorkflowStatus;
  quoted: Money;
  margin: Margin;
  result?: R | null | undefined;
  /** On workflow.completed. */
  settlement?: Settlement | undefined;
  /** On workflow.failed. */
  failure?: Failure | undefined;
  /** The workflow's pricing, charge, cost and outcome, when known. */
  pricing?: Pricing | undefined;
  charged?: Money | undefined;
  cost?: Cost | undefined;
  outcome?: Outcome | undefined;
}

export type WorkflowEventData<R extends object = JsonObject> = EventData<R>;

/** The data of a refund.* event: the refund as it ended. */
export interface RefundEventData {
  workflowId: string;
  refund: Refund;
}

/** The deposit a customer.funded event reports. */
export interface Deposit {
  amount: Money;
  txHash: string;
  blockNumber: number;
}

/** The data of a customer.funded event: the confirmed deposit and the balance after it. */
export interface CustomerEventData {
  customerId: string;
  deposit: Deposit;
  balance: Balance;
}

/** The owner a customer.owner_set event reports. */
export interface OwnerSet {
  /** The new owner, checksummed hex: the one address that can withdraw the balance. */
  address: string;
  txHash: string;
  blockNumber: number;
}

/** The data of a customer.owner_set event: the owner set on chain and the balance then. */
export interface CustomerOwnerSetEventData {
  customerId: string;
  owner: OwnerSet;
  balance: Balance;
}

/** The withdrawal request a customer.withdrawal_requested event reports. */
export interface WithdrawalRequest {
  /** Put under notice; it replaces any earlier request. */
  amount: Money;
  /** RFC 3339: when the owner can withdraw it (the end of the contract's notice). */
  availableAt?: string | undefined;
  txHash: string;
  blockNumber: number;
}

/** The data of a customer.withdrawal_requested event: the request and the balance after it. */
export interface CustomerWithdrawalRequestedEventData {
  customerId: string;
  withdrawal: WithdrawalRequest;
  balance: Balance;
}

/** The owner change a customer.owner_change_proposed or customer.owner_change_canceled event reports. */
export interface OwnerChange {
  /** The proposed owner, checksummed hex. */
  address: string;
  /** RFC 3339: when a proposed change takes effect (absent on a cancel). */
  effectiveAt?: string | undefined;
  txHash: string;
  blockNumber: number;
}

/** The data of a customer.owner_change_proposed or customer.owner_change_canceled event. */
export interface CustomerOwnerChangeEventData {
  customerId: string;
  ownerChange: OwnerChange;
  balance: Balance;
}

/** An event of one type T, whose data is D. */
export interface TypedEvent<T extends EventType, D> {
  /** evt_ followed by 26 characters; also the webhook-id header of its deliveries. */
  id: string;
  object: 'event';
  type: T;
  livemode: boolean;
  /**
   * RFC 3339. The server always sends it; webhooks.construct and verifyStandard
   * also accept a body without it (or with null), as the Go and Python libraries
   * do, so check before use. Dedupe and order on id, not on createdAt.
   */
  createdAt?: string | null | undefined;
  data: D;
}

/**
 * workflow.completed (the workflow is Settled), workflow.failed,
 * workflow.canceled, or workflow.margin_below_floor (it finished having spent
 * more than its margin floor's budget; it goes on to be charged as usual).
 */
export type WorkflowEvent<R extends object = JsonObject> =
  | TypedEvent<'workflow.completed', EventData<R>>
  | TypedEvent<'workflow.failed', EventData<R>>
  | TypedEvent<'workflow.canceled', EventData<R>>
  | TypedEvent<'workflow.margin_below_floor', EventData<R>>;

/** refund.succeeded (confirmed on chain) or refund.failed (nothing was given back). */
export type RefundEvent = TypedEvent<'refund.succeeded', RefundEventData> | TypedEvent<'refund.failed', RefundEventData>;

/** customer.funded: a deposit for the customer is confirmed on chain and available. */
export type CustomerFundedEvent = TypedEvent<'customer.funded', CustomerEventData>;

/** customer.owner_set: the owner of the customer's balance was set on chain (confirmed). */
export type CustomerOwnerSetEvent = TypedEvent<'customer.owner_set', CustomerOwnerSetEventData>;

/** customer.withdrawal_requested: the owner put an amount under withdrawal notice on chain (confirmed). */
export type CustomerWithdrawalRequestedEvent = TypedEvent<'customer.withdrawal_requested', CustomerWithdrawalRequestedEventData>;

/** customer.owner_change_proposed: a new owner of the balance was proposed on chain (the current owner can cancel until effectiveAt). */
export type CustomerOwnerChangeProposedEvent = TypedEvent<'customer.owner_change_proposed', CustomerOwnerChangeEventData>;

/** customer.owner_change_canceled: a proposed owner change was dropped on chain. */
export type CustomerOwnerChangeCanceledEvent = TypedEvent<'customer.owner_change_canceled', CustomerOwnerChangeEventData>;

/**
 * An event: the body of a webhook delivery, also readable through events.list
 * and events.fetch. Its type tells its data apart:
 * `if (event.type === 'refund.succeeded') console.log(event.data.refund.amount)`.
 */
export type Event<R extends object = JsonObject> =
  | WorkflowEvent<R>
  | RefundEvent
  | CustomerFundedEvent
  | CustomerOwnerSetEvent
  | CustomerWithdrawalRequestedEvent
  | CustomerOwnerChangeProposedEvent
  | CustomerOwnerChangeCanceledEvent;

export type EventList = List<Event, '/v1/events'>;

/** The OpenAPI 3.1 document the server serves. */
export interface OpenAPIDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: { [path: string]: { [method: string]: JsonValue } };
  components?: JsonObject | undefined;
  [key: string]: JsonValue | undefined;
}

// ---------------------------------------------------------------- responses

/** The HTTP response an object came from. */
export interface ResponseInfo {
  readonly status: number;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The Request-Id (req_…) to quote to support. */
  readonly requestId: string | undefined;
  /** true when a create was answered from its Idempotency-Key: a replay of the first response. */
  readonly idempotentReplayed: boolean;
}

/** An API object with the (non-enumerable) response it came from. */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo };

// ---------------------------------------------------------------- parameters

export interface WorkflowCreateParams<P extends object = JsonObject> {
  /** A product name (products.list lists them). */
  product: string;
  /** cus_ followed by 1–255 of A–Z, a–z, 0–9, _ and -. */
  customerId: string;
  /** The product's input: a JSON object its payloadSchema accepts. */
  payload: P;
  /**
   * Optional: a criteria tree that replaces the product's success criteria for
   * this workflow. Under success_fee and hybrid pricing its verdict on the result
   * decides the charge; otherwise it is recorded. A tree that does not parse is
   * an InvalidRequestError whose param names the node (successCriteria.criteria[1].op).
   */
  successCriteria?: Criterion | undefined;
  /**
   * Optional: the least margin to keep at the price quoted, a ratio 0 ≤ f < 1 with
   * at most four decimals (0.25). It may raise the product's floor, never lower it.
   * A quote whose margin on the estimated cost is below it is an InvalidRequestError
   * with code margin_below_floor (param marginFloor).
   */
  marginFloor?: number | undefined;
}

export type QuoteCreateParams<P extends object = JsonObject> = WorkflowCreateParams<P>;

/** Keyset cursors: startingAfter pages to older items, endingBefore to newer; not both. */
export type PageCursor =
  | { startingAfter?: string; endingBefore?: undefined }
  | { endingBefore?: string; startingAfter?: undefined };

export type WorkflowListParams = {
  status?: WorkflowStatus | undefined;
  /** 1–100, default 10. */
  limit?: number | undefined;
  customerId?: string | undefined;
  product?: string | undefined;
} & PageCursor;

/** refunds.create's body: without amount, all that is left to refund of the charge. */
export interface RefundCreateParams {
  /** Minor units, at least 1 and at most what is left to refund (else amount_exceeds_refundable). */
  amount?: number | undefined;
  /** At most 500 characters, kept on the refund. */
  reason?: string | undefined;
}

export type RefundListParams = {
  workflowId?: string | undefined;
  status?: RefundStatus | undefined;
  /** 1–100, default 10. */
  limit?: number | undefined;
} & PageCursor;

export type EventListParams = {
  type?: EventType | undefined;
  workflowId?: string | undefined;
  /** Only events created strictly after this time. */
  createdAfter?: string | Date | undefined;
  /** 1–100, default 10. */
  limit?: number | undefined;
} & PageCursor;

/** margins.report's parameters. */
export interface MarginReportParams {
  groupBy: MarginGroupBy;
  /** Only workflows created at or after this time. */
  createdAfter?: string | Date | undefined;
  /** Only workflows created before this time (after createdAfter). */
  createdBefore?: string | Date | undefined;
  /** Only this product's workflows. */
  product?: string | undefined;
}

/** An AbortSignal (from an AbortController). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface TaskClaimParams {
  /** The remote products the worker serves (1–64 names). */
  products: string[];
  /** How many tasks to take at most, 1–100; default 1. */
  max?: number | undefined;
  /** How long to wait for a first task when none is ready, a whole number 0–30; default 0. */
  waitSeconds?: number | undefined;
  /** Which worker process claims (docs/api.md §16): the server's dashboard lists workers by key, host and name. Worker sends it. */
  worker?: WorkerIdentity | undefined;
}

/** What a worker process says of itself when it claims; every field optional, UTF-8 without control characters. */
export interface WorkerIdentity {
  /** The machine it runs on, at most 255 bytes. */
  host?: string | undefined;
  /** Tells it from other workers on the host (e.g. pid-1234), at most 128 bytes. */
  name?: string | undefined;
  /** The library and its version, at most 64 bytes. */
  sdk?: string | undefined;
}

export interface TaskHeartbeatParams {
  /** Spend to add to the task's (amounts in minor units, whole numbers ≥ 0). */
  costItems?: CostItem[] | undefined;
}

export interface TaskCompleteParams {
  /** The workflow's result, a JSON object of at most 256 KiB; {} when absent. */
  result?: object | undefined;
  /** The run's cost besides what heartbeats reported. */
  costItems?: CostItem[] | undefined;
}

export interface TaskFailParams {
  /** 1–1,024 bytes of UTF-8. */
  message: string;
  /** true: tried again after the engine's backoff; false (default): the workflow fails for good. */
  retry?: boolean | undefined;
}

/** Options of one call; they override the client's. */
export interface RequestOptions {
  /** Milliseconds each attempt may take. */
  timeout?: number | undefined;
  /** Retries after the first attempt; 0 disables them. */
  maxRetries?: number | undefined;
  /** Aborts the call and its retries; the call then rejects with the signal's reason. */
  signal?: AbortSignalLike | undefined;
}

/** Options of a POST: the Idempotency-Key, generated (and reused across retries) when not given. */
export interface PostRequestOptions extends RequestOptions {
  /** At most 255 characters; the same key and body within 24 h replay the first response. */
  idempotencyKey?: string | undefined;
}

export interface SettleflowOptions {
  /** sk_test_… or sk_live_…; defaults to the SETTLEFLOW_API_KEY environment variable. */
  apiKey?: string | undefined;
  /** Milliseconds each attempt may take; default 30000. */
  timeout?: number | undefined;
  /**
   * Defaults to SETTLEFLOW_BASE_URL (several separated by commas), then
   * https://127.0.0.1:8443 (the reference server). An array of the URLs of
   * several instances: each request goes to the next in turn, passing over one
   * that gave a connection error; a request that could not be sent at all goes
   * to the next at once (docs/workers.md, "Several instances and retries").
   */
  baseUrl?: string | readonly string[] | undefined;
  /** Retries of a failed attempt (429, 5xx but 501, connection errors, timeouts); default 2; 0 disables. */
  maxRetries?: number | undefined;
  /** Certificate authorities to trust instead of the system's, as Node's tls takes them: PEM text or a Buffer, or an array of them. */
  ca?: string | Uint8Array | ReadonlyArray<string | Uint8Array> | undefined;
}

// ---------------------------------------------------------------- client

/**
 * The items of a list across all its pages, fetched a page at a time as they
 * are consumed (`for await`). Newest first; with endingBefore, from the
 * cursor towards newer items, oldest first.
 */
export declare class AutoPager<T> implements AsyncIterableIterator<T> {
  private constructor();
  next(): Promise<IteratorResult<T, undefined>>;
  return(value?: undefined): Promise<IteratorResult<T, undefined>>;
  [Symbol.asyncIterator](): AutoPager<T>;
  /** Collects up to limit items into an array. */
  toArray(options: { limit: number }): Promise<T[]>;
}

export interface Workflows {
  /** POST /v1/workflows: creates and quotes a workflow (status Pending); execution follows in the background. */
  create<P extends object = JsonObject>(params: WorkflowCreateParams<P>, options?: PostRequestOptions): Promise<WithResponse<Workflow<P>>>;
  /** GET /v1/workflows/{id}. */
  fetch<P extends object = JsonObject, R extends object = JsonObject>(id: string, options?: RequestOptions): Promise<WithResponse<Workflow<P, R>>>;
  /** GET /v1/workflows: one page, newest first. */
  list(params?: WorkflowListParams, options?: RequestOptions): Promise<WithResponse<WorkflowList>>;
  /** Every workflow matching params, across pages: `for await (const wf of client.workflows.listAutoPaging({ status: 'Settled' }))`. */
  listAutoPaging(params?: WorkflowListParams, options?: RequestOptions): AutoPager<Workflow>;
  /** POST /v1/workflows/{id}/cancel: a Pending workflow becomes Canceled; any other status is a ConflictError whose code names it. */
  cancel(id: string, options?: PostRequestOptions): Promise<WithResponse<Workflow>>;
}

export interface Quotes {
  /** POST /v1/quotes: prices the parameters of a create, with the same validation; stores nothing. */
  create<P extends object = JsonObject>(params: QuoteCreateParams<P>, options?: PostRequestOptions): Promise<WithResponse<Quote<P>>>;
}

export interface Products {
  /** GET /v1/products: the catalogue. */
  list(options?: RequestOptions): Promise<WithResponse<ProductList>>;
  /** GET /v1/products/{name}. */
  fetch(name: string, options?: RequestOptions): Promise<WithResponse<Product>>;
}

export interface Events {
  /** GET /v1/events: one page, newest first. */
  list(params?: EventListParams, options?: RequestOptions): Promise<WithResponse<EventList>>;
  /** Every event matching params, across pages. */
  listAutoPaging(params?: EventListParams, options?: RequestOptions): AutoPager<Event>;
  /** GET /v1/events/{id}: the event as its webhook deliveries carried it. */
  fetch(id: string, options?: RequestOptions): Promise<WithResponse<Event>>;
}

export interface Customers {
  /** GET /v1/customers/{customerId}: the customer's balance and where to deposit for it. */
  fetch(customerId: string, options?: RequestOptions): Promise<WithResponse<Customer>>;
  /**
   * POST /v1/customers/{customerId}/owner_grants: an unsigned grant of
   * params.address as the owner of the customer's balance, with the EIP-712
   * typedData for the customer's wallet to sign (eth_signTypedData_v4).
   * Nothing is sent to the chain. A bad address, origin or deadline is an
   * InvalidRequestError naming it.
   */
  createOwnerGrant(customerId: string, params: OwnerGrantCreateParams, options?: PostRequestOptions): Promise<WithResponse<OwnerGrant>>;
  /**
   * POST /v1/customers/{customerId}/owner: sends the signed grant; the
   * operator sets the owner on chain. A grant that cannot apply (expired, a
   * nonce used, a signature of another customer, chain, contract, origin or
   * address, an address that owns the balance already) is an
   * InvalidRequestError naming address, nonce, origin, deadline or
   * signature, and nothing is sent.
   */
  setOwner(customerId: string, params: SetOwnerParams, options?: PostRequestOptions): Promise<WithResponse<OwnerChange>>;
  /**
   * POST /v1/customers/{customerId}/portal_sessions: a one-time link to the
   * customer portal for this customer and the key's environment. A bad
   * customerId or expiresIn is an InvalidRequestError naming it; a server
   * that does not mount the portal answers 404 (InvalidRequestError,
   * resource_missing).
   */
  createPortalSession(customerId: string, params?: PortalSessionCreateParams, options?: PostRequestOptions): Promise<WithResponse<PortalSession>>;
}

export interface Refunds {
  /**
   * POST /v1/workflows/{workflowId}/refunds: refunds part (amount) or the rest
   * of a Settled workflow's charge; answered Pending. A workflow that is not
   * Settled is a ConflictError (workflow_not_settled); more than is left to
   * refund an InvalidRequestError (amount_exceeds_refundable, param amount).
   */
  create(workflowId: string, params?: RefundCreateParams, options?: PostRequestOptions): Promise<WithResponse<Refund>>;
  /** GET /v1/refunds/{id}. */
  fetch(id: string, options?: RequestOptions): Promise<WithResponse<Refund>>;
  /** GET /v1/refunds: one page, newest first. */
  list(params?: RefundListParams, options?: RequestOptions): Promise<WithResponse<RefundList>>;
  /** Every refund matching params, across pages. */
  listAutoPaging(params?: RefundListParams, options?: RequestOptions): AutoPager<Refund>;
}

export interface Margins {
  /**
   * GET /v1/margins: the margins report of the key's environment. An
   * InvalidRequestError names groupBy (missing or unknown), product (not in the
   * catalogue), createdBefore (not after createdAfter) or createdAfter (more
   * than 1000 groups: narrow the range).
   */
  report(params: MarginReportParams, options?: RequestOptions): Promise<WithResponse<MarginReport>>;
}

export interface TestHelpers {
  /**
   * POST /v1/test_helpers/customers/{customerId}/fund (test keys only): the
   * test faucet deposits amount (minor units) for the customer; answered with
   * the customer once the deposit is applied. Not idempotent (every call
   * deposits), so not retried unless options.maxRetries says so. A live key
   * is a PermissionError (test_mode_only).
   */
  fundCustomer(customerId: string, amount: number, options?: RequestOptions): Promise<WithResponse<Customer>>;
}

/**
 * The task endpoints, for a worker key (rk_test_…). A 409 is a ConflictError
 * whose code is lease_lost, task_ended or margin_floor_exceeded; an unknown
 * task a NotFoundError; an ordinary key or a product the key may not serve a
 * PermissionError (worker_key_required, product_not_allowed).
 */
export interface Tasks {
  /**
   * POST /v1/tasks/claim: a long poll; data is empty when the wait ends with nothing. Never resent unless
   * options.maxRetries says so: only a claim that could not be sent at all (connection refused) goes to the next base URL.
   */
  claim(params: TaskClaimParams, options?: RequestOptions): Promise<WithResponse<TaskList>>;
  /** POST /v1/tasks/{id}/heartbeat: extends the lease and reports spend; with cost items, not retried unless options.maxRetries says so (without, retried as configured). */
  heartbeat(id: string, params?: TaskHeartbeatParams, options?: RequestOptions): Promise<WithResponse<Task>>;
  /** POST /v1/tasks/{id}/complete: idempotent per task, retried as configured; a 409 or other 4xx is final. */
  complete(id: string, params?: TaskCompleteParams, options?: PostRequestOptions): Promise<WithResponse<Task>>;
  /** POST /v1/tasks/{id}/fail: idempotent per task. */
  fail(id: string, params: TaskFailParams, options?: PostRequestOptions): Promise<WithResponse<Task>>;
}

/** Why a task was stopped. */
export type TaskStopReason = 'lease_lost' | 'margin_floor_exceeded' | 'worker_stopped';

/** The reason of a stopped task's AbortSignal, and what reportSpend rejects with once it is stopped. */
export declare class TaskStoppedError extends SettleflowError {
  constructor(reason: TaskStopReason, options?: { cause?: unknown });
  readonly reason: TaskStopReason;
}

/** Thrown by a handler: a failure not to retry (the workflow fails for good). */
export declare class Permanent extends Error {
  constructor(message?: string, options?: { cause?: unknown });
}

/** What a handler gets besides its task. */
export interface TaskContext<P extends object = JsonObject> {
  task: Task<P>;
  /** The most the task may spend and keep its margin floor (minor units), or null. */
  budget: number | null;
  /** Aborted when the task is stopped; its reason is a TaskStoppedError. */
  signal: AbortSignalLike;
  /** Reports spend at once in a heartbeat; rejects with TaskStoppedError (margin_floor_exceeded) past the budget. */
  reportSpend(...items: CostItem[]): Promise<void>;
}

/** What a handler resolves to: the workflow's result and the run's cost items besides those reported. */
export interface TaskOutcome {
  result?: object | undefined;
  costItems?: CostItem[] | undefined;
}

export type TaskHandler<P extends object = JsonObject> = (task: Task<P>, ctx: TaskContext<P>) => Promise<TaskOutcome | void> | TaskOutcome | void;

export interface WorkerOptions {
  /** How many tasks run at once, 1–100; default 4. */
  concurrency?: number | undefined;
  /** Milliseconds between heartbeats of a running task; default 10,000 (the server's lease is 30 s). */
  heartbeatInterval?: number | undefined;
  /** Milliseconds a claim waits for a task, at most 30,000; default 20,000. */
  wait?: number | undefined;
  /** Milliseconds run() lets the tasks in flight finish once stopped; default 30,000. */
  drainTimeout?: number | undefined;
  /** Gets a line per claim error and per task that could not be reported. */
  logger?: { warn(message: string, fields: object): void } | undefined;
  /** Tells this worker from others on its host in the server's dashboard, at most 128 bytes; default pid-<process id>. */
  name?: string | undefined;
  /** The machine it runs on, in the server's dashboard, at most 255 bytes; default os.hostname(). */
  host?: string | undefined;
}

/** Claims tasks of the products it has handlers for and runs them, heartbeating their leases. */
export declare class Worker {
  constructor(client: Settleflow, options?: WorkerOptions);
  /** What the worker says of itself on each claim. */
  readonly identity: Required<WorkerIdentity>;
  /** Registers handler for the remote product named product; returns the worker. */
  handle<P extends object = JsonObject>(product: string, handler: TaskHandler<P>): this;
  /** Until stop() (or SIGTERM/SIGINT with handleSignals, the default); then drains the tasks in flight. */
  run(options?: { handleSignals?: boolean | undefined }): Promise<void>;
  /** Stops claiming; run() drains and resolves. */
  stop(): void;
}

export declare class Settleflow {
  constructor(options?: SettleflowOptions);
  /** The webhook helpers (they need no client). */
  static readonly webhooks: Webhooks;
  static readonly VERSION: string;
  /** The (first) base URL. */
  readonly baseUrl: string;
  /** Every base URL, in the order given. */
  readonly baseUrls: readonly string[];
  readonly timeout: number;
  readonly maxRetries: number;
  readonly workflows: Workflows;
  readonly quotes: Quotes;
  readonly products: Products;
  readonly events: Events;
  readonly customers: Customers;
  readonly refunds: Refunds;
  readonly margins: Margins;
  readonly testHelpers: TestHelpers;
  /** The task endpoints (worker keys only); see Worker. */
  readonly tasks: Tasks;
  readonly webhooks: Webhooks;
  /** GET /v1/openapi.json: the served OpenAPI 3.1 document. */
  openAPI(options?: RequestOptions): Promise<WithResponse<OpenAPIDocument>>;
  /** Closes kept-alive connections (the client opens new ones if used again). */
  close(): void;
  /** The options, with the API key redacted (sk_test_…a1b2). */
  toJSON(): { baseUrl: string; apiKey: string; timeout: number; maxRetries: number; baseUrls?: string[] };
}
export default Settleflow;

export declare const DEFAULT_BASE_URL: string;
export declare const DEFAULT_TIMEOUT: number;
export declare const DEFAULT_MAX_RETRIES: number;
export declare const VERSION: string;

export type OperationId =
  | 'createWorkflow'
  | 'listWorkflows'
  | 'fetchWorkflow'
  | 'cancelWorkflow'
  | 'createQuote'
  | 'listProducts'
  | 'fetchProduct'
  | 'listEvents'
  | 'fetchEvent'
  | 'fetchCustomer'
  | 'createOwnerGrant'
  | 'setOwner'
  | 'createPortalSession'
  | 'createRefund'
  | 'fetchRefund'
  | 'listRefunds'
  | 'fundTestCustomer'
  | 'reportMargins'
  | 'openAPI'
  | 'claimTasks'
  | 'heartbeatTask'
  | 'completeTask'
  | 'failTask';

/** Every operationId of the served OpenAPI document and the client method (a dotted path on the client) that calls it. */
export declare const OPERATIONS: Readonly<Record<OperationId, string>>;

// ---------------------------------------------------------------- webhooks

/** The raw request body, exactly as received. */
export type RawBody = string | Uint8Array | ArrayBuffer;

/** Node's req.headers, a fetch Headers, or header names (any case) to values. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | { readonly [name: string]: string | readonly string[] | undefined };

export interface VerifyOptions {
  /** Largest accepted distance in seconds between the signed timestamp and now, either way; default 300. */
  tolerance?: number | undefined;
  /** The clock: Unix seconds, a Date, or a function returning either; default the system clock. */
  now?: number | Date | (() => number | Date) | undefined;
}

export interface Webhooks {
  /**
   * Verifies a delivery's service-signature header against the raw body and
   * the endpoint's whsec_ secret, and returns the parsed event. Throws
   * SignatureVerificationError.
   */
  construct<R extends object = JsonObject>(
    rawBody: RawBody,
    signatureHeader: string | readonly string[] | undefined | null,
    secret: string,
    options?: VerifyOptions,
  ): Event<R>;
  /** As construct, without parsing the body. */
  verifySignature(
    rawBody: RawBody,
    signatureHeader: string | readonly string[] | undefined | null,
    secret: string,
    options?: VerifyOptions,
  ): void;
  /**
   * Verifies the Standard Webhooks headers (webhook-id, webhook-timestamp,
   * webhook-signature) and returns the parsed event. Throws
   * SignatureVerificationError.
   */
  verifyStandard<R extends object = JsonObject>(rawBody: RawBody, headers: WebhookHeaders, secret: string, options?: VerifyOptions): Event<R>;
  /** The service-signature header value the server would send for payload, for testing a receiver. */
  generateTestHeader(payload: RawBody, secret: string, options?: { timestamp?: number | Date }): string;
  readonly DEFAULT_TOLERANCE: number;
  readonly SIGNATURE_HEADER: string;
}

export declare const webhooks: Webhooks;

// ---------------------------------------------------------------- errors

/** The base of every error this library throws. */
export declare class SettleflowError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
}

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'payment_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export interface APIErrorFields {
  status?: number | undefined;
  type?: ErrorType | string | undefined;
  code?: string | undefined;
  param?: string | undefined;
  requestId?: string | undefined;
  headers?: Record<string, string | string[] | undefined>;
  cause?: unknown;
}

/** The API answered with an error status; the fields mirror its error body. */
export declare class APIError extends SettleflowError {
  constructor(message: string, fields?: APIErrorFields);
  /** The HTTP status. */
  readonly status: number | undefined;
  readonly type: ErrorType | string | undefined;
  /** A machine-readable code: parameter_missing, resource_missing, workflow_settled, margin_below_floor, … */
  readonly code: string | undefined;
  /** The parameter at fault (payload, customerId, payload.attachments, …). */
  readonly param: string | undefined;
  /** The Request-Id (req_…) to quote to support. */
  readonly requestId: string | undefined;
  /** The response headers, names in lower case. */
  readonly headers: Record<string, string | string[] | undefined>;
}

/** 400 (and other invalid_request_error answers): param names the parameter at fault. */
export declare class InvalidRequestError extends APIError {}
/** 404 resource_missing. */
export declare class NotFoundError extends InvalidRequestError {}
/** 401: the API key is missing, malformed, unknown, revoked or expired. */
export declare class AuthenticationError extends APIError {}
/** 403: livemode_not_configured. */
export declare class PermissionError extends APIError {}
/**
 * 409: the request conflicts with the resource's state (code names it:
 * workflow_running, workflow_settled, … for a cancel; workflow_not_settled,
 * refunds_not_supported for a refund).
 */
export declare class ConflictError extends APIError {}
/** 409 idempotency_key_reused: the Idempotency-Key was used with another body. */
export declare class IdempotencyError extends ConflictError {}

/** 402 payment_error: the customer cannot pay; code says why. */
export declare class PaymentError extends APIError {}

export interface InsufficientFundsFields extends APIErrorFields {
  available?: number | undefined;
  amount?: number | undefined;
  currency?: string | undefined;
  customerId?: string | undefined;
}

/** 402 insufficient_funds: the customer's available balance does not cover the quote; nothing was created. */
export declare class InsufficientFundsError extends PaymentError {
  constructor(message: string, fields?: InsufficientFundsFields);
  /** The customer's available balance, in minor units. */
  readonly available: number | undefined;
  /** What the request needed (the quote), in minor units. */
  readonly amount: number | undefined;
  readonly currency: string | undefined;
  readonly customerId: string | undefined;
}

/** 429: a rate limit is exceeded (after the client's retries). */
export declare class RateLimitError extends APIError {
  constructor(message: string, fields?: APIErrorFields & { retryAfter?: number | null });
  /** Seconds the server asked to wait (Retry-After, else until X-RateLimit-Reset), or null. */
  readonly retryAfter: number | null;
}

/** No response: connection refused or reset, TLS failure, connection closed before the answer. */
export declare class ConnectionError extends SettleflowError {}
/** The attempt ran past its timeout. */
export declare class TimeoutError extends ConnectionError {}

export type SignatureVerificationReason =
  | 'missing_header'
  | 'malformed_header'
  | 'no_v1_signature'
  | 'timestamp_outside_tolerance'
  | 'no_matching_signature'
  | 'invalid_payload'
  | 'bad_secret'
  | 'body_not_raw';

/** A webhook delivery did not verify; answer 400. */
export declare class SignatureVerificationError extends SettleflowError {
  constructor(reason: SignatureVerificationReason, detail?: string);
  readonly reason: SignatureVerificationReason;
  readonly detail: string;
  static readonly MISSING_HEADER: 'missing_header';
  static readonly MALFORMED_HEADER: 'malformed_header';
  static readonly NO_V1_SIGNATURE: 'no_v1_signature';
  static readonly TIMESTAMP_OUTSIDE_TOLERANCE: 'timestamp_outside_tolerance';
  static readonly NO_MATCHING_SIGNATURE: 'no_matching_signature';
  static readonly INVALID_PAYLOAD: 'invalid_payload';
  static readonly BAD_SECRET: 'bad_secret';
  static readonly BODY_NOT_RAW: 'body_not_raw';
}
