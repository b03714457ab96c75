package wire_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/settleflow/settleflow/wire"
)

// The error envelope's JSON is docs/api.md §6's: Status and Header stay out
// of it, the 402 amounts appear only when set, and it reads back as written.
func TestErrorEnvelopeJSON(t *testing.T) {
	available, amount := int64(-20), int64(358)
	for _, c := range []struct {
		err  wire.Error
		want string
	}{
		{wire.Error{Status: 400, Header: http.Header{"Allow": {"GET"}}, Type: wire.ErrorTypeInvalidRequest,
			Code: wire.CodeParameterMissing, Message: "customerId is required", Param: "customerId", RequestID: "req_1"},
			`{"error":{"type":"invalid_request_error","code":"parameter_missing","message":"customerId is required","param":"customerId","requestId":"req_1"}}`},
		{wire.Error{Status: 402, Type: wire.ErrorTypePayment, Code: wire.CodeInsufficientFunds, Message: "m", RequestID: "req_2",
			Available: &available, Amount: &amount, Currency: "usd", CustomerID: "cus_1"},
			`{"error":{"type":"payment_error","code":"insufficient_funds","message":"m","requestId":"req_2","available":-20,"amount":358,"currency":"usd","customerId":"cus_1"}}`},
	} {
		b, err := json.Marshal(wire.ErrorEnvelope{Error: &c.err})
		if err != nil || string(b) != c.want {
			t.Fatalf("marshal: %s, %v; want %s", b, err, c.want)
		}
		var back wire.ErrorEnvelope
		if err := json.Unmarshal(b, &back); err != nil || back.Error == nil {
			t.Fatalf("unmarshal %s: %+v, %v", b, back, err)
		}
		want := c.err
		want.Status, want.Header = 0, nil
		if got, _ := json.Marshal(back.Error); string(got) != string(mustJSON(t, &want)) {
			t.Fatalf("read back %s, want %s", got, mustJSON(t, &want))
		}
		if back.Error.Error() != string(c.err.Code)+": "+c.err.Message {
			t.Fatalf("Error() = %q", back.Error.Error())
		}
	}
	var none wire.ErrorEnvelope
	if err := json.Unmarshal([]byte(`{"message":"a proxy's page"}`), &none); err != nil || none.Error != nil {
		t.Fatalf("a body without an error object: %+v, %v", none, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
