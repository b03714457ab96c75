// Package declared reads products declared without Go: a products file (one
// JSON document listing products, each with its payload's JSON Schema, an
// example, its pricing and a declarative estimate) checked strictly, and
// registers them on an engine's registry next to its Go products.
//
// The file format, every field, the estimate's units and the errors are in
// docs/products.md. In short:
//
//	{"products": [{
//	  "name": "ticket-triage",
//	  "description": "Classifies a support ticket and routes it to a queue.",
//	  "payloadSchema": {"type": "object", "properties": {…}, "required": [...]},
//	  "example": {"ticketId": "T-42", "attachments": 1},
//	  "pricing": {"model": "fixed", "targetMargin": 0.3, "minimumCharge": 50},
//	  "pricingSummary": "…",
//	  "estimate": {"base": 200, "perUnit": [{"pointer": "/attachments", "unit": "value", "cost": 50}]}
//	}]}
//
// Parse refuses, with an *Error naming the file, line, column and field: a
// file that is not one JSON object, unknown or duplicate names (names are
// case-sensitive), a value of the wrong type, data after the document, a
// payload schema that does not compile, an estimate naming a field the
// schema does not declare or whose type does not fit the unit, an example
// that does not validate or price, and anything the engine's registry
// would refuse. A declared product runs through an [Executor] its caller
// supplies: a Go function today, remote workers later.
package declared

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/internal/payloadschema"
	"github.com/settleflow/settleflow/internal/strictjson"
	"github.com/settleflow/settleflow/wire"
)

// MaxFileSize is the largest products file Parse reads: 4 MiB.
const MaxFileSize = 4 << 20

// Product is a product declared in a products file, checked: its fields
// are those of settleflow.RawProduct, and Estimate is its declarative
// estimate, checked against PayloadSchema.
type Product struct {
	Name            string
	Description     string
	PayloadSchema   json.RawMessage
	Example         json.RawMessage // nil if none
	Price           settleflow.Price
	SuccessCriteria *criteria.Criteria // nil if none
	MarginFloor     settleflow.BasisPoints
	PricingSummary  string
	Estimate        *Estimate
	// Remote: workers run the product, claiming its tasks over the task
	// endpoints (settleflow.RawProduct.Remote), not an Executor.
	Remote bool
	// Source is the product's object as the file declares it, compacted:
	// what an operator's tool stores or shows, and Parse reads back.
	Source json.RawMessage
}

// The file as JSON. Amounts are integers of minor units; ratios
// (targetMargin, markup, baseShare, marginFloor) are decimal fractions with
// at most four decimals, as on the wire, read from json.Number so that
// their errors name the field.
type fileJSON struct {
	Products []productJSON `json:"products"`
}

type productJSON struct {
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	PayloadSchema   json.RawMessage `json:"payloadSchema"`
	Example         json.RawMessage `json:"example"`
	Pricing         *pricingJSON    `json:"pricing"`
	SuccessCriteria json.RawMessage `json:"successCriteria"`
	MarginFloor     json.Number     `json:"marginFloor"`
	PricingSummary  string          `json:"pricingSummary"`
	Estimate        *estimateJSON   `json:"estimate"`
	Remote          bool            `json:"remote"`
}

type pricingJSON struct {
	Model         string      `json:"model"`
	TargetMargin  json.Number `json:"targetMargin"`
	MinimumCharge int64       `json:"minimumCharge"`
	Markup        json.Number `json:"markup"`
	BaseShare     json.Number `json:"baseShare"`
}

type estimateJSON struct {
	Base       *int64         `json:"base"`
	PerUnit    []perUnitJSON  `json:"perUnit"`
	Surcharges []enumCostJSON `json:"surcharges"`
	Max        *int64         `json:"max"`
}

type perUnitJSON struct {
	Pointer  *string       `json:"pointer"`
	Unit     string        `json:"unit"`
	Cost     *int64        `json:"cost"`
	CostBy   *enumCostJSON `json:"costBy"`
	Per      *int64        `json:"per"`
	MaxUnits *int64        `json:"maxUnits"`
}

type enumCostJSON struct {
	Pointer *string          `json:"pointer"`
	Costs   map[string]int64 `json:"costs"`
	Absent  *int64           `json:"absent"`
}

// Load reads and parses the products file at path (see Parse); errors name
// the file by its base name.
func Load(path string) ([]*Product, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("declared: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileSize+1)); err != nil {
		return nil, fmt.Errorf("declared: %s: %w", path, err)
	}
	return Parse(filepath.Base(path), buf.Bytes())
}

