// Package strictjson is the one JSON decoder of settleflow's inputs: HTTP
// request bodies (httpapi) and product payloads (the engine, also when it is
// called in-process). It exists so that every program that reads the same
// bytes, ours, a proxy, an auditor's Python script or Postgres, reads the
// same values: whoever is billed and how much must not depend on which
// parser looked.
//
// UnmarshalObject accepts exactly one JSON object and refuses, each with an
// *Error naming where:
//
//   - a member name given twice in one object (RFC 7493), whatever the
//     values: encoding/json would silently keep the last one;
//   - a member name that matches no field exactly: names are case-sensitive,
//     so "CUSTOMERID" is unknown, not customerId (encoding/json folds case);
//     unknown names are refused, never ignored;
//   - invalid UTF-8, and escapes that do not make valid UTF-8 (a lone
//     surrogate such as \ud800), so nothing stored or echoed can stop being
//     JSON;
//   - any data after the object;
//   - nesting of objects and arrays deeper than MaxDepth;
//   - a value of the wrong type for its field (the message says which).
//
// Values decoded into an interface (any, map[string]any) keep their numbers
// as encoding/json.Number, never as a rounded float64, so a product that
// reads a number out of a free-form payload sees the digits that were sent.
//
// The decoding itself is github.com/go-json-experiment/json, the upstream of
// encoding/json/v2, whose defaults are these rules; this package pins the
// options, adds the depth limit and turns its errors into ones a caller can
// map to an API error without parsing message text.
package strictjson

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth is how deeply objects and arrays may nest in one decoded
// document; the outermost object is level 1. No input of settleflow needs
// more, and a limit keeps a 1 MiB body of brackets from costing more than
// an ordinary one. Over HTTP the payload sits at level 2 of the body, so a
// payload may nest MaxDepth-1 levels there.
const MaxDepth = 64

// Kind classifies an Error.
type Kind int

// Kinds of Error.
const (
	// Empty: no JSON value at all (only white space).
	Empty Kind = iota + 1
	// NotObject: the value is valid JSON but not an object.
	NotObject
	// Syntax: not JSON.
	Syntax
	// InvalidUTF8: a string or name is not valid UTF-8.
	InvalidUTF8
	// TrailingData: something follows the object.
	TrailingData
	// TooDeep: objects and arrays nest deeper than MaxDepth.
	TooDeep
	// DuplicateName: an object has the same member name twice; Path ends
	// with that name.
	DuplicateName
	// UnknownName: a member name matches no field (names are compared
	// case-sensitively); Path ends with that name.
	UnknownName
	// Type: a value does not fit its field's Go type.
	Type
)

// Error is a refused input. Path locates the fault from the top-level
// object: member names and array indices (as decimal strings), empty for
// the object itself.
type Error struct {
	Kind   Kind
	Path   []string
	Offset int64 // byte offset at or after which the fault is
	// want and got describe a Type error: "an integer", "a string".
	want, got string
	// detail is the decoder's own words for Syntax and Type errors.
	detail string
}

func (e *Error) Error() string {
	return "strictjson: " + e.Message(e.Param(""))
}

// Param is where the fault is, as the API names parameters: prefix (for
// example "payload", or "" for a request body) followed by Path, joined
// with dots ("payload.items.0.sku").
func (e *Error) Param(prefix string) string {
	parts := make([]string, 0, len(e.Path)+1)
	if prefix != "" {
		parts = append(parts, prefix)
	}
	parts = append(parts, e.Path...)
	return strings.Join(parts, ".")
}

// Message is a sentence for people, naming the fault at param (as Param
// returns it; "" is the document itself, called "the JSON" here: callers
// with their own words for an empty param replace those cases).
func (e *Error) Message(param string) string {
	where := param
	if where == "" {
		where = "the JSON"
	}
	switch e.Kind {
	case Empty:
		return where + " is empty; send a JSON object"
	case NotObject:
		return where + " must be a JSON object"
	case InvalidUTF8:
		return fmt.Sprintf("%s is not valid UTF-8 (at byte %d); send UTF-8 text", where, e.Offset)
	case TrailingData:
		return fmt.Sprintf("%s has data after the JSON object (at byte %d)", where, e.Offset)
	case TooDeep:
		return fmt.Sprintf("%s nests objects and arrays deeper than %d levels", where, MaxDepth)
	case DuplicateName:
		return fmt.Sprintf("%s is given more than once; give each name once", where)
	case UnknownName:
		return fmt.Sprintf("Received unknown parameter: %s (names are case-sensitive)", where)
	case Type:
		if e.want != "" && e.got != "" {
			return fmt.Sprintf("%s must be %s, not %s", where, e.want, e.got)
		}
		return fmt.Sprintf("%s is invalid: %s", where, e.detail)
	default:
		return fmt.Sprintf("%s is not valid JSON (at byte %d)", where, e.Offset)
	}
}

// options are the decoding rules. The go-json-experiment defaults already
// reject duplicate names and invalid UTF-8 and match names case-sensitively;
// they are spelled out so that a change of defaults cannot loosen them.
var options = json.JoinOptions(
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	json.MatchCaseInsensitiveNames(false),
	json.RejectUnknownMembers(true),
	json.WithUnmarshalers(json.JoinUnmarshalers(
		json.UnmarshalFromFunc(unmarshalAny),
		json.UnmarshalFromFunc(unmarshalNumber),
	)),
)

