package declared

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/settleflow/settleflow"
)

// Unit kinds of a per-unit cost: what is counted at the field a pointer
// names.
const (
	// UnitValue counts an integer's value; the schema must type the field
	// "integer" with a "minimum" of at least 0.
	UnitValue = "value"
	// UnitLength counts a string's characters (Unicode code points, as the
	// schema's minLength and maxLength count them) or an array's items;
	// the schema must type the field "string" or "array".
	UnitLength = "length"
	// UnitBytes counts a string's bytes in UTF-8; the schema must type the
	// field "string".
	UnitBytes = "bytes"
)

// over is what a cost saturates at: one minor unit above the largest amount
// the engine handles, which it refuses (quote_out_of_range), so no
// arithmetic wraps.
const over = settleflow.MaxAmount + 1

// Estimate is a declarative estimate, checked against its product's payload
// schema:
//
//	cost = min(max, base + Σ perUnit + Σ surcharges)
//	perUnit   = ceil(min(units, maxUnits) / per) × cost per block
//	surcharge = costs[the enum's value] (absent when the field is absent)
//
// where a per-unit term's cost per block is fixed or chosen by an enum
// field's value. Every amount is in minor units; the sums saturate above
// settleflow.MaxAmount instead of wrapping, and the engine refuses such an
// estimate (quote_out_of_range).
type Estimate struct {
	base       int64
	perUnit    []perUnit
	surcharges []enumCost
	max        int64 // -1: no cap
}

type perUnit struct {
	pointer  []string
	unit     string
	cost     int64     // when by is nil
	by       *enumCost // the cost per block, by an enum field's value
	per      int64     // units per block, at least 1
	maxUnits int64     // -1: no cap
}

type enumCost struct {
	pointer []string
	costs   map[string]int64
	absent  int64
}

// Cost is the estimate of payload, decoded as encoding/json does with
// UseNumber (settleflow.RawProduct.Estimate's argument) and valid against
// the schema the estimate was checked with. A value whose type the schema
// should have refused is a *settleflow.FieldError naming it.
func (e *Estimate) Cost(payload any) (int64, error) {
	total := e.base
	for _, t := range e.perUnit {
		v, ok := lookup(payload, t.pointer)
		if !ok {
			continue // an absent field counts 0 units
		}
		units, err := count(v, t.unit, t.pointer)
		if err != nil {
			return 0, err
		}
		if t.maxUnits >= 0 {
			units = min(units, t.maxUnits)
		}
		blocks := units / t.per
		if units%t.per != 0 {
			blocks++
		}
		cost := t.cost
		if t.by != nil {
			if cost, err = t.by.cost(payload); err != nil {
				return 0, err
			}
		}
		total = satAdd(total, satMul(blocks, cost))
	}
	for _, s := range e.surcharges {
		c, err := s.cost(payload)
		if err != nil {
			return 0, err
		}
		total = satAdd(total, c)
	}
	if e.max >= 0 {
		total = min(total, e.max)
	}
	return total, nil
}

func (c *enumCost) cost(payload any) (int64, error) {
	v, ok := lookup(payload, c.pointer)
	if !ok {
		return c.absent, nil
	}
	s, isString := v.(string)
	cost, known := c.costs[s]
	if !isString || !known {
		return 0, &settleflow.FieldError{Field: field(c.pointer), Message: "must be one of " + strings.Join(keys(c.costs), ", ")}
	}
	return cost, nil
}