// Parse checks data, a products file, and returns its products in the
// order given. name names the file in errors. Every error is an *Error
// naming the line, column and field of the first fault found.
func Parse(name string, data []byte) ([]*Product, error) {
	return ParseWith(name, data, Options{})
}

// Options are a caller's own rules for [ParseWith], checked with the
// file's so that their refusals too name the line and the field.
type Options struct {
	// RequireRemote refuses a product without "remote": true: for a
	// server whose declared products only workers run.
	RequireRemote bool
	// Single refuses a file that declares more than one product (a
	// command that adds one product, say).
	Single bool
	// Taken, if set, says why a name cannot be declared (a Go product has
	// it, say), or "" if it can; the product is refused at its "name".
	Taken func(name string) string
}

// ParseWith is [Parse] with opts' rules.
func ParseWith(name string, data []byte, opts Options) ([]*Product, error) {
	d := newDoc(name, data)
	if len(data) > MaxFileSize {
		return nil, d.errOffset(MaxFileSize, nil, "the file is larger than %d bytes", MaxFileSize)
	}
	var f fileJSON
	if err := strictjson.UnmarshalObject(data, &f); err != nil {
		return nil, d.decodeError(err)
	}
	if f.Products == nil {
		return nil, d.errAt(nil, `"products" is required: a list of products`)
	}
	if opts.Single && len(f.Products) != 1 {
		if len(f.Products) == 0 {
			return nil, d.errAt([]string{"products"}, "declares no product; this file must declare one")
		}
		return nil, d.errAt([]string{"products", "1"}, "a second product: this file must declare one product")
	}
	// The products' own bytes, for Source; the file has passed the strict
	// decoder, so encoding/json reads the same values.
	var sources struct{ Products []json.RawMessage }
	if err := json.Unmarshal(data, &sources); err != nil || len(sources.Products) != len(f.Products) {
		return nil, d.errAt([]string{"products"}, "not valid JSON")
	}
	out := make([]*Product, 0, len(f.Products))
	first := map[string]int{}
	for i := range f.Products {
		at := []string{"products", strconv.Itoa(i)}
		p, err := d.product(at, &f.Products[i])
		if err != nil {
			return nil, err
		}
		if j, dup := first[p.Name]; dup {
			return nil, d.errAt(append(at, "name"), "product %q is declared twice (first as products[%d])", p.Name, j)
		}
		if opts.Taken != nil {
			if why := opts.Taken(p.Name); why != "" {
				return nil, d.errAt(append(at, "name"), "product %q cannot be declared here: %s", p.Name, why)
			}
		}
		if opts.RequireRemote && !p.Remote {
			return nil, d.errAt(append(at, "remote"), `%q is not remote: only workers run declared products here; give it "remote": true`, p.Name)
		}
		first[p.Name] = i
		var src bytes.Buffer
		if err := json.Compact(&src, sources.Products[i]); err != nil {
			return nil, d.errAt(at, "not valid JSON")
		}
		p.Source = src.Bytes()
		out = append(out, p)
	}
	return out, nil
}

// decodeError is strictjson's refusal as an *Error.
func (d *doc) decodeError(err error) error {
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return d.errOffset(0, nil, "%v", err)
	}
	switch e.Kind {
	case strictjson.Empty:
		return d.errOffset(e.Offset, nil, "the file is empty; it holds one JSON object: {\"products\": [ … ]}")
	case strictjson.NotObject:
		return d.errOffset(skipSpace(d.data, 0), nil, "the file must hold one JSON object: {\"products\": [ … ]}")
	case strictjson.UnknownName:
		return d.errOffset(e.Offset, e.Path, "unknown field (names are case-sensitive; see docs/products.md)")
	case strictjson.DuplicateName:
		return d.errOffset(e.Offset, e.Path, "given more than once")
	case strictjson.TrailingData:
		return d.errOffset(e.Offset, nil, "data after the products document")
	case strictjson.InvalidUTF8:
		return d.errOffset(e.Offset, e.Path, "not valid UTF-8")
	case strictjson.TooDeep:
		return d.errOffset(e.Offset, e.Path, "objects and arrays nest deeper than %d levels", strictjson.MaxDepth)
	case strictjson.Type:
		msg := e.Message("")
		const prefix = "the JSON "
		if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
			msg = msg[len(prefix):]
		}
		return d.errOffset(e.Offset, e.Path, "%s", msg)
	}
	return d.errOffset(e.Offset, e.Path, "not valid JSON")
}

