package criteria

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// english words the schema validator's errors.
var english = message.NewPrinter(language.English)

// Step is one node's verdict in an evaluation's trace.
type Step struct {
	// Node is the node's place in the tree ("" for the root,
	// "criteria[1]", "criteria[0].criterion").
	Node string `json:"node"`
	// Path is the JSON Pointer a leaf tested ("" for the whole result; also
	// "" for a combinator).
	Path string `json:"path"`
	Type string `json:"type"`
	// Matched is the node's verdict.
	Matched bool `json:"matched"`
	// Reason says why, for people.
	Reason string `json:"reason"`
}

// Outcome is an evaluation's verdict: whether the result met the criteria,
// and each node's step, in tree order (a node before its children).
type Outcome struct {
	Success bool   `json:"success"`
	Trace   []Step `json:"trace"`
}

// Evaluate tests result (a JSON document; nil or "null" is the null
// result) against the tree. A result that is not valid JSON matches
// nothing, and says so in the root's reason.
func (c *Criteria) Evaluate(result []byte) Outcome {
	var doc any
	var docErr error
	if len(bytes.TrimSpace(result)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(result))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			docErr = err
		} else if dec.More() {
			docErr = errors.New("data after the JSON value")
		}
	}
	out := Outcome{Trace: make([]Step, 0, c.nodes)}
	out.Success = c.root.eval(doc, docErr, &out.Trace)
	return out
}

func (n *node) eval(doc any, docErr error, trace *[]Step) bool {
	i := len(*trace)
	*trace = append(*trace, Step{Node: n.where, Path: n.path, Type: n.typ})
	var ok bool
	var reason string
	switch n.typ {
	case TypeAllOf, TypeAnyOf, TypeNot:
		matched := 0
		for _, ch := range n.children {
			if ch.eval(doc, docErr, trace) {
				matched++
			}
		}
		switch n.typ {
		case TypeAllOf:
			ok = matched == len(n.children)
			reason = fmt.Sprintf("%d of %d criteria matched; all must", matched, len(n.children))
		case TypeAnyOf:
			ok = matched > 0
			reason = fmt.Sprintf("%d of %d criteria matched; at least one must", matched, len(n.children))
		default:
			ok = matched == 0
			if ok {
				reason = "the criterion did not match"
			} else {
				reason = "the criterion matched"
			}
		}
	default:
		if docErr != nil {
			reason = "the result is not valid JSON: " + docErr.Error()
			break
		}
		v, found := lookup(doc, n.tokens)
		if !found {
			reason = fmt.Sprintf("the result has no value at %q", n.path)
			break
		}
		ok, reason = n.test(v)
	}
	(*trace)[i].Matched, (*trace)[i].Reason = ok, reason
	return ok
}

// lookup resolves a JSON Pointer's tokens in doc.
func lookup(doc any, tokens []string) (any, bool) {
	v := doc
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[t]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			// RFC 6901: an array index is 0 or a number without a leading zero.
			if t == "" || (len(t) > 1 && t[0] == '0') {
				return nil, false
			}
			idx, err := strconv.Atoi(t)
			if err != nil || idx < 0 || idx >= len(x) {
				return nil, false
			}
			v = x[idx]
		default:
			return nil, false
		}
	}
	return v, true
}

func (n *node) test(v any) (bool, string) {
	switch n.typ {
	case TypeExact:
		if equal(v, n.value) {
			return true, fmt.Sprintf("%s equals %s", n.subject, show(n.value))
		}
		return false, fmt.Sprintf("%s is %s, not %s", n.subject, show(v), show(n.value))
	case TypeNumericThreshold:
		num, isNum := v.(json.Number)
		if !isNum {
			return false, fmt.Sprintf("%s is %s, not a number", n.subject, show(v))
		}
		r, err := parseNumber(num)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", n.subject, err)
		}
		c := r.Cmp(n.num)
		var ok bool
		switch n.op {
		case "<":
			ok = c < 0
		case "<=":
			ok = c <= 0
		case ">":
			ok = c > 0
		case ">=":
			ok = c >= 0
		case "==":
			ok = c == 0
		case "!=":
			ok = c != 0
		}
		if ok {
			return true, fmt.Sprintf("%s is %s, %s %s", n.subject, clip(string(num)), n.op, clip(n.numText))
		}
		return false, fmt.Sprintf("%s is %s, not %s %s", n.subject, clip(string(num)), n.op, clip(n.numText))
	case TypeRegex:
		s, isStr := v.(string)
		if !isStr {
			return false, fmt.Sprintf("%s is %s, not a string", n.subject, show(v))
		}
		if n.re.MatchString(s) {
			return true, fmt.Sprintf("%s matches %s", n.subject, clip(n.re.String()))
		}
		return false, fmt.Sprintf("%s does not match %s", n.subject, clip(n.re.String()))
	case TypeJSONSchema:
		if err := n.schema.Validate(v); err != nil {
			var ve *jsonschema.ValidationError
			msg := err.Error()
			if errors.As(err, &ve) {
				msg = firstCause(ve)
			}
			return false, fmt.Sprintf("%s is not valid against the schema: %s", n.subject, clip(msg))
		}
		return true, fmt.Sprintf("%s is valid against the schema", n.subject)
	}
	return false, "unknown criterion"
}

// firstCause is the deepest first cause of a validation error, the one a
// person can act on.
func firstCause(ve *jsonschema.ValidationError) string {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := "/" + strings.Join(ve.InstanceLocation, "/")
	if loc == "/" {
		return ve.ErrorKind.LocalizedString(english)
	}
	return "at " + loc + ": " + ve.ErrorKind.LocalizedString(english)
}

func describe(path string) string {
	if path == "" {
		return "the result"
	}
	return "the value at " + strconv.Quote(path)
}

// equal is JSON equality: numbers by value, objects by members, arrays in
// order.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		rx, err1 := parseNumber(x)
		ry, err2 := parseNumber(y)
		return err1 == nil && err2 == nil && rx.Cmp(ry) == 0
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// show writes a value for a reason, cut to a readable length.
func show(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 5 {
			keys = append(keys[:5], "…")
		}
		return "an object {" + strings.Join(keys, ", ") + "}"
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b))
}

const maxShown = 100

func clip(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
