package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"regexp"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Version is the x402 protocol version this package speaks.
const Version = 2

// SchemeExact is the scheme of a fixed amount, on EVM an EIP-3009
// transferWithAuthorization.
const SchemeExact = "exact"

// The HTTP headers of x402 version 2 (transports-v2/http.md).
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
)

// MaxHeaderBytes bounds a PAYMENT-SIGNATURE header: an exact payment is
// well under 2 KiB encoded; a larger header is refused before it is decoded.
const MaxHeaderBytes = 8 << 10

// ResourceInfo describes the resource paid for.
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PaymentRequirements is one way to pay (an element of accepts).
type PaymentRequirements struct {
	Scheme string `json:"scheme"`
	// Network is a CAIP-2 chain id, "eip155:<chain id>".
	Network string `json:"network"`
	// Amount is in the token's base units, a decimal string.
	Amount string `json:"amount"`
	// Asset is the token's address.
	Asset string `json:"asset"`
	// PayTo is the address the money goes to.
	PayTo             string `json:"payTo"`
	MaxTimeoutSeconds int64  `json:"maxTimeoutSeconds"`
	// Extra holds the token's EIP-712 domain (name, version) and the
	// product sold (product).
	Extra map[string]string `json:"extra,omitempty"`
}

// PaymentRequired is the PAYMENT-REQUIRED header's object.
type PaymentRequired struct {
	X402Version int                        `json:"x402Version"`
	Error       string                     `json:"error,omitempty"`
	Resource    ResourceInfo               `json:"resource"`
	Accepts     []PaymentRequirements      `json:"accepts"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PaymentPayload is the PAYMENT-SIGNATURE header's object.
type PaymentPayload struct {
	X402Version int                  `json:"x402Version"`
	Resource    *ResourceInfo        `json:"resource,omitempty"`
	Accepted    *PaymentRequirements `json:"accepted"`
	// Payload is the scheme's: for exact on EVM an [ExactPayload].
	Payload    json.RawMessage            `json:"payload"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ExactPayload is the exact scheme's payload on EVM with EIP-3009.
type ExactPayload struct {
	// Signature is the payer's 65-byte EIP-712 signature, 0x-hex.
	Signature     string         `json:"signature"`
	Authorization *Authorization `json:"authorization"`
}

// Authorization is an EIP-3009 TransferWithAuthorization as x402 carries
// it: addresses 0x-hex, numbers decimal strings, the nonce 32 bytes 0x-hex.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// SettlementResponse is the PAYMENT-RESPONSE header's object.
type SettlementResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	// Transaction is the transfer's hash ("" when nothing was sent).
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Amount      string `json:"amount,omitempty"`
}