// product checks one product at path at.
func (d *doc) product(at []string, pj *productJSON) (*Product, error) {
	sub := func(names ...string) []string { return append(append([]string(nil), at...), names...) }
	p := &Product{Name: pj.Name, Description: pj.Description, PricingSummary: pj.PricingSummary, Remote: pj.Remote}
	if pj.Name == "" {
		return nil, d.errAt(at, `"name" is required`)
	}
	// The engine's rule for names (settleflow.Register).
	if !validName(pj.Name) {
		return nil, d.errAt(sub("name"), "%q must be 1-64 of [a-z0-9-] starting with a letter", pj.Name)
	}
	if len(bytes.TrimSpace(pj.PayloadSchema)) == 0 {
		return nil, d.errAt(at, `"payloadSchema" is required: the payload's JSON Schema (draft 2020-12)`)
	}
	schema, err := payloadschema.Compile(pj.PayloadSchema)
	if err != nil {
		var se *payloadschema.SchemaError
		if errors.As(err, &se) {
			return nil, d.errAt(sub(append([]string{"payloadSchema"}, se.Path...)...), "the payload schema is refused: %s", se.Message)
		}
		return nil, d.errAt(sub("payloadSchema"), "the payload schema is refused: %v", err)
	}
	if f := factsOf(schema, 0); len(f.types) != 1 || f.types[0] != "object" {
		return nil, d.errAt(sub("payloadSchema"), `the payload schema must have "type": "object" (a payload is a JSON object)`)
	}
	p.PayloadSchema = pj.PayloadSchema

	if pj.Pricing == nil {
		return nil, d.errAt(at, `"pricing" is required`)
	}
	if p.Price, err = d.price(sub("pricing"), pj.Pricing); err != nil {
		return nil, err
	}
	if len(pj.SuccessCriteria) > 0 {
		c, err := criteria.Parse(pj.SuccessCriteria)
		if err != nil {
			var ce *criteria.Error
			where := sub("successCriteria")
			if errors.As(err, &ce) {
				return nil, d.errAt(where, "%s", ce.Error())
			}
			return nil, d.errAt(where, "%v", err)
		}
		p.SuccessCriteria = c
	}
	if m := p.Price.Model; (m == settleflow.PricingSuccessFee || m == settleflow.PricingHybrid) && p.SuccessCriteria == nil {
		return nil, d.errAt(at, `%s pricing needs "successCriteria" (they decide the charge)`, m)
	}
	if pj.MarginFloor != "" {
		if p.MarginFloor, err = d.ratio(sub("marginFloor"), pj.MarginFloor); err != nil {
			return nil, err
		}
		if p.MarginFloor < 0 || p.MarginFloor >= 10000 {
			return nil, d.errAt(sub("marginFloor"), "%s must be at least 0 and below 1", p.MarginFloor)
		}
	}
	if pj.Estimate == nil {
		return nil, d.errAt(at, `"estimate" is required`)
	}
	if p.Estimate, err = d.estimate(sub("estimate"), pj.Estimate, schema); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(pj.Example)) > 0 {
		p.Example = pj.Example
		if err := d.example(sub("example"), p, schema); err != nil {
			return nil, err
		}
	}
	// Whatever else the engine refuses, refused here, with the product's
	// place.
	if err := settleflow.RegisterRaw(settleflow.NewProducts(), p.raw(nopExecutor{})); err != nil {
		return nil, d.errAt(at, "%v", err)
	}
	return p, nil
}

// example checks that p's example validates and prices.
func (d *doc) example(at []string, p *Product, schema *jsonschema.Schema) error {
	var obj map[string]json.RawMessage
	if err := strictjson.UnmarshalObject(p.Example, &obj); err != nil {
		return d.errAt(at, "the example must be a JSON object (a payload)")
	}
	v, err := payloadschema.Decode(p.Example)
	if err == nil {
		err = payloadschema.Validate(schema, v)
	}
	if err != nil {
		var vi *payloadschema.Violation
		if errors.As(err, &vi) {
			path := append(append([]string(nil), at...), vi.Path...)
			if vi.Kind == payloadschema.Missing {
				path = path[:len(path)-1]
			}
			return d.errAt(path, "the example does not validate against the payload schema: /%s %s", joinPointer(vi.Path), vi.Message)
		}
		return d.errAt(at, "the example does not validate against the payload schema: %v", err)
	}
	cost, err := p.Estimate.Cost(v)
	if err == nil {
		_, err = p.Price.Quote(cost)
	}
	if err != nil {
		return d.errAt(at, "the example does not price: %v", err)
	}
	return nil
}

