package settleflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/internal/strictjson"
	"github.com/settleflow/settleflow/wire"
)

// Product is a product with a payload of type P, registered with [Register].
// P is decoded from the workflow's payload object strictly: names match P's
// json tags (or field names) exactly, case included, each at most once;
// unknown names, invalid UTF-8 and nesting deeper than 64 are refused; numbers
// held by an interface (any, map[string]any) arrive as json.Number. If *P or
// P has a method Validate() error, it runs next (return a *FieldError to name
// the field at fault).
type Product[P any] struct {
	// Name is what clients put in "product": 1–64 of [a-z0-9-], starting with a letter.
	Name        string
	Description string
	Price       Price
	// SuccessCriteria are the criteria the product's result is judged by
	// unless a create passes its own: required for success_fee and hybrid
	// pricing (they decide the charge), optional otherwise (the outcome is
	// then recorded and changes nothing).
	SuccessCriteria *criteria.Criteria
	// MarginFloor, if above 0, is the least margin a workflow must keep at
	// the price quoted, in basis points (0 < MarginFloor < 10000): a quote
	// whose margin on the estimate is below it is refused
	// (margin_below_floor), and an execution whose reported spend passes
	// the budget it leaves is stopped (margin_floor_exceeded). A create may
	// raise it, never lower it.
	MarginFloor BasisPoints
	// PricingSummary tells people how the cost is estimated, e.g.
	// "2.00 USD per ticket plus 0.10 USD per attachment".
	PricingSummary string
	// Estimate returns the estimated cost of running p, in minor units. It
	// must be fast and must not do I/O: Create calls it inline.
	Estimate func(p P) (int64, error)
	// Example, optional, is a payload clients can start from: it is shown
	// in the catalogue and Register checks that it validates and prices.
	Example *P
	// Remote, if set, leaves the execution to workers that claim it over
	// the task endpoints (Engine.ClaimTasks; POST /v1/tasks/claim): Execute
	// must then be nil. The estimate, the quote, the margin floor, the
	// verdict and the charge stay the engine's.
	Remote bool
	// Execute runs the product. It may run again for the same workflow after a
	// crash (at least once), so it should be idempotent by workflow id
	// (available from WorkflowID(ctx)). Return an error wrapped with
	// [Permanent] to fail the workflow for good; other errors are retried.
	Execute func(ctx context.Context, p P) (Execution, error)
}

// Execution is what a product reports when it has run.
type Execution struct {
	// ActualCost is what the run cost, in minor units. With cost items (here
	// or reported through ReportSpend) it may be left 0; if set, it must
	// equal their sum.
	ActualCost int64
	// CostItems break the cost down (model, tools, compute, human, other);
	// they are added to the items reported through ReportSpend while the
	// product ran.
	CostItems []CostItem
	// Result is the workflow's "result": anything that marshals to a JSON
	// object, or nil.
	Result any
}

// ProductInfo describes a registered product: the catalogue entry
// (wire.ProductInfo).
type ProductInfo = wire.ProductInfo

// Products is the registry of products an engine serves. The zero value is
// not usable; call NewProducts. It is safe for concurrent use.
type Products struct {
	mu sync.RWMutex
	m  map[string]*product
}

// NewProducts returns an empty registry.
func NewProducts() *Products { return &Products{m: map[string]*product{}} }

type product struct {
	info     ProductInfo
	price    Price
	criteria *criteria.Criteria // the default success criteria, or nil
	floor    BasisPoints        // the margin floor, 0 if none
	// estimate decodes and validates a payload and estimates its cost.
	estimate func(payload json.RawMessage) (int64, error)
	execute  func(ctx context.Context, payload json.RawMessage) (Execution, error)
	// remote: workers run it (execute is nil).
	remote bool
	// retired: out of the catalogue, refusing creates (Products.Retire);
	// the workflows created before still run.
	retired bool
}

var productName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)

// Register adds p to r. It fails if the name is taken (by a retired
// product too: [Replace] brings one back) or malformed, the price is
// invalid, or Estimate or Execute is missing.
func Register[P any](r *Products, p Product[P]) error { return register(r, p, nil, addProduct) }

