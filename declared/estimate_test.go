package declared

import (
	"errors"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/payloadschema"
)

// estimateOf parses a one-product file with the given schema properties and
// estimate, and returns the product.
func estimateOf(t *testing.T, properties, required, estimate string) *Product {
	t.Helper()
	file := `{"products": [{"name": "p", "payloadSchema": {"type": "object", "properties": ` + properties +
		`, "required": ` + required + `}, "pricing": {"model": "fixed", "targetMargin": 0}, "estimate": ` + estimate + `}]}`
	ps, err := Parse("p.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

func cost(t *testing.T, p *Product, payload string) (int64, error) {
	t.Helper()
	v, err := payloadschema.Decode([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	s, err := payloadschema.Compile(p.PayloadSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := payloadschema.Validate(s, v); err != nil {
		t.Fatalf("%s: %v", payload, err)
	}
	return p.Estimate.Cost(v)
}

func TestEstimateUnits(t *testing.T) {
	p := estimateOf(t, `{
		"n": {"type": "integer", "minimum": 0},
		"s": {"type": "string"},
		"a": {"type": "array"},
		"tier": {"type": "string", "enum": ["basic", "gold"]},
		"deep": {"type": "object", "properties": {"k": {"type": "integer", "exclusiveMinimum": -1}}}
	}`, `[]`, `{
		"base": 7,
		"perUnit": [
			{"pointer": "/n", "unit": "value", "cost": 3, "maxUnits": 10},
			{"pointer": "/s", "unit": "length", "cost": 2, "per": 3},
			{"pointer": "/s", "unit": "bytes", "cost": 1},
			{"pointer": "/a", "unit": "length", "costBy": {"pointer": "/tier", "costs": {"basic": 1, "gold": 4}, "absent": 2}},
			{"pointer": "/deep/k", "unit": "value", "cost": 100}
		],
		"surcharges": [{"pointer": "/tier", "costs": {"basic": 0, "gold": 50}, "absent": 5}],
		"max": 100000
	}`)
	for _, c := range []struct {
		payload string
		want    int64
	}{
		{`{}`, 7 + 5},                                     // base and the absent surcharge
		{`{"n": 4}`, 7 + 12 + 5},                          // 4 × 3
		{`{"n": 4.0}`, 7 + 12 + 5},                        // an integer in JSON Schema's sense
		{`{"n": 4e0}`, 7 + 12 + 5},                        //
		{`{"n": 400}`, 7 + 30 + 5},                        // capped at 10 units
		{`{"s": "abcd"}`, 7 + 2*2 + 4 + 5},                // ceil(4 / 3) blocks of 2, 4 bytes
		{`{"s": "ééé"}`, 7 + 2 + 6 + 5},                   // 3 characters, 6 bytes
		{`{"s": ""}`, 7 + 5},                              //
		{`{"a": [1, 2, 3]}`, 7 + 3*2 + 5},                 // no tier: the absent cost per item
		{`{"a": [1, 2, 3], "tier": "gold"}`, 7 + 12 + 50}, // 3 × 4, and the gold surcharge
		{`{"a": [], "tier": "basic"}`, 7},                 //
		{`{"deep": {"k": 2}}`, 7 + 200 + 5},               // a nested field
		{`{"deep": {}}`, 7 + 5},                           // absent inside
	} {
		got, err := cost(t, p, c.payload)
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.payload, got, err, c.want)
		}
	}
}

// No sum or product wraps: a cost past settleflow.MaxAmount saturates one
// above it, which the engine refuses (quote_out_of_range), and a cap
// applies to the saturated sum.
func TestEstimateSaturates(t *testing.T) {
	huge := estimateOf(t, `{"n": {"type": "integer", "minimum": 0}, "m": {"type": "integer", "minimum": 0}}`, `[]`, `{
		"base": 100000000000000,
		"perUnit": [{"pointer": "/n", "unit": "value", "cost": 100000000000000}, {"pointer": "/m", "unit": "value", "cost": 1}]
	}`)
	for _, payload := range []string{
		`{"n": 9223372036854775807}`, `{"n": 92233720368547758070}`, `{"n": 1e300}`, `{"n": 1e999999}`,
		`{"m": 9223372036854775807}`, `{"n": 1, "m": 1}`, `{"m": 1}`,
	} {
		got, err := cost(t, huge, payload)
		if err != nil || got != settleflow.MaxAmount+1 {
			t.Errorf("%s: %d, %v; want %d", payload, got, err, settleflow.MaxAmount+1)
		}
	}
	if got, err := cost(t, huge, `{}`); err != nil || got != settleflow.MaxAmount {
		t.Errorf("base alone: %d, %v", got, err)
	}
	capped := estimateOf(t, `{"n": {"type": "integer", "minimum": 0}}`, `[]`, `{
		"base": 1, "perUnit": [{"pointer": "/n", "unit": "value", "cost": 100000000000000}], "max": 5000}`)
	if got, err := cost(t, capped, `{"n": 1e40}`); err != nil || got != 5000 {
		t.Errorf("capped: %d, %v; want 5000", got, err)
	}
	if _, err := (settleflow.Price{}).Quote(settleflow.MaxAmount + 1); err == nil {
		t.Error("the engine quotes a saturated estimate")
	}
}

// A value the schema should have refused is named, not miscounted.
func TestEstimateNamesAWrongValue(t *testing.T) {
	p := estimateOf(t, `{"o": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}}`, `[]`,
		`{"base": 0, "perUnit": [{"pointer": "/o/n", "unit": "value", "cost": 1}]}`)
	_, err := p.Estimate.Cost(map[string]any{"o": map[string]any{"n": "3"}})
	var fe *settleflow.FieldError
	if !errors.As(err, &fe) || fe.Field != "o.n" || !strings.Contains(fe.Message, "integer") {
		t.Fatalf("got %v", err)
	}
}

func TestPointers(t *testing.T) {
	p := estimateOf(t, `{"a/b": {"type": "string"}, "c~d": {"type": "string"}}`, `[]`,
		`{"base": 0, "perUnit": [{"pointer": "/a~1b", "unit": "length", "cost": 1}, {"pointer": "/c~0d", "unit": "length", "cost": 10}]}`)
	if got, err := cost(t, p, `{"a/b": "xy", "c~d": "z"}`); err != nil || got != 12 {
		t.Fatalf("got %d, %v", got, err)
	}
	for _, bad := range []string{``, `pages`, `/a~2`, `/a~`} {
		if _, err := parsePointer(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