func joinPointer(path []string) string {
	out := ""
	for i, s := range escape(path) {
		if i > 0 {
			out += "/"
		}
		out += s
	}
	return out
}

// price checks pricing.
func (d *doc) price(at []string, pj *pricingJSON) (settleflow.Price, error) {
	sub := func(name string) []string { return append(append([]string(nil), at...), name) }
	var p settleflow.Price
	switch m := settleflow.PricingModel(pj.Model); {
	case pj.Model == "":
		return p, d.errAt(at, `"model" is required: fixed, capped, success_fee or hybrid`)
	case !m.Valid():
		return p, d.errAt(sub("model"), "%q is not a pricing model: use fixed, capped, success_fee or hybrid", pj.Model)
	default:
		p.Model = m
	}
	var err error
	if pj.TargetMargin == "" {
		return p, d.errAt(at, `"targetMargin" is required: the margin the quote yields on the estimate, a fraction (0.3 is 30 %%)`)
	}
	if p.TargetMargin, err = d.ratio(sub("targetMargin"), pj.TargetMargin); err != nil {
		return p, err
	}
	if p.TargetMargin < 0 || p.TargetMargin >= 10000 {
		return p, d.errAt(sub("targetMargin"), "%s must be at least 0 and below 1", p.TargetMargin)
	}
	p.MinimumCharge = pj.MinimumCharge
	if p.MinimumCharge < 0 || p.MinimumCharge > settleflow.MaxAmount {
		return p, d.errAt(sub("minimumCharge"), "%d must be between 0 and %d minor units", p.MinimumCharge, settleflow.MaxAmount)
	}
	switch {
	case p.Model == settleflow.PricingCapped && pj.Markup == "":
		return p, d.errAt(at, `capped pricing needs "markup": what is added to the actual cost, a fraction (0.2 is cost + 20 %%)`)
	case p.Model != settleflow.PricingCapped && pj.Markup != "":
		return p, d.errAt(sub("markup"), "markup is for capped pricing only, not %s", p.Model)
	case p.Model == settleflow.PricingHybrid && pj.BaseShare == "":
		return p, d.errAt(at, `hybrid pricing needs "baseShare": the part of the quote charged whatever the outcome, a fraction`)
	case p.Model != settleflow.PricingHybrid && pj.BaseShare != "":
		return p, d.errAt(sub("baseShare"), "baseShare is for hybrid pricing only, not %s", p.Model)
	}
	if pj.Markup != "" {
		if p.Markup, err = d.ratio(sub("markup"), pj.Markup); err != nil {
			return p, err
		}
	}
	if pj.BaseShare != "" {
		if p.BaseShare, err = d.ratio(sub("baseShare"), pj.BaseShare); err != nil {
			return p, err
		}
	}
	if err := p.Validate(); err != nil {
		return p, d.errAt(at, "%v", err)
	}
	return p, nil
}

// ratio reads a decimal fraction with at most four decimals.
func (d *doc) ratio(at []string, n json.Number) (settleflow.BasisPoints, error) {
	b, err := wire.ParseBasisPoints(string(n))
	if err != nil {
		return 0, d.errAt(at, "%s must be a fraction with at most four decimals (0.3 is 30 %%)", n)
	}
	return b, nil
}