// Replace puts p in the place of the product of the same name in r, active
// or retired (a retired product is back in the catalogue). Workflows
// created from then on are validated, quoted and priced by p; a workflow
// created before keeps the quote, pricing model, target margin, success
// criteria and margin floor it was created with (they are stored with it
// and decide its charge), and its executions that start from then on run
// p's Execute (or p's workers, if p is remote). It fails as [Register]
// does, and if r has no product of that name. Safe for concurrent use
// with everything the engine does.
func Replace[P any](r *Products, p Product[P]) error { return register(r, p, nil, replaceProduct) }

// ReplaceRaw is [Replace] for a [RawProduct], checked as [RegisterRaw]
// checks it.
func ReplaceRaw(r *Products, p RawProduct) error {
	gp, schema, err := rawToGo(p)
	if err != nil {
		return err
	}
	return register(r, gp, schema, replaceProduct)
}

// Retire takes the product named name out of the catalogue: List and Get no
// longer show it, and a create (or quote) naming it is refused with an
// *InvalidError of code product_retired (HTTP 400). The workflows created
// before finish as if nothing happened: they execute (remote ones are
// claimed by workers as before), are judged and settle at their quote.
// [Replace] brings the product back. It fails if r has no product of that
// name; retiring a retired product changes nothing.
func (r *Products) Retire(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.m[name]
	if !ok {
		return fmt.Errorf("settleflow: product %s is not registered", name)
	}
	if !p.retired {
		// Entries are never changed in place: a reader may hold p.
		cp := *p
		cp.retired = true
		r.m[name] = &cp
	}
	return nil
}

// Retired reports whether the product named name is registered and
// retired.
func (r *Products) Retired(name string) bool {
	p, ok := r.get(name)
	return ok && p.retired
}

// registerMode says whether register adds a product or replaces one.
type registerMode int

const (
	addProduct registerMode = iota
	replaceProduct
)

