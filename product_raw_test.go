package settleflow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func rawProduct() RawProduct {
	return RawProduct{
		Name:  "raw",
		Price: Price{TargetMargin: 2000, MinimumCharge: 10},
		PayloadSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"pages": {"type": "integer", "minimum": 1},
				"items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string", "minLength": 2}}, "required": ["sku"]}}
			},
			"required": ["pages"],
			"additionalProperties": false
		}`),
		Example: json.RawMessage(`{"pages": 2}`),
		Estimate: func(p any) (int64, error) {
			n, err := p.(map[string]any)["pages"].(json.Number).Int64()
			return 10 * n, err
		},
		Execute: func(context.Context, json.RawMessage) (Execution, error) { return Execution{}, nil },
	}
}

// A product registered with RegisterRaw takes payloads its schema accepts,
// priced by its Estimate, and refuses the others naming the field as a Go
// product's payload errors do.
func TestRegisterRawPayloads(t *testing.T) {
	r := NewProducts()
	if err := RegisterRaw(r, rawProduct()); err != nil {
		t.Fatal(err)
	}
	info, _ := r.Get("raw")
	if !strings.HasPrefix(string(info.PayloadSchema), `{"type":"object","properties":{"pages":`) || string(info.Example) != `{"pages":2}` {
		t.Errorf("catalogue: schema %s, example %s", info.PayloadSchema, info.Example)
	}
	p, _ := r.get("raw")
	if c, err := p.estimate(json.RawMessage(`{"pages": 7, "items": [{"sku": "ab"}]}`)); err != nil || c != 70 {
		t.Fatalf("estimate %d, %v", c, err)
	}
	for _, c := range []struct {
		payload, param string
		code           ErrorCode
	}{
		{`{}`, "payload.pages", CodeParameterMissing},
		{`{"pages": 0}`, "payload.pages", CodeParameterInvalid},
		{`{"pages": "2"}`, "payload.pages", CodeParameterInvalid},
		{`{"pages": 2, "Pages": 3}`, "payload.Pages", CodeParameterUnknown},
		{`{"pages": 2, "pages": 3}`, "payload.pages", CodeParameterInvalid},
		{`{"pages": 2, "items": [{"sku": "ab"}, {"sku": "a"}]}`, "payload.items.1.sku", CodeParameterInvalid},
		{`{"pages": 2, "items": [{}]}`, "payload.items.0.sku", CodeParameterMissing},
		{`[]`, "payload", CodeParameterInvalid},
		{`{"pages": 2} {}`, "payload", CodeParameterInvalid},
		{"{\"pages\": 2, \"x\": \"\xff\"}", "payload.x", CodeParameterInvalid},
	} {
		_, err := p.estimate(json.RawMessage(c.payload))
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Param != c.param || inv.Code != c.code || !strings.HasPrefix(inv.Message, c.param) {
			t.Errorf("%s: got %v, want %s naming %s", c.payload, err, c.code, c.param)
		}
	}
	// Execute checks the payload again: one stored under another schema
	// fails for good rather than running.
	if _, err := p.execute(context.Background(), json.RawMessage(`{"pages": 0}`)); !IsPermanent(err) {
		t.Errorf("execute of an invalid payload: %v", err)
	}
}

func TestRegisterRawRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*RawProduct)
		want string
	}{
		{"no schema", func(p *RawProduct) { p.PayloadSchema = nil }, "needs a payload schema"},
		{"bad schema", func(p *RawProduct) { p.PayloadSchema = json.RawMessage(`{"type": "object", "minProperties": -1}`) }, "payload schema"},
		{"not an object", func(p *RawProduct) { p.PayloadSchema = json.RawMessage(`{"type": "array"}`) }, `"type": "object"`},
		{"remote reference", func(p *RawProduct) {
			p.PayloadSchema = json.RawMessage(`{"type": "object", "$ref": "https://example.com/s.json"}`)
		}, "refers to another document"},
		{"example refused", func(p *RawProduct) { p.Example = json.RawMessage(`{"pages": 0}`) }, "the example payload is refused: settleflow: payload.pages"},
		{"no estimate", func(p *RawProduct) { p.Estimate = nil }, "needs Estimate and Execute"},
		{"bad name", func(p *RawProduct) { p.Name = "Raw" }, "product name"},
	} {
		p := rawProduct()
		c.edit(&p)
		if err := RegisterRaw(NewProducts(), p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
