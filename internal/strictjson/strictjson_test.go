package strictjson

import (
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
)

type item struct {
	SKU string `json:"sku"`
}

type payload struct {
	TicketID    string         `json:"ticketId"`
	Attachments int            `json:"attachments"`
	Items       []item         `json:"items"`
	Extra       map[string]any `json:"extra"`
	Any         any            `json:"any"`
	Amount      stdjson.Number `json:"amount"`
	Raw         stdjson.RawMessage
}

func TestUnmarshalObjectRefuses(t *testing.T) {
	deep := strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth)
	for _, c := range []struct {
		name string
		in   string
		kind Kind
		path string // Error.Param("")
	}{
		{"empty", "  \n", Empty, ""},
		{"array", `[1]`, NotObject, ""},
		{"null", `null`, NotObject, ""},
		{"garbage", `nope`, Syntax, ""},
		{"truncated", `{"ticketId":`, Syntax, "ticketId"},
		{"duplicate", `{"attachments":0,"ticketId":"x","attachments":50}`, DuplicateName, "attachments"},
		{"duplicate nested", `{"items":[{"sku":"a","sku":"b"}]}`, DuplicateName, "items.0.sku"},
		{"duplicate in free-form", `{"extra":{"a":1,"a":2}}`, DuplicateName, "extra.a"},
		{"case", `{"ATTACHMENTS":50}`, UnknownName, "ATTACHMENTS"},
		{"case nested", `{"items":[{"Sku":"a"}]}`, UnknownName, "items.0.Sku"},
		{"unknown", `{"color":"red"}`, UnknownName, "color"},
		{"pointer escapes", `{"a/b~c":1}`, UnknownName, "a/b~c"},
		{"utf8 value", "{\"ticketId\":\"a\xffb\"}", InvalidUTF8, "ticketId"},
		{"utf8 nested", "{\"extra\":{\"s\":\"\xc3\"}}", InvalidUTF8, "extra.s"},
		{"utf8 name", "{\"ti\xffck\":1}", InvalidUTF8, ""},
		{"lone surrogate", `{"ticketId":"\ud800"}`, Syntax, "ticketId"},
		{"trailing", `{"ticketId":"x"} x`, TrailingData, ""},
		{"trailing object", `{"ticketId":"x"}{}`, TrailingData, ""},
		{"too deep", `{"extra":{"a":` + deep + `}}`, TooDeep, "extra.a" + strings.Repeat(".0", MaxDepth-3)},
		{"type", `{"attachments":"5"}`, Type, "attachments"},
		{"fraction", `{"attachments":1.5}`, Type, "attachments"},
		{"overflow", `{"attachments":1e400}`, Type, "attachments"},
		{"type nested", `{"items":[{"sku":1}]}`, Type, "items.0.sku"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v payload
			err := UnmarshalObject([]byte(c.in), &v)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Kind != c.kind || e.Param("") != c.path {
				t.Fatalf("kind %d path %q, want %d %q (%v)", e.Kind, e.Param(""), c.kind, c.path, err)
			}
			if msg := e.Message(e.Param("payload")); msg == "" || !strings.Contains(msg, "payload") {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

// The depth limit is exact: MaxDepth levels pass, one more does not, and
// brackets inside strings (escaped quotes included) do not count.
func TestDepthLimit(t *testing.T) {
	nest := func(n int) string { // n levels including the outer object
		return `{"any":` + strings.Repeat(`[`, n-1) + strings.Repeat(`]`, n-1) + `}`
	}
	var v payload
	if err := UnmarshalObject([]byte(nest(MaxDepth)), &v); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
	var e *Error
	if err := UnmarshalObject([]byte(nest(MaxDepth+1)), &v); !errors.As(err, &e) || e.Kind != TooDeep {
		t.Fatalf("depth %d: %v", MaxDepth+1, err)
	}
	brackets := `{"ticketId":"\"\\` + strings.Repeat(`[{`, 100) + `\\\"","any":[[1]]}`
	if err := UnmarshalObject([]byte(brackets), &v); err != nil || v.TicketID == "" {
		t.Fatalf("brackets in a string: %v", err)
	}
	if tooDeep([]byte(`{"a":"unterminated [[[[`), 1) != -1 {
		t.Fatal("unterminated string counted")
	}
}

func TestUnmarshalObjectAccepts(t *testing.T) {
	in := " {\"ticketId\":\"T-1 é \\u00e9 \\ud83d\\ude00\",\"attachments\":2,\"items\":[{\"sku\":\"a\"}]," +
		"\"extra\":{\"n\":12345678901234567890123,\"m\":[1.5]},\"any\":99999999999999999999,\"amount\":1.10," +
		"\"Raw\":{\"k\":[1,2]}}\n"
	var v payload
	if err := UnmarshalObject([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.TicketID != "T-1 é é 😀" || v.Attachments != 2 || len(v.Items) != 1 || v.Items[0].SKU != "a" {
		t.Fatalf("decoded %+v", v)
	}
	// Numbers in free-form values keep their digits (encoding/json.Number),
	// as encoding/json with UseNumber gave products before.
	if n, ok := v.Extra["n"].(stdjson.Number); !ok || n != "12345678901234567890123" {
		t.Fatalf("extra.n = %#v", v.Extra["n"])
	}
	if m, ok := v.Extra["m"].([]any); !ok || m[0] != stdjson.Number("1.5") {
		t.Fatalf("extra.m = %#v", v.Extra["m"])
	}
	if v.Any != stdjson.Number("99999999999999999999") || v.Amount != "1.10" || string(v.Raw) != `{"k":[1,2]}` {
		t.Fatalf("any %#v amount %q raw %s", v.Any, v.Amount, v.Raw)
	}
	// A string in an interface stays a string; null leaves zero values.
	var w payload
	if err := UnmarshalObject([]byte(`{"any":"s","attachments":null}`), &w); err != nil || w.Any != "s" {
		t.Fatalf("%v %#v", err, w.Any)
	}
}

func TestMessages(t *testing.T) {
	var v payload
	for in, want := range map[string]string{
		`{"attachments":1.5}`:             "payload.attachments must be an integer that fits in 64 bits, not 1.5",
		`{"ticketId":true}`:               "payload.ticketId must be a string, not a boolean",
		`{"ATTACHMENTS":1}`:               "Received unknown parameter: payload.ATTACHMENTS (names are case-sensitive)",
		`{"ticketId":"a","ticketId":"b"}`: "payload.ticketId is given more than once; give each name once",
	} {
		err := UnmarshalObject([]byte(in), &v)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v", in, err)
		}
		if got := e.Message(e.Param("payload")); got != want {
			t.Errorf("%s: message %q, want %q", in, got, want)
		}
	}
}

// The old decoder, for comparison: encoding/json with unknown fields
// disallowed, as httpapi and the product registry used before.
func BenchmarkDecode(b *testing.B) {
	body := []byte(`{"product":"ticket-triage","customerId":"cus_123","payload":{"ticketId":"T-42","subject":"Refund for invoice 7","attachments":1}}`)
	type createBody struct {
		Product    *string            `json:"product"`
		CustomerID *string            `json:"customerId"`
		Payload    stdjson.RawMessage `json:"payload"`
	}
	b.Run("strictjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v createBody
			if err := UnmarshalObject(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v createBody
			dec := stdjson.NewDecoder(strings.NewReader(string(body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