// register is Register (or Replace) showing schema in the catalogue, or if
// schema is nil the schema reflected from P.
func register[P any](r *Products, p Product[P], schema json.RawMessage, mode registerMode) error {
	if !productName.MatchString(p.Name) {
		return fmt.Errorf("settleflow: product name %q must be 1-64 of [a-z0-9-] starting with a letter", p.Name)
	}
	if err := p.Price.Validate(); err != nil {
		return fmt.Errorf("settleflow: product %s: %w", p.Name, err)
	}
	switch {
	case p.Remote && (p.Estimate == nil || p.Execute != nil):
		return fmt.Errorf("settleflow: product %s is remote: it needs Estimate and no Execute (workers execute it)", p.Name)
	case !p.Remote && (p.Estimate == nil || p.Execute == nil):
		return fmt.Errorf("settleflow: product %s needs Estimate and Execute", p.Name)
	}
	if m := PricingOf(p.Price).Model; (m == PricingSuccessFee || m == PricingHybrid) && p.SuccessCriteria == nil {
		return fmt.Errorf("settleflow: product %s: %s pricing needs SuccessCriteria (they decide the charge)", p.Name, m)
	}
	if p.MarginFloor < 0 || p.MarginFloor >= 10000 {
		return fmt.Errorf("settleflow: product %s: margin floor %s must be at least 0 and below 1", p.Name, p.MarginFloor)
	}
	decode := func(raw json.RawMessage) (P, error) {
		var v P
		if err := decodePayload(raw, &v); err != nil {
			return v, err
		}
		var validate func() error
		if vv, ok := any(&v).(interface{ Validate() error }); ok {
			validate = vv.Validate
		}
		if validate != nil {
			if err := validate(); err != nil {
				return v, payloadError(err)
			}
		}
		return v, nil
	}
	var err error
	if schema == nil {
		if schema, err = payloadSchema[P](); err != nil {
			return fmt.Errorf("settleflow: product %s: payload schema: %w", p.Name, err)
		}
	}
	example := json.RawMessage("null")
	if p.Example != nil {
		if example, err = json.Marshal(p.Example); err != nil {
			return fmt.Errorf("settleflow: product %s: example: %w", p.Name, err)
		}
		v, err := decode(example)
		if err == nil {
			_, err = p.Estimate(v)
		}
		if err != nil {
			return fmt.Errorf("settleflow: product %s: the example payload is refused: %w", p.Name, err)
		}
	}
	entry := &product{
		info: ProductInfo{
			Name:           p.Name,
			Description:    p.Description,
			TargetMargin:   p.Price.TargetMargin,
			MinimumCharge:  Money{Amount: p.Price.MinimumCharge, Currency: Currency},
			PricingSummary: p.PricingSummary,
			PayloadSchema:  schema,
			Example:        example,
			Pricing:        PricingOf(p.Price),
		},
		remote:   p.Remote,
		price:    p.Price,
		criteria: p.SuccessCriteria,
		floor:    p.MarginFloor,
		estimate: func(raw json.RawMessage) (int64, error) {
			v, err := decode(raw)
			if err != nil {
				return 0, err
			}
			cost, err := p.Estimate(v)
			if err != nil {
				return 0, payloadError(err)
			}
			return cost, nil
		},
		execute: func(ctx context.Context, raw json.RawMessage) (Execution, error) {
			v, err := decode(raw)
			if err != nil {
				// The payload was valid at creation; a product whose rules
				// changed since cannot run it, and retrying will not help.
				return Execution{}, Permanent(&Failure{Code: FailurePayloadInvalid, Message: err.Error()})
			}
			return p.Execute(ctx, v)
		},
	}
	if p.SuccessCriteria != nil {
		entry.info.SuccessCriteria, _ = p.SuccessCriteria.MarshalJSON()
	}
	if p.MarginFloor > 0 {
		f := p.MarginFloor
		entry.info.MarginFloor = &f
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, exists := r.m[p.Name]
	switch {
	case mode == addProduct && exists:
		return fmt.Errorf("settleflow: product %s is already registered", p.Name)
	case mode == replaceProduct && !exists:
		return fmt.Errorf("settleflow: product %s is not registered: nothing to replace", p.Name)
	}
	r.m[p.Name] = entry
	return nil
}

// List returns the catalogue, sorted by name: the products registered and
// not retired.
func (r *Products) List() []ProductInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ProductInfo, 0, len(r.m))
	for _, p := range r.m {
		if !p.retired {
			out = append(out, p.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Remote returns the names of the remote products (Product.Remote),
// sorted, retired ones included (workers finish their workflows).
func (r *Products) Remote() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for name, p := range r.m {
		if p.remote {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Get returns the catalogue entry of the product named name; a retired
// product has none.
func (r *Products) Get(name string) (ProductInfo, bool) {
	p, ok := r.get(name)
	if !ok || p.retired {
		return ProductInfo{}, false
	}
	return p.info, true
}

// payloadSchema reflects the JSON Schema of P. Field names and types come
// from the json tags the decoder reads, and "required" only from jsonschema
// tags: a field the decoder would leave at its zero value is optional to
// the schema too. A type may refine its schema with a JSONSchemaExtend
// method (see github.com/invopop/jsonschema).
func payloadSchema[P any]() (json.RawMessage, error) {
	r := &jsonschema.Reflector{RequiredFromJSONSchemaTags: true, DoNotReference: true, ExpandedStruct: true}
	var zero P
	return json.Marshal(r.Reflect(&zero))
}

func (r *Products) get(name string) (*product, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.m[name]
	return p, ok
}

// decodePayload decodes a payload into v by internal/strictjson's rules,
// the same ones httpapi applies to request bodies: exactly one JSON object,
// names matched case-sensitively and each given once, no unknown names, valid
// UTF-8, nesting at most strictjson.MaxDepth deep. Every embedding
// application gets them too, not only HTTP clients, because what the product
// prices must be what every other reader of the stored bytes sees. Errors
// are *InvalidError naming the field ("payload.attachments").
func decodePayload(raw json.RawMessage, v any) error {
	err := strictjson.UnmarshalObject(raw, v)
	if err == nil {
		return nil
	}
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: "payload is not valid JSON"}
	}
	param := e.Param("payload")
	switch e.Kind {
	case strictjson.UnknownName:
		return &InvalidError{Code: CodeParameterUnknown, Param: param,
			Message: fmt.Sprintf("%s is not a field of this product (names are case-sensitive)", param)}
	case strictjson.Syntax, strictjson.TrailingData:
		// Where a syntax error was found is no field's fault.
		return &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: e.Message("payload")}
	default:
		return &InvalidError{Code: CodeParameterInvalid, Param: param, Message: e.Message(param)}
	}
}

// payloadError turns a product's validation or estimate error into an
// InvalidError that names the payload field.
func payloadError(err error) error {
	var inv *InvalidError
	if errors.As(err, &inv) {
		return inv
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return &InvalidError{Code: CodeParameterInvalid, Param: "payload." + fe.Field, Message: "payload." + fe.Field + " " + fe.Message}
	}
	return &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: err.Error()}
}