// estimate checks an estimate against the payload schema.
func (d *doc) estimate(at []string, ej *estimateJSON, schema *jsonschema.Schema) (*Estimate, error) {
	sub := func(names ...string) []string { return append(append([]string(nil), at...), names...) }
	e := &Estimate{max: -1}
	if ej.Base == nil {
		return nil, d.errAt(at, `"base" is required: the cost of every run, in minor units (0 if none)`)
	}
	if err := d.amount(sub("base"), *ej.Base); err != nil {
		return nil, err
	}
	e.base = *ej.Base
	if ej.Max != nil {
		if err := d.amount(sub("max"), *ej.Max); err != nil {
			return nil, err
		}
		e.max = *ej.Max
	}
	for i, tj := range ej.PerUnit {
		tat := sub("perUnit", strconv.Itoa(i))
		tsub := func(name string) []string { return append(append([]string(nil), tat...), name) }
		if tj.Pointer == nil {
			return nil, d.errAt(tat, `"pointer" is required: the JSON Pointer of the payload field counted ("/pages")`)
		}
		ptr, err := parsePointer(*tj.Pointer)
		if err != nil {
			return nil, d.errAt(tsub("pointer"), "%v", err)
		}
		r, err := resolve(schema, ptr)
		if err != nil {
			return nil, d.errAt(tsub("pointer"), "%v", err)
		}
		if tj.Unit == "" {
			return nil, d.errAt(tat, `"unit" is required: "value", "length" or "bytes"`)
		}
		if err := checkUnit(factsOf(r.schema, 0), tj.Unit); err != nil {
			where := tsub("unit")
			if tj.Unit == UnitValue || tj.Unit == UnitLength || tj.Unit == UnitBytes {
				where = tsub("pointer")
				err = fmt.Errorf("%s: %w", *tj.Pointer, err)
			}
			return nil, d.errAt(where, "%v", err)
		}
		t := perUnit{pointer: ptr, unit: tj.Unit, per: 1, maxUnits: -1}
		switch {
		case tj.Cost != nil && tj.CostBy != nil:
			return nil, d.errAt(tsub("costBy"), `give "cost" or "costBy", not both`)
		case tj.Cost == nil && tj.CostBy == nil:
			return nil, d.errAt(tat, `"cost" (minor units per unit) or "costBy" (a cost per unit for each value of an enum field) is required`)
		case tj.Cost != nil:
			if err := d.amount(tsub("cost"), *tj.Cost); err != nil {
				return nil, err
			}
			t.cost = *tj.Cost
		default:
			if t.by, err = d.enumCost(tsub("costBy"), tj.CostBy, schema); err != nil {
				return nil, err
			}
		}
		if tj.Per != nil {
			if *tj.Per < 1 || *tj.Per > settleflow.MaxAmount {
				return nil, d.errAt(tsub("per"), "%d must be between 1 and %d: how many units one cost buys (rounded up)", *tj.Per, settleflow.MaxAmount)
			}
			t.per = *tj.Per
		}
		if tj.MaxUnits != nil {
			if *tj.MaxUnits < 0 {
				return nil, d.errAt(tsub("maxUnits"), "%d must not be negative", *tj.MaxUnits)
			}
			t.maxUnits = *tj.MaxUnits
		}
		e.perUnit = append(e.perUnit, t)
	}
	for i := range ej.Surcharges {
		c, err := d.enumCost(sub("surcharges", strconv.Itoa(i)), &ej.Surcharges[i], schema)
		if err != nil {
			return nil, err
		}
		e.surcharges = append(e.surcharges, *c)
	}
	return e, nil
}

// enumCost checks a map from an enum field's values to costs: it must give
// a cost for every value the schema allows, and no other.
func (d *doc) enumCost(at []string, cj *enumCostJSON, schema *jsonschema.Schema) (*enumCost, error) {
	sub := func(names ...string) []string { return append(append([]string(nil), at...), names...) }
	if cj.Pointer == nil {
		return nil, d.errAt(at, `"pointer" is required: the JSON Pointer of an enum field of the payload ("/quality")`)
	}
	ptr, err := parsePointer(*cj.Pointer)
	if err != nil {
		return nil, d.errAt(sub("pointer"), "%v", err)
	}
	r, err := resolve(schema, ptr)
	if err != nil {
		return nil, d.errAt(sub("pointer"), "%v", err)
	}
	f := factsOf(r.schema, 0)
	values := make([]string, 0, len(f.enum))
	for _, v := range f.enum {
		s, ok := v.(string)
		if !ok {
			return nil, d.errAt(sub("pointer"), `%s: the payload schema's "enum" of this field holds %v, not only strings: costs are by string values`, *cj.Pointer, show(v))
		}
		values = append(values, s)
	}
	if f.enum == nil {
		return nil, d.errAt(sub("pointer"), `%s: costs by value need an enum field; give it "enum": [ … ] in the payload schema`, *cj.Pointer)
	}
	if cj.Costs == nil {
		return nil, d.errAt(at, `"costs" is required: the cost of each of the enum's values`)
	}
	c := &enumCost{pointer: ptr, costs: map[string]int64{}}
	for _, k := range keys(cj.Costs) {
		if !contains(values, k) {
			return nil, d.errAt(sub("costs", k), "%q is not one of the field's values in the payload schema (%s)", k, quoteAll(values))
		}
		if err := d.amount(sub("costs", k), cj.Costs[k]); err != nil {
			return nil, err
		}
		c.costs[k] = cj.Costs[k]
	}
	sort.Strings(values)
	for _, v := range values {
		if _, ok := cj.Costs[v]; !ok {
			return nil, d.errAt(sub("costs"), "no cost for %q: give a cost (0 if none) for every value of the enum", v)
		}
	}
	if cj.Absent != nil {
		if r.required {
			return nil, d.errAt(sub("absent"), "%s is required by the payload schema, so it is never absent: drop \"absent\"", *cj.Pointer)
		}
		if err := d.amount(sub("absent"), *cj.Absent); err != nil {
			return nil, err
		}
		c.absent = *cj.Absent
	}
	return c, nil
}

