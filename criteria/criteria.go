// Package criteria decodes, checks and evaluates success criteria: a small
// tree of deterministic validators over a product's JSON result, used by
// success-fee and hybrid pricing to decide whether an outcome earns its fee.
//
// A tree is JSON. Leaves test one value of the result, found by an RFC 6901
// JSON Pointer ("" is the whole result, "/labels/0" the first label):
//
//	{"type": "exact", "path": "/status", "value": "resolved"}
//	{"type": "numeric_threshold", "path": "/confidence", "op": ">=", "value": 0.8}
//	{"type": "regex", "path": "/summary", "pattern": "^[A-Z].{10,}"}
//	{"type": "json_schema", "path": "/labels", "schema": {"type": "array", "minItems": 1}}
//
// and three combinators join them:
//
//	{"type": "all_of", "criteria": [ … ]}
//	{"type": "any_of", "criteria": [ … ]}
//	{"type": "not", "criterion": { … }}
//
// Semantics, written down once:
//   - exact: the value is present and equal as JSON (objects by members,
//     arrays in order, numbers by numeric value: 1 equals 1.0, strings by
//     their characters).
//   - numeric_threshold: the value is a number and `value op threshold`
//     holds, compared exactly in decimal (no float rounding), with op one of
//     <, <=, >, >=, ==, !=.
//   - regex: the value is a string matched by pattern in RE2 syntax (Go's
//     regexp: linear time, no backtracking); unanchored unless the pattern
//     anchors itself.
//   - json_schema: the value is valid against schema, JSON Schema draft
//     2020-12; references to other documents are refused, formats are
//     annotations only.
//   - A leaf whose path finds no value does not match (not even under not:
//     "not" of a missing value matches, since the inner criterion failed).
//   - all_of matches when every child matches, any_of when at least one
//     does; both need at least one child. Every node is evaluated (no
//     short-circuit), so the trace is complete.
//
// Limits: at most MaxNodes nodes and MaxDepth levels (the root is level 1);
// patterns at most 1,000 bytes. Evaluation costs at most one pass over the
// result plus, per node, work linear in the value it tests.
package criteria

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/settleflow/settleflow/internal/strictjson"
)

// Limits of a criteria tree.
const (
	MaxNodes      = 64
	MaxDepth      = 8
	MaxPatternLen = 1000
)

// The node types.
const (
	TypeAllOf            = "all_of"
	TypeAnyOf            = "any_of"
	TypeNot              = "not"
	TypeExact            = "exact"
	TypeNumericThreshold = "numeric_threshold"
	TypeRegex            = "regex"
	TypeJSONSchema       = "json_schema"
)

// Error is a tree that cannot be evaluated. Param names the field at fault
// relative to the tree's root ("criteria[1].pattern", "" for the root
// itself); a caller prefixes its own name ("successCriteria.criteria[1].pattern").
type Error struct {
	Param   string
	Message string
}

func (e *Error) Error() string {
	if e.Param == "" {
		return "criteria: " + e.Message
	}
	return "criteria: " + e.Param + ": " + e.Message
}

// wireNode is a node as JSON: the union of every type's fields.
type wireNode struct {
	Type      string      `json:"type"`
	Path      *string     `json:"path,omitempty"`
	Value     any         `json:"value,omitempty"`
	Op        string      `json:"op,omitempty"`
	Pattern   *string     `json:"pattern,omitempty"`
	Schema    any         `json:"schema,omitempty"`
	Criteria  []*wireNode `json:"criteria,omitempty"`
	Criterion *wireNode   `json:"criterion,omitempty"`
}

// node is a checked node, ready to evaluate.
type node struct {
	typ      string
	where    string   // the node's place in the tree ("" for the root, "criteria[1]")
	path     string   // JSON Pointer into the result (leaves)
	subject  string   // the path as reasons name it (describe(path))
	tokens   []string // path, split and unescaped
	value    any      // exact: the expected value (numbers as json.Number)
	op       string
	num      *big.Rat // numeric_threshold: the threshold
	numText  string   // the threshold as written
	re       *regexp.Regexp
	schema   *jsonschema.Schema
	children []*node
}

