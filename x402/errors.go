package x402

import "fmt"

// Error is why a payment was refused: an x402 error code (the official
// facilitator's names where one exists, e.g.
// "invalid_exact_evm_payload_authorization_valid_before") and a message for
// people. Status is the HTTP status the handler answers it with: 400 for a
// malformed header or request, 402 for a payment that does not pay (and the
// answer then carries a fresh PAYMENT-REQUIRED whose error is Message).
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("x402: %s: %s", e.Code, e.Message) }

// The codes this package answers with.
const (
	// CodeMalformed: a header that is not base64 of one JSON object of the
	// schema (400).
	CodeMalformed = "invalid_payload"
	// CodeVersion: x402Version is not 2.
	CodeVersion = "invalid_x402_version"
	// CodeScheme: a scheme other than the one offered.
	CodeScheme = "invalid_exact_evm_scheme"
	// CodeNetwork: another network (CAIP-2 chain) than offered.
	CodeNetwork = "invalid_exact_evm_network_mismatch"
	// CodeAsset: another token than offered.
	CodeAsset = "invalid_exact_evm_asset_mismatch"
	// CodeAmount: the requirement or the authorization names another amount.
	CodeAmount = "invalid_exact_evm_payload_authorization_value_mismatch"
	// CodeRecipient: the money would go to another address than payTo.
	CodeRecipient = "invalid_exact_evm_recipient_mismatch"
	// CodeResource: the payment names another resource (URL or product).
	CodeResource = "invalid_exact_evm_resource_mismatch"
	// CodeRequirements: the accepted requirements differ from the offer in
	// another field (timeout, token domain).
	CodeRequirements = "invalid_exact_evm_requirements_mismatch"
	// CodeValidBefore: expired, or expiring within the margin.
	CodeValidBefore = "invalid_exact_evm_payload_authorization_valid_before"
	// CodeValidAfter: not valid yet.
	CodeValidAfter = "invalid_exact_evm_payload_authorization_valid_after"
	// CodeSignature: the signature is not the payer's over this
	// authorization.
	CodeSignature = "invalid_exact_evm_signature"
	// CodeNonceUsed: the authorization was used, for another workflow.
	CodeNonceUsed = "invalid_exact_evm_nonce_already_used"
	// CodeInsufficientFunds: the wallet holds less than the amount.
	CodeInsufficientFunds = "insufficient_funds"
	// CodeUptoSpender: an upto permit whose spender is not the scheme's
	// proxy.
	CodeUptoSpender = "invalid_permit2_spender"
	// CodeUptoFacilitator: an upto permit that names another facilitator
	// than this server's collector (only it could settle it).
	CodeUptoFacilitator = "invalid_upto_evm_facilitator_mismatch"
	// CodePermit2Allowance: the payer has not approved Permit2 for the
	// amount (412: a one-time approval, then the same request again).
	CodePermit2Allowance = "permit2_allowance_required"
	// CodeSettlement: the chain refused the transfer (simulation or
	// transaction failed); nothing moved.
	CodeSettlement = "invalid_exact_evm_transaction_failed"
)

func malformed(format string, args ...any) *Error {
	return &Error{Status: 400, Code: CodeMalformed, Message: fmt.Sprintf(format, args...)}
}

func refused(code, format string, args ...any) *Error {
	return &Error{Status: 402, Code: code, Message: fmt.Sprintf(format, args...)}
}