// EncodeHeader is the header form of v: base64 (standard, padded) of its
// JSON, as the official clients write and read it.
func EncodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// decodeHeader reads a header value into v: standard base64 of exactly one
// JSON object of v's schema, no unknown fields.
func decodeHeader(name, value string, v any) *Error {
	if value == "" {
		return malformed("the %s header is empty", name)
	}
	if len(value) > MaxHeaderBytes {
		return malformed("the %s header is %d bytes, more than the %d allowed", name, len(value), MaxHeaderBytes)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(value)
	if err != nil {
		return malformed("the %s header is not standard base64 (RFC 4648, padded): %v", name, err)
	}
	if err := strictJSON(raw, v); err != nil {
		return malformed("the %s header does not hold a valid object: %v", name, err)
	}
	return nil
}

// strictJSON decodes one JSON object into v, refusing unknown fields and
// trailing data.
func strictJSON(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// DecodePaymentRequired reads a PAYMENT-REQUIRED header.
func DecodePaymentRequired(value string) (*PaymentRequired, error) {
	var p PaymentRequired
	if err := decodeHeader(HeaderPaymentRequired, value, &p); err != nil {
		return nil, err
	}
	if p.X402Version != Version {
		return nil, &Error{Status: 400, Code: CodeVersion, Message: "x402Version must be 2"}
	}
	return &p, nil
}

// DecodePaymentResponse reads a PAYMENT-RESPONSE header.
func DecodePaymentResponse(value string) (*SettlementResponse, error) {
	var p SettlementResponse
	if err := decodeHeader(HeaderPaymentResponse, value, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// DecodePaymentPayload reads a PAYMENT-SIGNATURE header: version 2, an
// accepted requirement and a payload present. The payload itself is read
// by [ParseExact].
func DecodePaymentPayload(value string) (*PaymentPayload, error) {
	var p PaymentPayload
	if err := decodeHeader(HeaderPaymentSignature, value, &p); err != nil {
		return nil, err
	}
	switch {
	case p.X402Version != Version:
		return nil, &Error{Status: 400, Code: CodeVersion, Message: "x402Version must be 2"}
	case p.Accepted == nil:
		return nil, malformed("the payment names no accepted requirements (accepted is required)")
	case len(p.Payload) == 0 || string(p.Payload) == "null":
		return nil, malformed("the payment has no payload")
	}
	return &p, nil
}

// ExactAuthorization is an exact payload parsed: what the token checks.
type ExactAuthorization struct {
	From, To    common.Address
	Value       *big.Int
	ValidAfter  *big.Int
	ValidBefore *big.Int
	Nonce       [32]byte
	// Signature is 65 bytes: r, s, v.
	Signature []byte
}

var (
	addressPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	bytes32Pattern = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	sigPattern     = regexp.MustCompile(`^0x[0-9a-fA-F]{130}$`)
	uintPattern    = regexp.MustCompile(`^(0|[1-9][0-9]{0,77})$`)
	maxUint256     = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
)

// ParseAddress reads a 0x-prefixed 20-byte hex address (any case; the
// checksum is not required, as the official clients do not require it).
func ParseAddress(field, s string) (common.Address, *Error) {
	if !addressPattern.MatchString(s) {
		return common.Address{}, malformed("%s must be a 0x-prefixed 20-byte hex address", field)
	}
	return common.HexToAddress(s), nil
}

// parseUint256 reads a canonical decimal string of at most 256 bits.
func parseUint256(field, s string) (*big.Int, *Error) {
	if !uintPattern.MatchString(s) {
		return nil, malformed("%s must be a decimal string of digits with no sign or leading zeros", field)
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Cmp(maxUint256) > 0 {
		return nil, malformed("%s does not fit in 256 bits", field)
	}
	return v, nil
}

// ParseExact reads an exact scheme payload on EVM: every field present and
// canonical, a 65-byte signature (an EOA's; smart-wallet signatures are
// not accepted).
func ParseExact(raw json.RawMessage) (*ExactAuthorization, error) {
	var p ExactPayload
	if err := strictJSON(raw, &p); err != nil {
		return nil, malformed("the exact payload is not {signature, authorization}: %v", err)
	}
	if p.Authorization == nil {
		return nil, malformed("payload.authorization is required")
	}
	a := p.Authorization
	var out ExactAuthorization
	var e *Error
	if out.From, e = ParseAddress("payload.authorization.from", a.From); e != nil {
		return nil, e
	}
	if out.To, e = ParseAddress("payload.authorization.to", a.To); e != nil {
		return nil, e
	}
	if out.Value, e = parseUint256("payload.authorization.value", a.Value); e != nil {
		return nil, e
	}
	if out.ValidAfter, e = parseUint256("payload.authorization.validAfter", a.ValidAfter); e != nil {
		return nil, e
	}
	if out.ValidBefore, e = parseUint256("payload.authorization.validBefore", a.ValidBefore); e != nil {
		return nil, e
	}
	if !bytes32Pattern.MatchString(a.Nonce) {
		return nil, malformed("payload.authorization.nonce must be 32 bytes of 0x-prefixed hex")
	}
	copy(out.Nonce[:], hexutil.MustDecode(strings.ToLower(a.Nonce)))
	if !sigPattern.MatchString(p.Signature) {
		return nil, malformed("payload.signature must be a 65-byte signature in 0x-prefixed hex (r, s, v)")
	}
	out.Signature = hexutil.MustDecode(strings.ToLower(p.Signature))
	return &out, nil
}
