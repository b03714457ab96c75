// Package payloadschema compiles a product's payload JSON Schema (draft
// 2020-12) and checks payloads against it, reporting the first fault as a
// path into the payload, so that the engine can name the field as it does
// for a Go product's payload ("payload.pages").
package payloadschema

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// english words the validator's errors.
var english = message.NewPrinter(language.English)

// location is the URL the schema is compiled under; it names no file. It
// is hierarchical so that a relative reference ("other.json") resolves to
// another document, which is refused, rather than to this one (as it would
// against a URN).
const location = "https://payload.settleflow.invalid/schema.json"

// Compile compiles raw, a JSON Schema document, by draft 2020-12 unless it
// names another draft with "$schema". A reference to any other document
// ("$ref": "https://…", "file:…") is refused: nothing is ever loaded.
// "format" is an annotation, as draft 2020-12 has it, not an assertion.
func Compile(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no scheme: nothing is loaded
	if err := c.AddResource(location, doc); err != nil {
		return nil, clean(err)
	}
	s, err := c.Compile(location)
	if err != nil {
		return nil, clean(err)
	}
	return s, nil
}

// SchemaError is a schema the compiler refuses: Path is where in the
// schema document (member names and array indices; empty for the document
// or when the compiler does not say).
type SchemaError struct {
	Path    []string
	Message string
}

func (e *SchemaError) Error() string {
	if len(e.Path) == 0 {
		return e.Message
	}
	return "at /" + strings.Join(e.Path, "/") + ": " + e.Message
}

// clean turns the compiler's error into a *SchemaError: the deepest first
// cause of a metaschema violation, a reference to another document said
// as such, and no made-up URL.
func clean(err error) error {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		return &SchemaError{Path: append([]string(nil), ve.InstanceLocation...), Message: ve.ErrorKind.LocalizedString(english)}
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		url := strings.TrimPrefix(le.URL, location[:strings.LastIndexByte(location, '/')+1])
		return &SchemaError{Message: fmt.Sprintf("it refers to another document (%s); a payload schema must be self-contained, with its definitions under $defs", url)}
	}
	msg := strings.ReplaceAll(err.Error(), location+"#", "#")
	msg = strings.ReplaceAll(msg, location, "the schema")
	return &SchemaError{Message: msg}
}

// Violation is why a payload is refused: Path is where in the payload
// (member names and array indices), Kind what is wrong.
type Violation struct {
	Kind    ViolationKind
	Path    []string
	Message string // what is wrong, without the path: "must be an integer, not a string"
}

// ViolationKind classifies a Violation as the engine's error codes do.
type ViolationKind int

// Kinds of Violation.
const (
	// Invalid: a value breaks the schema.
	Invalid ViolationKind = iota
	// Missing: a required member is absent; Path ends with its name.
	Missing
	// Unknown: a member the schema does not allow; Path ends with its name.
	Unknown
)

func (v *Violation) Error() string {
	return "/" + strings.Join(v.Path, "/") + ": " + v.Message
}

// Decode decodes a JSON document as the validator reads it: numbers as
// encoding/json.Number, so no digit is rounded.
func Decode(raw []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// Validate checks v, a decoded payload (Decode), against s. The error is a
// *Violation naming the first fault, the deepest of the first causes (the
// one a person can act on).
func Validate(s *jsonschema.Schema, v any) error {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Violation{Kind: Invalid, Message: err.Error()}
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	path := append([]string(nil), ve.InstanceLocation...)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		missing := append([]string(nil), k.Missing...)
		sort.Strings(missing)
		return &Violation{Kind: Missing, Path: append(path, missing[0]), Message: "is required"}
	case *kind.AdditionalProperties:
		props := append([]string(nil), k.Properties...)
		sort.Strings(props)
		return &Violation{Kind: Unknown, Path: append(path, props[0]), Message: "is not a field of this product (names are case-sensitive)"}
	case *kind.Type:
		return &Violation{Kind: Invalid, Path: path, Message: fmt.Sprintf("must be %s, not %s", strings.Join(k.Want, " or "), k.Got)}
	case *kind.FalseSchema:
		return &Violation{Kind: Invalid, Path: path, Message: "is not allowed by this product's schema"}
	}
	return &Violation{Kind: Invalid, Path: path, Message: "is invalid: " + ve.ErrorKind.LocalizedString(english)}
}
