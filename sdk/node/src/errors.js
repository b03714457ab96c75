// Every error this library throws is a SettleflowError. Errors that carry an
// API response are APIError (or a subclass chosen by the HTTP status); a
// request that got no response is a ConnectionError (TimeoutError when it ran
// out of time); a webhook that did not verify is a SignatureVerificationError.
//
// No error ever holds the API key: messages from the server are scrubbed of
// it (see redact in http.js) and the request's headers are never attached.

export class SettleflowError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The API answered with an error status (4xx or 5xx). */
export class APIError extends SettleflowError {
  constructor(message, { status, type, code, param, requestId, headers, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.requestId = requestId;
    this.headers = headers ?? {};
  }
}

/** 400 and other invalid_request_error answers; `param` names the parameter at fault. */
export class InvalidRequestError extends APIError {}

/** 404 resource_missing: no such workflow, refund, product or event. */
export class NotFoundError extends InvalidRequestError {}

/** 401: the API key is missing, malformed, unknown, revoked or expired. */
export class AuthenticationError extends APIError {}

/** 403: the key may not do this (livemode_not_configured). */
export class PermissionError extends APIError {}

/**
 * 409: the request conflicts with the resource's state: a cancel of a workflow
 * that is no longer Pending (`code` names its status: workflow_running, …), a
 * refund of a workflow that is not Settled (workflow_not_settled), a refund or
 * test funding where charges are not paid from customer balances
 * (refunds_not_supported).
 */
export class ConflictError extends APIError {}

/** 409 idempotency_key_reused: the Idempotency-Key was used with another body. */
export class IdempotencyError extends ConflictError {}

/**
 * 402 payment_error: the customer cannot pay for what was asked. `code` says
 * why; insufficient_funds is an InsufficientFundsError.
 */
export class PaymentError extends APIError {}

/**
 * 402 insufficient_funds: the customer's available balance does not cover the
 * quote; nothing was created. `available` is the customer's available balance
 * and `amount` the quote, both in minor units of `currency`; `customerId` is
 * the customer. Each is undefined if the answer did not carry it.
 */
export class InsufficientFundsError extends PaymentError {
  constructor(message, fields = {}) {
    super(message, fields);
    this.available = fields.available;
    this.amount = fields.amount;
    this.currency = fields.currency;
    this.customerId = fields.customerId;
  }
}

/** 429: a rate limit is exceeded. `retryAfter` is in seconds (Retry-After, else the time to X-RateLimit-Reset), or null. */
export class RateLimitError extends APIError {
  constructor(message, fields = {}) {
    super(message, fields);
    this.retryAfter = fields.retryAfter ?? null;
  }
}

/**
 * The request got no response: connection refused or reset, TLS failure, or
 * the connection closed before the response arrived. A create that fails so
 * may or may not have taken effect; retrying it with the same idempotencyKey
 * is safe (the client already did, up to maxRetries times).
 */
export class ConnectionError extends SettleflowError {}

/** The request did not complete within the client's (or the call's) timeout. */
export class TimeoutError extends ConnectionError {}

export const REASONS = Object.freeze({
  MISSING_HEADER: 'missing_header',
  MALFORMED_HEADER: 'malformed_header',
  NO_V1_SIGNATURE: 'no_v1_signature',
  TIMESTAMP_OUTSIDE_TOLERANCE: 'timestamp_outside_tolerance',
  NO_MATCHING_SIGNATURE: 'no_matching_signature',
  INVALID_PAYLOAD: 'invalid_payload',
  BAD_SECRET: 'bad_secret',
  BODY_NOT_RAW: 'body_not_raw',
});

/**
 * A webhook delivery did not verify; `reason` says why (one of REASONS, the
 * same strings in every settleflow library and in testdata/webhooks.json). A
 * receiver answers 400 whatever the reason. Neither the message nor any
 * property holds the secret.
 */
export class SignatureVerificationError extends SettleflowError {
  constructor(reason, detail = '') {
    super('webhook signature verification failed: ' + reason + (detail ? ': ' + detail : ''));
    this.reason = reason;
    this.detail = detail;
  }
}
Object.assign(SignatureVerificationError, REASONS);
