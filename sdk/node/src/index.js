export { Settleflow, AutoPager, DEFAULT_BASE_URL, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES } from './client.js';
export { Settleflow as default } from './client.js';
export {
  SettleflowError,
  APIError,
  InvalidRequestError,
  NotFoundError,
  AuthenticationError,
  PermissionError,
  PaymentError,
  InsufficientFundsError,
  ConflictError,
  IdempotencyError,
  RateLimitError,
  ConnectionError,
  TimeoutError,
  SignatureVerificationError,
} from './errors.js';
export { webhooks } from './webhooks.js';
export { Worker, Permanent, TaskStoppedError } from './worker.js';
export { VERSION } from './version.js';

/** Every operationId of the served OpenAPI document and the client method that calls it. */
export const OPERATIONS = Object.freeze({
  createWorkflow: 'workflows.create',
  listWorkflows: 'workflows.list',
  fetchWorkflow: 'workflows.fetch',
  cancelWorkflow: 'workflows.cancel',
  createQuote: 'quotes.create',
  listProducts: 'products.list',
  fetchProduct: 'products.fetch',
  listEvents: 'events.list',
  fetchEvent: 'events.fetch',
  fetchCustomer: 'customers.fetch',
  createOwnerGrant: 'customers.createOwnerGrant',
  setOwner: 'customers.setOwner',
  createPortalSession: 'customers.createPortalSession',
  createRefund: 'refunds.create',
  fetchRefund: 'refunds.fetch',
  listRefunds: 'refunds.list',
  fundTestCustomer: 'testHelpers.fundCustomer',
  reportMargins: 'margins.report',
  openAPI: 'openAPI',
  claimTasks: 'tasks.claim',
  heartbeatTask: 'tasks.heartbeat',
  completeTask: 'tasks.complete',
  failTask: 'tasks.fail',
});