// Criteria is a checked tree. Its zero value is not usable; Parse makes one.
// A Criteria is immutable and safe for concurrent use.
type Criteria struct {
	root  *node
	raw   json.RawMessage
	nodes int
}

// Parse decodes and checks a tree. Every error is an *Error naming the field
// at fault. The tree is decoded strictly: unknown or duplicate names, and
// names spelled in another case, are refused.
func Parse(raw []byte) (*Criteria, error) {
	var w wireNode
	if err := strictjson.UnmarshalObject(raw, &w); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return nil, &Error{Param: jsonPath(se.Path), Message: se.Message(jsonPath(se.Path))}
		}
		return nil, &Error{Message: err.Error()}
	}
	c := &Criteria{}
	root, err := c.check(&w, "", 1)
	if err != nil {
		return nil, err
	}
	c.root = root
	c.raw, err = json.Marshal(&w)
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	return c, nil
}

// MustParse is Parse for trees written in code; it panics on an error.
func MustParse(raw string) *Criteria {
	c, err := Parse([]byte(raw))
	if err != nil {
		panic(err)
	}
	return c
}

// jsonPath writes a strictjson path as the API names places inside a tree:
// member names joined with dots, array indices in brackets.
func jsonPath(p []string) string {
	var b strings.Builder
	for _, s := range p {
		if _, err := strconv.Atoi(s); err == nil && b.Len() > 0 {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

func join(where, field string) string {
	if where == "" {
		return field
	}
	return where + "." + field
}

func (c *Criteria) check(w *wireNode, where string, depth int) (*node, error) {
	if w == nil {
		return nil, &Error{Param: where, Message: "a criterion must be a JSON object"}
	}
	c.nodes++
	if c.nodes > MaxNodes {
		return nil, &Error{Param: where, Message: fmt.Sprintf("the criteria have more than %d nodes", MaxNodes)}
	}
	if depth > MaxDepth {
		return nil, &Error{Param: where, Message: fmt.Sprintf("the criteria nest deeper than %d levels", MaxDepth)}
	}
	n := &node{typ: w.Type, where: where}
	// Fields that belong to other types are refused, so a typo cannot
	// silently change what is checked.
	allowed := map[string][]string{
		TypeAllOf: {"criteria"}, TypeAnyOf: {"criteria"}, TypeNot: {"criterion"},
		TypeExact: {"path", "value"}, TypeNumericThreshold: {"path", "op", "value"},
		TypeRegex: {"path", "pattern"}, TypeJSONSchema: {"path", "schema"},
	}
	fields, ok := allowed[w.Type]
	if !ok {
		if w.Type == "" {
			return nil, &Error{Param: join(where, "type"), Message: "type is required: one of all_of, any_of, not, exact, numeric_threshold, regex, json_schema"}
		}
		return nil, &Error{Param: join(where, "type"), Message: fmt.Sprintf("unknown type %q: want one of all_of, any_of, not, exact, numeric_threshold, regex, json_schema", w.Type)}
	}
	present := map[string]bool{"path": w.Path != nil, "value": w.Value != nil, "op": w.Op != "", "pattern": w.Pattern != nil,
		"schema": w.Schema != nil, "criteria": w.Criteria != nil, "criterion": w.Criterion != nil}
	for _, f := range []string{"path", "value", "op", "pattern", "schema", "criteria", "criterion"} {
		if present[f] && !contains(fields, f) {
			return nil, &Error{Param: join(where, f), Message: fmt.Sprintf("%s is not a field of %s %s criterion", f, article(w.Type), w.Type)}
		}
	}
	for _, f := range fields {
		if !present[f] {
			return nil, &Error{Param: join(where, f), Message: fmt.Sprintf("%s is required for %s %s criterion", f, article(w.Type), w.Type)}
		}
	}
	if w.Path != nil {
		toks, err := parsePointer(*w.Path)
		if err != nil {
			return nil, &Error{Param: join(where, "path"), Message: err.Error()}
		}
		n.path, n.tokens = *w.Path, toks
	}
	n.subject = describe(n.path)
	switch w.Type {
	case TypeAllOf, TypeAnyOf:
		if len(w.Criteria) == 0 {
			return nil, &Error{Param: join(where, "criteria"), Message: w.Type + " needs at least one criterion"}
		}
		for i, cw := range w.Criteria {
			child, err := c.check(cw, fmt.Sprintf("%s[%d]", join(where, "criteria"), i), depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, child)
		}
	case TypeNot:
		child, err := c.check(w.Criterion, join(where, "criterion"), depth+1)
		if err != nil {
			return nil, err
		}
		n.children = []*node{child}
	case TypeExact:
		n.value = w.Value
	case TypeNumericThreshold:
		switch w.Op {
		case "<", "<=", ">", ">=", "==", "!=":
			n.op = w.Op
		default:
			return nil, &Error{Param: join(where, "op"), Message: fmt.Sprintf("op %q is not one of <, <=, >, >=, ==, !=", w.Op)}
		}
		num, ok := w.Value.(json.Number)
		if !ok {
			return nil, &Error{Param: join(where, "value"), Message: "value must be a number"}
		}
		r, err := parseNumber(num)
		if err != nil {
			return nil, &Error{Param: join(where, "value"), Message: err.Error()}
		}
		n.num, n.numText = r, string(num)
	case TypeRegex:
		if len(*w.Pattern) > MaxPatternLen {
			return nil, &Error{Param: join(where, "pattern"), Message: fmt.Sprintf("pattern is longer than %d bytes", MaxPatternLen)}
		}
		re, err := regexp.Compile(*w.Pattern)
		if err != nil {
			return nil, &Error{Param: join(where, "pattern"), Message: "pattern is not a valid RE2 regular expression: " + err.Error()}
		}
		n.re = re
	case TypeJSONSchema:
		sch, err := compileSchema(w.Schema)
		if err != nil {
			return nil, &Error{Param: join(where, "schema"), Message: "schema is not a valid JSON Schema (draft 2020-12): " + err.Error()}
		}
		n.schema = sch
	}
	return n, nil
}

// article is the indefinite article before the node type t ("an exact",
// "a regex").
func article(t string) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an"
	}
	return "a"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// parsePointer splits an RFC 6901 JSON Pointer into its unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q is not a JSON Pointer: it must be empty or start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		for j := 0; j < len(s); j++ {
			if s[j] == '~' && (j+1 == len(s) || (s[j+1] != '0' && s[j+1] != '1')) {
				return nil, fmt.Errorf("path %q is not a JSON Pointer: ~ must be followed by 0 or 1", p)
			}
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// maxExponent bounds the decimal exponent of numbers compared exactly, so a
// number like 1e999999999 cannot make a comparison expand it.
const maxExponent = 400

// parseNumber reads a JSON number exactly.
func parseNumber(n json.Number) (*big.Rat, error) {
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, fmt.Errorf("number %s is out of range (exponents beyond ±%d are refused)", clip(s), maxExponent)
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%s is not a number", clip(s))
	}
	return r, nil
}

// compileSchema compiles a JSON Schema 2020-12 document given as decoded
// JSON, refusing references to any other document.
func compileSchema(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no scheme: nothing is ever loaded
	const loc = "urn:settleflow:criteria"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// MarshalJSON writes the tree as it was parsed (canonical member order).
func (c *Criteria) MarshalJSON() ([]byte, error) { return c.raw, nil }

// UnmarshalJSON parses a tree (see Parse).
func (c *Criteria) UnmarshalJSON(p []byte) error {
	parsed, err := Parse(p)
	if err != nil {
		return err
	}
	*c = *parsed
	return nil
}

// Nodes is how many nodes the tree has.
func (c *Criteria) Nodes() int { return c.nodes }
