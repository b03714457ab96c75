package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

var (
	testKey, _ = crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	testNow    = time.Unix(1_800_000_000, 0)
	testOffer  = &Offer{
		Resource: ResourceInfo{URL: "https://api.example.com/x402/workflows", Description: "a workflow of summary", MimeType: "application/json"},
		Requirements: PaymentRequirements{Scheme: SchemeExact, Network: "eip155:1337", Amount: "10000000",
			Asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
			MaxTimeoutSeconds: 300, Extra: map[string]string{"name": "Settleflow Test USD", "version": "1", "product": "summary"}},
		Domain: Domain{Name: "Settleflow Test USD", Version: "1", ChainID: big.NewInt(1337), Contract: common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")},
	}
)

// validHeader is a PAYMENT-SIGNATURE that pays testOffer at testNow.
func validHeader(t testing.TB) string {
	a := &ExactAuthorization{To: common.HexToAddress(testOffer.Requirements.PayTo), Value: big.NewInt(10_000_000),
		ValidAfter: big.NewInt(0), ValidBefore: big.NewInt(testNow.Unix() + 300), Nonce: [32]byte{1, 2, 3}}
	if err := a.Sign(testKey, testOffer.Domain); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(a.Wire())
	req := testOffer.Requirements
	h, err := EncodeHeader(PaymentPayload{X402Version: 2, Resource: &testOffer.Resource, Accepted: &req, Payload: raw})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The digest is EIP-712's as go-ethereum's typed-data signer computes it
// (an implementation independent of ours), and a signature over it
// verifies.
func TestDigestIsEIP712(t *testing.T) {
	a := &ExactAuthorization{From: common.HexToAddress("0x857b06519E91e3A54538791bDbb0E22373e36b66"), To: common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C"),
		Value: big.NewInt(10000), ValidAfter: big.NewInt(1740672089), ValidBefore: big.NewInt(1740672154),
		Nonce: common.HexToHash("0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480")}
	d := testOffer.Domain
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
			"TransferWithAuthorization": {{Name: "from", Type: "address"}, {Name: "to", Type: "address"}, {Name: "value", Type: "uint256"},
				{Name: "validAfter", Type: "uint256"}, {Name: "validBefore", Type: "uint256"}, {Name: "nonce", Type: "bytes32"}},
		},
		PrimaryType: "TransferWithAuthorization",
		Domain:      apitypes.TypedDataDomain{Name: d.Name, Version: d.Version, ChainId: (*math.HexOrDecimal256)(d.ChainID), VerifyingContract: d.Contract.Hex()},
		Message: apitypes.TypedDataMessage{"from": a.From.Hex(), "to": a.To.Hex(), "value": "10000", "validAfter": "1740672089",
			"validBefore": "1740672154", "nonce": a.Nonce[:]},
	}
	want, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Digest(d); got != common.BytesToHash(want) {
		t.Fatalf("digest %s, go-ethereum's %x", got, want)
	}
	if err := a.Sign(testKey, d); err != nil {
		t.Fatal(err)
	}
	if s, err := a.Signer(d); err != nil || s != crypto.PubkeyToAddress(testKey.PublicKey) {
		t.Fatalf("signer %s, %v", s, err)
	}
	// A high-s twin of the signature is refused, as the token refuses it.
	n := crypto.S256().Params().N
	s := new(big.Int).SetBytes(a.Signature[32:64])
	hi := new(big.Int).Sub(n, s)
	twin := append([]byte{}, a.Signature...)
	copy(twin[32:64], common.LeftPadBytes(hi.Bytes(), 32))
	twin[64] ^= 1 // 27 <-> 28
	b := *a
	b.Signature = twin
	if _, err := b.Signer(d); err == nil {
		t.Fatal("a high-s signature was accepted")
	}
}

