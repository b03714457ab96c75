package settleflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/settleflow/settleflow/criteria"
	"github.com/settleflow/settleflow/internal/payloadschema"
)

// RawProduct is a product whose payload is checked by a JSON Schema rather
// than decoded into a Go type: what a product declared in a products file
// (package declared) becomes, and what a product run outside Go needs.
// Register it with [RegisterRaw]. The fields not described here mean what
// they mean on [Product].
type RawProduct struct {
	Name            string
	Description     string
	Price           Price
	SuccessCriteria *criteria.Criteria
	MarginFloor     BasisPoints
	PricingSummary  string
	// PayloadSchema is the payload's JSON Schema, draft 2020-12 unless it
	// names another with "$schema"; it must describe an object. It is
	// compiled at registration (a reference to another document is
	// refused: nothing is loaded), shown in the catalogue as given
	// (compacted), and every payload is checked against it.
	PayloadSchema json.RawMessage
	// Example, optional, is a payload clients can start from; RegisterRaw
	// checks that it validates and prices.
	Example json.RawMessage
	// Estimate returns the estimated cost of a payload that validated, in
	// minor units. payload is the payload decoded as encoding/json does
	// with UseNumber (objects map[string]any, arrays []any, numbers
	// json.Number). It must be fast and do no I/O. Return a *FieldError to
	// name the field at fault.
	Estimate func(payload any) (int64, error)
	// Execute runs the product on the payload as it was stored: one JSON
	// object that validated against PayloadSchema. The rules of
	// [Product].Execute apply (at least once, Permanent to fail for good).
	// It must be nil when Remote is set.
	Execute func(ctx context.Context, payload json.RawMessage) (Execution, error)
	// Remote, if set, leaves the execution to workers that claim it over
	// the task endpoints, as [Product].Remote does: Execute must then be
	// nil.
	Remote bool
}

// RegisterRaw adds p to r. A payload is accepted when it is one JSON object
// by the engine's strict rules (as for [Register]: no duplicate names,
// valid UTF-8, nesting at most 64 deep) that validates against
// p.PayloadSchema; a refusal is an *InvalidError naming the field
// ("payload.pages", code parameter_missing for a required member that is
// absent, parameter_unknown for a member the schema does not allow,
// parameter_invalid otherwise). The catalogue shows p exactly as it shows a
// Go product. It fails if the schema does not compile or does not describe
// an object, the example does not validate or price, or anything
// [Register] refuses.
func RegisterRaw(r *Products, p RawProduct) error {
	gp, schema, err := rawToGo(p)
	if err != nil {
		return err
	}
	return register(r, gp, schema, addProduct)
}

// rawToGo is p as the Go product RegisterRaw registers, with the schema
// the catalogue shows.
func rawToGo(p RawProduct) (Product[json.RawMessage], json.RawMessage, error) {
	var none Product[json.RawMessage]
	switch {
	case p.Remote && (p.Estimate == nil || p.Execute != nil):
		return none, nil, fmt.Errorf("settleflow: product %s is remote: it needs Estimate and no Execute (workers execute it)", p.Name)
	case !p.Remote && (p.Estimate == nil || p.Execute == nil):
		return none, nil, fmt.Errorf("settleflow: product %s needs Estimate and Execute", p.Name)
	}
	if len(bytes.TrimSpace(p.PayloadSchema)) == 0 {
		return none, nil, fmt.Errorf("settleflow: product %s needs a payload schema", p.Name)
	}
	schema, err := payloadschema.Compile(p.PayloadSchema)
	if err != nil {
		return none, nil, fmt.Errorf("settleflow: product %s: payload schema: %w", p.Name, err)
	}
	if schema.Types == nil || fmt.Sprint(schema.Types.ToStrings()) != "[object]" {
		return none, nil, fmt.Errorf(`settleflow: product %s: payload schema must have "type": "object" (a payload is a JSON object)`, p.Name)
	}
	var shown bytes.Buffer
	if err := json.Compact(&shown, p.PayloadSchema); err != nil {
		return none, nil, fmt.Errorf("settleflow: product %s: payload schema: %w", p.Name, err)
	}
	check := func(raw json.RawMessage) (any, error) {
		v, err := payloadschema.Decode(raw)
		if err != nil {
			return nil, &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: "payload is not valid JSON"}
		}
		if err := payloadschema.Validate(schema, v); err != nil {
			return nil, violationError(err)
		}
		return v, nil
	}
	gp := Product[json.RawMessage]{
		Name:            p.Name,
		Description:     p.Description,
		Price:           p.Price,
		SuccessCriteria: p.SuccessCriteria,
		MarginFloor:     p.MarginFloor,
		PricingSummary:  p.PricingSummary,
		Remote:          p.Remote,
		Estimate: func(raw json.RawMessage) (int64, error) {
			v, err := check(raw)
			if err != nil {
				return 0, err
			}
			return p.Estimate(v)
		},
	}
	if !p.Remote {
		gp.Execute = func(ctx context.Context, raw json.RawMessage) (Execution, error) {
			if _, err := check(raw); err != nil {
				// Valid at creation; a product whose schema changed since
				// cannot run it, and retrying will not help.
				return Execution{}, Permanent(&Failure{Code: FailurePayloadInvalid, Message: err.Error()})
			}
			return p.Execute(ctx, raw)
		}
	}
	if len(bytes.TrimSpace(p.Example)) > 0 {
		ex := p.Example
		gp.Example = &ex
	}
	return gp, json.RawMessage(shown.Bytes()), nil
}

// violationError is the InvalidError of a payload the schema refuses.
func violationError(err error) error {
	var v *payloadschema.Violation
	if !errors.As(err, &v) {
		return &InvalidError{Code: CodeParameterInvalid, Param: "payload", Message: "payload is invalid: " + err.Error()}
	}
	param := strings.Join(append([]string{"payload"}, v.Path...), ".")
	code := CodeParameterInvalid
	switch v.Kind {
	case payloadschema.Missing:
		code = CodeParameterMissing
	case payloadschema.Unknown:
		code = CodeParameterUnknown
	}
	return &InvalidError{Code: code, Param: param, Message: param + " " + v.Message}
}