// satAdd and satMul are a+b and a×b for 0 ≤ a, b, saturating at over.
func satAdd(a, b int64) int64 {
	if a >= over-b {
		return over
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a >= over/b+1 {
		return over
	}
	return min(a*b, over)
}

// lookup finds the value at pointer (member names) in v.
func lookup(v any, pointer []string) (any, bool) {
	for _, name := range pointer {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// count is the units of v by unit kind.
func count(v any, unit string, pointer []string) (int64, error) {
	switch unit {
	case UnitValue:
		if n, ok := v.(json.Number); ok {
			if u, ok := integer(n); ok {
				return u, nil
			}
		}
		return 0, &settleflow.FieldError{Field: field(pointer), Message: "must be a non-negative integer"}
	case UnitLength:
		switch x := v.(type) {
		case string:
			return int64(utf8.RuneCountInString(x)), nil
		case []any:
			return int64(len(x)), nil
		}
		return 0, &settleflow.FieldError{Field: field(pointer), Message: "must be a string or an array"}
	case UnitBytes:
		if s, ok := v.(string); ok {
			return int64(len(s)), nil
		}
		return 0, &settleflow.FieldError{Field: field(pointer), Message: "must be a string"}
	}
	return 0, fmt.Errorf("declared: unknown unit %q", unit)
}

// integer reads a JSON number that is a non-negative integer (1, 1.0, 1e3
// all are, as JSON Schema's "integer" has it), saturating at over.
func integer(n json.Number) (int64, bool) {
	if u, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return u, u >= 0
	}
	// Exponents are bounded before big.Rat expands them: 1e999999999
	// would take gigabytes. The mantissa of a huge exponent decides.
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(s) < 400 {
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return 0, false
		}
		if exp > 400 || exp < -400 {
			mant, ok := new(big.Rat).SetString(s[:i])
			switch {
			case !ok || mant.Sign() < 0:
				return 0, false
			case mant.Sign() == 0:
				return 0, true
			case exp < 0:
				return 0, false // at most 400 digits: a fraction
			}
			return over, true
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || r.Sign() < 0 {
		return 0, false
	}
	if !r.Num().IsInt64() || r.Num().Int64() > over {
		return over, true
	}
	return r.Num().Int64(), true
}

// field is the payload field a pointer names, as settleflow.FieldError
// spells it.
func field(pointer []string) string { return strings.Join(pointer, ".") }

func keys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parsePointer reads an RFC 6901 JSON Pointer naming a member of the
// payload ("/pages", "/customer/tier"); "" (the whole payload) is refused.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, fmt.Errorf(`must name a field of the payload ("/pages"), not the whole payload`)
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON Pointer: it must start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		for j := 0; j < len(s); j++ {
			if s[j] == '~' && (j+1 == len(s) || (s[j+1] != '0' && s[j+1] != '1')) {
				return nil, fmt.Errorf("%q is not a JSON Pointer: ~ must be followed by 0 or 1", p)
			}
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// resolved is what the payload schema says of the field a pointer names.
type resolved struct {
	schema   *jsonschema.Schema
	required bool // every member on the way is required: never absent
}

// resolve finds the schema of the member pointer names: each step a member
// declared under "properties" (directly, through "$ref" or in an "allOf").
func resolve(root *jsonschema.Schema, pointer []string) (resolved, error) {
	s, required := root, true
	for i, name := range pointer {
		next, req := property(s, name, 0)
		if next == nil {
			where := "the payload schema"
			if i > 0 {
				where = "/" + strings.Join(escape(pointer[:i]), "/") + " in the payload schema"
			}
			return resolved{}, fmt.Errorf("%q is not a property of %s", "/"+strings.Join(escape(pointer[:i+1]), "/"), where)
		}
		s, required = next, required && req
	}
	return resolved{schema: s, required: required}, nil
}

func escape(parts []string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	return out
}

// property is the schema of member name of objects s describes, and
// whether s requires it.
func property(s *jsonschema.Schema, name string, depth int) (*jsonschema.Schema, bool) {
	if s == nil || depth > 16 {
		return nil, false
	}
	req := false
	for _, r := range s.Required {
		req = req || r == name
	}
	if p, ok := s.Properties[name]; ok {
		return p, req
	}
	if p, r := property(s.Ref, name, depth+1); p != nil {
		return p, req || r
	}
	for _, sub := range s.AllOf {
		if p, r := property(sub, name, depth+1); p != nil {
			return p, req || r
		}
	}
	return nil, false
}

// facts are the assertions of a schema and the schemas it refers to by
// "$ref" and "allOf" that a unit kind depends on.
type facts struct {
	types   []string // nil: "type" not stated
	enum    []any    // nil: no "enum"
	minimum *big.Rat // the least integer allowed by minimum and exclusiveMinimum (nil: none)
}

func factsOf(s *jsonschema.Schema, depth int) facts {
	var f facts
	if s == nil || depth > 16 {
		return f
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		f.types = s.Types.ToStrings()
	}
	if s.Enum != nil {
		f.enum = s.Enum.Values
	}
	// For an integer, > x is ≥ x + 1 as far as "can it be negative" goes.
	var excl *big.Rat
	if s.ExclusiveMinimum != nil {
		excl = new(big.Rat).Add(s.ExclusiveMinimum, big.NewRat(1, 1))
	}
	f.minimum = larger(s.Minimum, excl)
	for _, sub := range append([]*jsonschema.Schema{s.Ref}, s.AllOf...) {
		g := factsOf(sub, depth+1)
		if f.types == nil {
			f.types = g.types
		}
		if f.enum == nil {
			f.enum = g.enum
		}
		f.minimum = larger(f.minimum, g.minimum)
	}
	return f
}

func larger(a, b *big.Rat) *big.Rat {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Cmp(b) >= 0:
		return a
	}
	return b
}

// checkUnit says whether the field's schema fits unit.
func checkUnit(f facts, unit string) error {
	only := func(t ...string) bool {
		return len(f.types) == 1 && contains(t, f.types[0])
	}
	switch unit {
	case UnitValue:
		if !only("integer") {
			return fmt.Errorf(`unit "value" counts an integer, but the payload schema types the field %s; give it "type": "integer"`, typesOf(f))
		}
		if f.minimum == nil || f.minimum.Sign() < 0 {
			return fmt.Errorf(`unit "value" needs a field that cannot be negative; give it "minimum": 0 in the payload schema`)
		}
	case UnitLength:
		if !only("string", "array") {
			return fmt.Errorf(`unit "length" counts a string's characters or an array's items, but the payload schema types the field %s; give it "type": "string" or "array"`, typesOf(f))
		}
	case UnitBytes:
		if !only("string") {
			return fmt.Errorf(`unit "bytes" counts a string's UTF-8 bytes, but the payload schema types the field %s; give it "type": "string"`, typesOf(f))
		}
	default:
		return fmt.Errorf(`%q is not a unit: use "value", "length" or "bytes"`, unit)
	}
	return nil
}

func typesOf(f facts) string {
	if f.types == nil {
		return "without a type"
	}
	return strings.Join(f.types, " or ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