func TestVerifyValid(t *testing.T) {
	p, err := DecodePaymentPayload(validHeader(t))
	if err != nil {
		t.Fatal(err)
	}
	a, err := testOffer.Verify(p, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if a.From != crypto.PubkeyToAddress(testKey.PublicKey) {
		t.Fatalf("from %s", a.From)
	}
}

// Malformed headers are 400s naming what is wrong.
func TestDecodeMalformed(t *testing.T) {
	valid, _ := base64.StdEncoding.DecodeString(validHeader(t))
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for name, h := range map[string]string{
		"empty":            "",
		"not base64":       "%%%",
		"unpadded":         strings.TrimRight(validHeader(t), "="),
		"url alphabet":     strings.NewReplacer("+", "-", "/", "_").Replace(enc(string(valid) + "   ??>>")),
		"json array":       enc(`[]`),
		"trailing data":    enc(string(valid) + `{}`),
		"unknown field":    enc(strings.Replace(string(valid), `"x402Version":2`, `"x402Version":2,"x":1`, 1)),
		"no accepted":      enc(`{"x402Version":2,"payload":{}}`),
		"no payload":       enc(`{"x402Version":2,"accepted":{}}`),
		"version 1":        enc(strings.Replace(string(valid), `"x402Version":2`, `"x402Version":1`, 1)),
		"too long":         strings.Repeat("A", MaxHeaderBytes+4),
		"version a string": enc(strings.Replace(string(valid), `"x402Version":2`, `"x402Version":"2"`, 1)),
	} {
		_, err := DecodePaymentPayload(h)
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 || e.Message == "" {
			t.Errorf("%s: %v, want a 400 *Error", name, err)
		}
	}
}

// ParseExact refuses what is not canonical.
func TestParseExactMalformed(t *testing.T) {
	good := `{"signature":"0x` + strings.Repeat("ab", 65) + `","authorization":{"from":"0x857b06519E91e3A54538791bDbb0E22373e36b66","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"10000","validAfter":"0","validBefore":"1740672154","nonce":"0x` + strings.Repeat("0f", 32) + `"}}`
	if _, err := ParseExact(json.RawMessage(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ from, to string }{
		{`"value":"10000"`, `"value":"010000"`},
		{`"value":"10000"`, `"value":"-1"`},
		{`"value":"10000"`, `"value":10000`},
		{`"value":"10000"`, `"value":"1e4"`},
		{`"value":"10000"`, `"value":"` + strings.Repeat("9", 78) + `"`},
		{`"validAfter":"0"`, `"validAfter":""`},
		{`"from":"0x857b`, `"from":"857b"`},
		{`"from":"0x857b06519E91e3A54538791bDbb0E22373e36b66"`, `"from":"0x857b06519E91e3A54538791bDbb0E22373e36b6"`},
		{`"nonce":"0x`, `"nonce":"0xzz`},
		{`"signature":"0x`, `"signature":"0xab`},
		{`"signature":"0x`, `"signature":"`},
		{`,"nonce"`, `,"extra":1,"nonce"`},
		{`"authorization":{`, `"authorization":null,"x":{`},
	} {
		s := strings.Replace(good, bad.from, bad.to, 1)
		if s == good {
			t.Fatalf("the case %q changes nothing", bad.to)
		}
		_, err := ParseExact(json.RawMessage(s))
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 {
			t.Errorf("%s: %v, want a 400", bad.to, err)
		}
	}
}

// The header codecs never panic, refuse with 400s only, and what they
// accept meets the schema.
func FuzzDecodePaymentPayload(f *testing.F) {
	f.Add(validHeader(f))
	f.Add("")
	f.Add("e30=")
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{},"payload":1}`)))
	f.Fuzz(func(t *testing.T, h string) {
		p, err := DecodePaymentPayload(h)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%v is not a 400 *Error", err)
			}
			return
		}
		if p.X402Version != 2 || p.Accepted == nil || len(p.Payload) == 0 {
			t.Fatalf("accepted %+v", p)
		}
		// Verify never panics and answers only *Errors.
		if _, err := testOffer.Verify(p, testNow); err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Status != 400 && e.Status != 402) {
				t.Fatalf("Verify: %v", err)
			}
		}
	})
}

// ParseExact never panics, and what it accepts round-trips through Wire.
func FuzzParseExact(f *testing.F) {
	raw, _ := base64.StdEncoding.DecodeString(validHeader(f))
	var p PaymentPayload
	_ = json.Unmarshal(raw, &p)
	f.Add([]byte(p.Payload))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"signature":"0x","authorization":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseExact(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%v is not a 400 *Error", err)
			}
			return
		}
		if len(a.Signature) != 65 || a.Value.Sign() < 0 || a.Value.BitLen() > 256 || a.ValidBefore.BitLen() > 256 {
			t.Fatalf("accepted %+v", a)
		}
		again, _ := json.Marshal(a.Wire())
		b2, err := ParseExact(again)
		if err != nil || b2.From != a.From || b2.To != a.To || b2.Value.Cmp(a.Value) != 0 || b2.Nonce != a.Nonce ||
			b2.ValidAfter.Cmp(a.ValidAfter) != 0 || b2.ValidBefore.Cmp(a.ValidBefore) != 0 || string(b2.Signature) != string(a.Signature) {
			t.Fatalf("round trip: %v %+v", err, b2)
		}
		_, _ = a.Signer(testOffer.Domain)
	})
}

// Every field of a valid payment changed alone is refused by Verify.
func TestVerifyEachField(t *testing.T) {
	raw, _ := base64.StdEncoding.DecodeString(validHeader(t))
	for _, c := range []struct{ from, to, code string }{
		{`"scheme":"exact"`, `"scheme":"upto"`, CodeScheme},
		{`"network":"eip155:1337"`, `"network":"eip155:8453"`, CodeNetwork},
		{`"amount":"10000000"`, `"amount":"9999999"`, CodeAmount},
		{`"value":"10000000"`, `"value":"9999999"`, CodeAmount},
		{`"asset":"0x5`, `"asset":"0x6`, CodeAsset},
		{`"payTo":"0x2`, `"payTo":"0x3`, CodeRecipient},
		{`"to":"0x2`, `"to":"0x3`, CodeRecipient},
		{`"url":"https://api.example.com/x402/workflows"`, `"url":"https://api.example.com/x402/workflows/other"`, CodeResource},
		{`"product":"summary"`, `"product":"other"`, CodeResource},
		{`"maxTimeoutSeconds":300`, `"maxTimeoutSeconds":301`, CodeRequirements},
		{`"version":"1"`, `"version":"2"`, CodeRequirements},
		{`"validAfter":"0"`, `"validAfter":"1800000000"`, CodeValidAfter},
		{`"validBefore":"1800000300"`, `"validBefore":"1800000005"`, CodeValidBefore},
		{`"nonce":"0x01`, `"nonce":"0x02`, CodeSignature},
	} {
		s := strings.Replace(string(raw), c.from, c.to, 1)
		if s == string(raw) {
			t.Fatalf("%s: changes nothing in %s", c.to, raw)
		}
		p, err := DecodePaymentPayload(base64.StdEncoding.EncodeToString([]byte(s)))
		if err != nil {
			t.Fatalf("%s: %v", c.to, err)
		}
		_, err = testOffer.Verify(p, testNow)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || e.Status != 402 {
			t.Errorf("%s: %v, want 402 %s", c.to, err, c.code)
		}
	}
}