func (d *doc) amount(at []string, v int64) error {
	if v < 0 || v > settleflow.MaxAmount {
		return d.errAt(at, "%d must be between 0 and %d minor units", v, settleflow.MaxAmount)
	}
	return nil
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func quoteAll(values []string) string {
	out := ""
	for i, v := range values {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(v)
	}
	return out
}

func validName(s string) bool {
	if len(s) < 1 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Executor runs the workflows of declared products: the work a product's
// Execute does in Go. It is called as settleflow.Product.Execute is (at
// least once per workflow, WorkflowID(ctx) and ReportSpend work, return an
// error wrapped by settleflow.Permanent to fail for good), with the
// product's name and the payload as stored, one JSON object valid against
// the product's schema. An embedder implements it in Go; the worker
// protocol will implement it by handing the task to a remote worker.
type Executor interface {
	Execute(ctx context.Context, product string, payload json.RawMessage) (settleflow.Execution, error)
}

// ExecutorFunc is an Executor as a function.
type ExecutorFunc func(ctx context.Context, product string, payload json.RawMessage) (settleflow.Execution, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, product string, payload json.RawMessage) (settleflow.Execution, error) {
	return f(ctx, product, payload)
}

// nopExecutor stands in for the executor when Parse asks the registry what
// it would refuse; it never runs.
type nopExecutor struct{}

func (nopExecutor) Execute(context.Context, string, json.RawMessage) (settleflow.Execution, error) {
	return settleflow.Execution{}, errors.New("declared: no executor")
}

// Raw is p as a settleflow.RawProduct run by x, or by workers if p is
// remote (x is then not used and may be nil).
func (p *Product) Raw(x Executor) settleflow.RawProduct { return p.raw(x) }

func (p *Product) raw(x Executor) settleflow.RawProduct {
	name := p.Name
	var estimate func(any) (int64, error)
	if p.Estimate != nil {
		estimate = p.Estimate.Cost // else RegisterRaw refuses the product
	}
	raw := settleflow.RawProduct{
		Name:            p.Name,
		Description:     p.Description,
		Price:           p.Price,
		SuccessCriteria: p.SuccessCriteria,
		MarginFloor:     p.MarginFloor,
		PricingSummary:  p.PricingSummary,
		PayloadSchema:   p.PayloadSchema,
		Example:         p.Example,
		Estimate:        estimate,
		Remote:          p.Remote,
	}
	if !p.Remote {
		raw.Execute = func(ctx context.Context, payload json.RawMessage) (settleflow.Execution, error) {
			return x.Execute(ctx, name, payload)
		}
	}
	return raw
}

// Register adds the products to r, each run by x, or by workers if it is
// remote: payloads are validated by the product's schema and quoted by its
// declarative estimate, and the catalogue shows them as it shows Go
// products. x may be nil when every product is remote. It checks every
// name first, so a name taken in r (retired products' included) or given
// twice registers none.
func Register(r *settleflow.Products, products []*Product, x Executor) error {
	seen := map[string]bool{}
	for _, p := range products {
		if x == nil && !p.Remote {
			return fmt.Errorf("declared: product %s is not remote and Register was given no Executor: a declared product must have something to run it", p.Name)
		}
		if _, taken := r.Get(p.Name); taken || r.Retired(p.Name) || seen[p.Name] {
			return fmt.Errorf("declared: product %s is already registered", p.Name)
		}
		seen[p.Name] = true
	}
	for _, p := range products {
		if err := settleflow.RegisterRaw(r, p.raw(x)); err != nil {
			return fmt.Errorf("declared: %w", err)
		}
	}
	return nil
}