// unmarshalAny decodes a value held by an interface the way encoding/json
// with UseNumber does (numbers as json.Number), so that free-form payloads
// keep every digit. The value has been checked by the strict tokenizer
// before it gets here (duplicates, UTF-8), and maps and slices keep names
// as sent, so handing it to encoding/json reintroduces no differential.
func unmarshalAny(dec *jsontext.Decoder, v *any) error {
	switch dec.PeekKind() {
	case '{', '[', '0':
	default:
		return errors.ErrUnsupported // strings, booleans and null: the default is right
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	d := stdjson.NewDecoder(bytes.NewReader(val))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return err
	}
	*v = out
	return nil
}

// unmarshalNumber lets a product field of type encoding/json.Number take a
// JSON number, as it did with encoding/json.
func unmarshalNumber(dec *jsontext.Decoder, n *stdjson.Number) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*n = stdjson.Number(val)
	return nil
}

// UnmarshalObject decodes data, which must be exactly one JSON object
// (white space around it aside), into v by the package's rules. Every error
// it returns is an *Error.
func UnmarshalObject(data []byte, v any) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return &Error{Kind: Empty}
	case trimmed[0] != '{':
		if jsontext.Value(trimmed).IsValid() {
			return &Error{Kind: NotObject}
		}
		return &Error{Kind: Syntax, Offset: int64(len(data) - len(trimmed))}
	}
	if off := tooDeep(data, MaxDepth); off >= 0 {
		return &Error{Kind: TooDeep, Offset: int64(off), Path: deepPath(data, MaxDepth)}
	}
	if err := json.Unmarshal(data, v, options); err != nil {
		return convert(data, err)
	}
	return nil
}

// tooDeep returns the offset of the first '{' or '[' nested deeper than
// max, or -1. It is exact for valid JSON and never panics on invalid input
// (which the decoder refuses afterwards). Strings are skipped with
// bytes.IndexByte, so a large text payload costs little.
func tooDeep(data []byte, max int) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			depth++
			if depth > max {
				return i
			}
		case '}', ']':
			depth--
		case '"':
			// Find the closing quote: one not preceded by an odd number
			// of backslashes.
			for {
				j := bytes.IndexByte(data[i+1:], '"')
				if j < 0 {
					return -1 // unterminated string: a syntax error, not depth
				}
				i += 1 + j
				k := i - 1
				for k >= 0 && data[k] == '\\' {
					k--
				}
				if (i-1-k)%2 == 0 {
					break
				}
			}
		}
	}
	return -1
}

// deepPath is the path to the first value nested deeper than max, found
// with the tokenizer; it runs only for an input already refused.
func deepPath(data []byte, max int) []string {
	dec := jsontext.NewDecoder(bytes.NewReader(data), options)
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		if k := tok.Kind(); (k == '{' || k == '[') && dec.StackDepth() > max {
			return pointerPath(dec.StackPointer().Parent())
		}
	}
}

func pointerPath(p jsontext.Pointer) []string {
	var out []string
	for tok := range p.Tokens() {
		out = append(out, tok)
	}
	return out
}

func convert(data []byte, err error) error {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn):
		e := &Error{Kind: Syntax, Offset: syn.ByteOffset, Path: pointerPath(syn.JSONPointer), detail: syn.Err.Error()}
		switch {
		case errors.Is(syn, jsontext.ErrDuplicateName):
			e.Kind = DuplicateName
		case isInvalidUTF8(data, syn):
			e.Kind = InvalidUTF8
		case len(e.Path) == 0 && isTrailing(data, syn.ByteOffset):
			e.Kind = TrailingData
		}
		return e
	case errors.As(err, &sem):
		e := &Error{Kind: Type, Offset: sem.ByteOffset, Path: pointerPath(sem.JSONPointer)}
		if errors.Is(sem, json.ErrUnknownName) {
			e.Kind = UnknownName
			return e
		}
		if sem.Err != nil {
			e.detail = sem.Err.Error()
		} else {
			e.detail = sem.Error()
		}
		if sem.GoType != nil {
			e.want = describeType(sem.GoType)
		}
		e.got = describeValue(sem.JSONKind, sem.JSONValue)
		return e
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &Error{Kind: Syntax, Offset: int64(len(data))}
	default:
		return &Error{Kind: Type, detail: err.Error()}
	}
}

// isInvalidUTF8 tells an encoding fault from other syntax errors: the
// decoder reports it at the offending byte. The text check is a second
// line, in case a later version reports a different offset; the tests pin
// both.
func isInvalidUTF8(data []byte, syn *jsontext.SyntacticError) bool {
	if off := syn.ByteOffset; off >= 0 && off < int64(len(data)) {
		if r, size := utf8.DecodeRune(data[off:]); r == utf8.RuneError && size <= 1 {
			return true
		}
	}
	return syn.Err != nil && strings.Contains(syn.Err.Error(), "UTF-8")
}

// isTrailing reports whether the error at off lies after a complete
// top-level value.
func isTrailing(data []byte, off int64) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(data), options)
	if _, err := dec.ReadValue(); err != nil {
		return false
	}
	return dec.InputOffset() <= off
}

func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[stdjson.Number]() {
		return "a number"
	}
	if t == reflect.TypeFor[stdjson.RawMessage]() || t == reflect.TypeFor[jsontext.Value]() {
		return "" // any JSON value; the detail says what went wrong
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("an integer that fits in %d bits", t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("a non-negative integer that fits in %d bits", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	default:
		return ""
	}
}

func describeValue(k jsontext.Kind, v jsontext.Value) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		if len(v) > 0 && len(v) <= 40 {
			return string(v)
		}
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	default:
		return ""
	}
}
