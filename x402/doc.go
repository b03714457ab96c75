// Package x402 sells workflows to programs that pay over HTTP 402: x402
// version 2 (github.com/x402-foundation/x402, specs/x402-specification-v2.md
// and specs/transports-v2/http.md), the `exact` scheme on EVM chains with
// EIP-3009 transferWithAuthorization.
//
// An agent with a wallet and no API key posts a create to the [Handler]
// (the product and its payload, no customer): the answer is 402 with a
// PAYMENT-REQUIRED header quoting the product's fixed price. The agent's
// retry carries a PAYMENT-SIGNATURE header: the wallet's EIP-712 signed
// transfer of exactly that amount to the operator's collector account. The
// handler verifies it (scheme, network, asset, amount, payee, resource,
// validity window, signature, nonce unused, funds), submits it itself (the
// server plays the x402 facilitator), deposits the amount into the paying
// wallet's customer balance in the settlement contract, and creates the
// workflow for that customer, idempotently per authorization. From there
// the workflow is settled, refunded and reconciled as any other: its
// customer is cus_x402_<wallet address>. The answer carries PAYMENT-RESPONSE
// (the transfer's transaction) and an access token with which the wallet,
// and only whoever holds the token, fetches the workflow later without an
// API key. docs/architecture.md, "x402: selling to agents", has the design
// and the attacker's view.
//
// The wire types ([PaymentRequired], [PaymentPayload], [SettlementResponse])
// and their header codecs are strict: unknown fields, a wrong version,
// non-canonical numbers or addresses are refused with an [*Error] naming
// the x402 error code.
package x402
