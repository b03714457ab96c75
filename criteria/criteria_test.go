package criteria_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/criteria"
)

const result = `{"status":"resolved","confidence":0.8,"count":3,"big":12345678901234567890123,
 "summary":"Refund issued for invoice 7","labels":["billing","refund"],"a/b":{"m~n":true},"empty":null,
 "nested":{"score":1.0,"tags":[]}}`

func TestEvaluate(t *testing.T) {
	cases := []struct {
		name, tree string
		want       bool
	}{
		{"exact string", `{"type":"exact","path":"/status","value":"resolved"}`, true},
		{"exact string differs", `{"type":"exact","path":"/status","value":"open"}`, false},
		{"exact number by value", `{"type":"exact","path":"/nested/score","value":1}`, true},
		{"exact big integer exactly", `{"type":"exact","path":"/big","value":12345678901234567890123}`, true},
		{"exact big integer off by one", `{"type":"exact","path":"/big","value":12345678901234567890122}`, false},
		{"exact array in order", `{"type":"exact","path":"/labels","value":["billing","refund"]}`, true},
		{"exact array out of order", `{"type":"exact","path":"/labels","value":["refund","billing"]}`, false},
		{"exact object", `{"type":"exact","path":"/a~1b","value":{"m~n":true}}`, true},
		{"pointer escapes", `{"type":"exact","path":"/a~1b/m~0n","value":true}`, true},
		{"array index", `{"type":"exact","path":"/labels/1","value":"refund"}`, true},
		{"array index leading zero is absent", `{"type":"exact","path":"/labels/01","value":"refund"}`, false},
		{"array index out of range", `{"type":"exact","path":"/labels/2","value":"refund"}`, false},
		{"missing path", `{"type":"exact","path":"/nope","value":1}`, false},
		{"type mismatch number vs string", `{"type":"exact","path":"/count","value":"3"}`, false},
		{">= at the boundary", `{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.8}`, true},
		{"> at the boundary", `{"type":"numeric_threshold","path":"/confidence","op":">","value":0.8}`, false},
		{"<= at the boundary", `{"type":"numeric_threshold","path":"/confidence","op":"<=","value":0.80}`, true},
		{"< at the boundary", `{"type":"numeric_threshold","path":"/confidence","op":"<","value":8e-1}`, false},
		{"== exact decimal", `{"type":"numeric_threshold","path":"/confidence","op":"==","value":0.8}`, true},
		{"!= exact decimal", `{"type":"numeric_threshold","path":"/confidence","op":"!=","value":0.8000000000000001}`, true},
		{"threshold on a string", `{"type":"numeric_threshold","path":"/status","op":">","value":0}`, false},
		{"threshold on a huge integer", `{"type":"numeric_threshold","path":"/big","op":">","value":1.2345678901234567e22}`, true},
		{"regex match", `{"type":"regex","path":"/summary","pattern":"invoice \\d+$"}`, true},
		{"regex anchored mismatch", `{"type":"regex","path":"/summary","pattern":"^invoice"}`, false},
		{"regex on a number", `{"type":"regex","path":"/count","pattern":"3"}`, false},
		{"schema valid", `{"type":"json_schema","path":"/labels","schema":{"type":"array","minItems":1,"items":{"type":"string"}}}`, true},
		{"schema invalid", `{"type":"json_schema","path":"/nested/tags","schema":{"type":"array","minItems":1}}`, false},
		{"schema on whole result", `{"type":"json_schema","path":"","schema":{"type":"object","required":["status","summary"]}}`, true},
		{"all_of", `{"type":"all_of","criteria":[{"type":"exact","path":"/status","value":"resolved"},{"type":"numeric_threshold","path":"/count","op":">=","value":3}]}`, true},
		{"all_of one fails", `{"type":"all_of","criteria":[{"type":"exact","path":"/status","value":"resolved"},{"type":"numeric_threshold","path":"/count","op":">","value":3}]}`, false},
		{"any_of", `{"type":"any_of","criteria":[{"type":"exact","path":"/status","value":"open"},{"type":"regex","path":"/summary","pattern":"Refund"}]}`, true},
		{"any_of none", `{"type":"any_of","criteria":[{"type":"exact","path":"/status","value":"open"},{"type":"regex","path":"/summary","pattern":"^x"}]}`, false},
		{"not", `{"type":"not","criterion":{"type":"exact","path":"/status","value":"open"}}`, true},
		{"not of a missing value matches", `{"type":"not","criterion":{"type":"exact","path":"/nope","value":1}}`, true},
		{"null value found", `{"type":"json_schema","path":"/empty","schema":{"type":"null"}}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cr, err := criteria.Parse([]byte(c.tree))
			if err != nil {
				t.Fatal(err)
			}
			out := cr.Evaluate([]byte(result))
			if out.Success != c.want {
				t.Fatalf("success %v, want %v; trace %+v", out.Success, c.want, out.Trace)
			}
			if len(out.Trace) != cr.Nodes() || out.Trace[0].Matched != c.want || out.Trace[0].Reason == "" {
				t.Fatalf("trace %+v", out.Trace)
			}
		})
	}
}

func TestTraceReadsWell(t *testing.T) {
	cr := criteria.MustParse(`{"type":"all_of","criteria":[
		{"type":"numeric_threshold","path":"/confidence","op":">","value":0.9},
		{"type":"not","criterion":{"type":"regex","path":"/summary","pattern":"^Refund"}}]}`)
	out := cr.Evaluate([]byte(result))
	want := []criteria.Step{
		{Node: "", Type: "all_of", Matched: false, Reason: "0 of 2 criteria matched; all must"},
		{Node: "criteria[0]", Path: "/confidence", Type: "numeric_threshold", Matched: false, Reason: `the value at "/confidence" is 0.8, not > 0.9`},
		{Node: "criteria[1]", Type: "not", Matched: false, Reason: "the criterion matched"},
		{Node: "criteria[1].criterion", Path: "/summary", Type: "regex", Matched: true, Reason: `the value at "/summary" matches ^Refund`},
	}
	if out.Success || len(out.Trace) != len(want) {
		t.Fatalf("%+v", out)
	}
	for i := range want {
		if out.Trace[i] != want[i] {
			t.Errorf("step %d: %+v\nwant %+v", i, out.Trace[i], want[i])
		}
	}
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"trace":[{"node":"","path":"","type":"all_of","matched":false,`) {
		t.Fatalf("JSON %s", b)
	}
}

func TestParseErrorsNameTheNode(t *testing.T) {
	leaf := `{"type":"exact","path":"/a","value":1}`
	deep := leaf
	for range 8 {
		deep = `{"type":"not","criterion":` + deep + `}`
	}
	var many []string
	for range 64 {
		many = append(many, leaf)
	}
	cases := []struct{ tree, param, msg string }{
		{`{"type":"all_of","criteria":[` + leaf + `,{"type":"regex","path":"/a","pattern":"(unclosed"}]}`, "criteria[1].pattern", "RE2"},
		{`{"type":"regex","path":"/a","pattern":"(a)\\1"}`, "pattern", "RE2"},
		{`{"type":"exact","path":"a","value":1}`, "path", "JSON Pointer"},
		{`{"type":"exact","path":"/a~2","value":1}`, "path", "~ must be followed"},
		{`{"type":"exacto","path":"/a","value":1}`, "type", "unknown type"},
		{`{"path":"/a","value":1}`, "type", "type is required"},
		{`{"type":"exact","path":"/a"}`, "value", "value is required"},
		{`{"type":"exact","path":"/a","value":1,"pattern":"x"}`, "pattern", "not a field of an exact"},
		{`{"type":"numeric_threshold","path":"/a","op":"=>","value":1}`, "op", "not one of"},
		{`{"type":"numeric_threshold","path":"/a","op":">","value":"1"}`, "value", "must be a number"},
		{`{"type":"numeric_threshold","path":"/a","op":">","value":1e999999999}`, "value", "out of range"},
		{`{"type":"json_schema","path":"/a","schema":{"type":"strang"}}`, "schema", "JSON Schema"},
		{`{"type":"json_schema","path":"/a","schema":{"$ref":"https://example.com/s.json"}}`, "schema", "JSON Schema"},
		{`{"type":"any_of","criteria":[]}`, "criteria", "at least one"},
		{`{"type":"all_of","criteria":[` + leaf + `,{"type":"any_of","criteria":[` + leaf + `,{"type":"exact","path":"/a","value":1,"VALUE":2}]}]}`, "criteria[1].criteria[1].VALUE", ""},
		{`{"type":"exact","type":"exact","path":"/a","value":1}`, "type", "more than once"},
		{deep, "criterion.criterion.criterion.criterion.criterion.criterion.criterion.criterion", "deeper than 8"},
		{`{"type":"any_of","criteria":[` + strings.Join(many, ",") + `]}`, "criteria[63]", "more than 64 nodes"},
		{`{"type":"not","criterion":[]}`, "criterion", ""},
	}
	for _, c := range cases {
		_, err := criteria.Parse([]byte(c.tree))
		var ce *criteria.Error
		if !errors.As(err, &ce) || ce.Param != c.param || !strings.Contains(ce.Message, c.msg) {
			t.Errorf("%.80s…: got %v (param %q), want param %q containing %q", c.tree, err, paramOf(err), c.param, c.msg)
		}
	}
}

func paramOf(err error) string {
	var ce *criteria.Error
	if errors.As(err, &ce) {
		return ce.Param
	}
	return "?"
}

func TestLimitsAtTheBoundary(t *testing.T) {
	leaf := `{"type":"exact","path":"/status","value":"resolved"}`
	deep := leaf
	for range 7 { // 8 levels: allowed
		deep = `{"type":"not","criterion":` + deep + `}`
	}
	if _, err := criteria.Parse([]byte(deep)); err != nil {
		t.Fatalf("8 levels: %v", err)
	}
	var many []string
	for range 63 {
		many = append(many, leaf)
	}
	cr, err := criteria.Parse([]byte(`{"type":"all_of","criteria":[` + strings.Join(many, ",") + `]}`))
	if err != nil || cr.Nodes() != 64 {
		t.Fatalf("64 nodes: %v", err)
	}
	if out := cr.Evaluate([]byte(result)); !out.Success || len(out.Trace) != 64 {
		t.Fatalf("64-node evaluation %v %d", out.Success, len(out.Trace))
	}
}

func TestRoundTrip(t *testing.T) {
	in := `{"type":"any_of","criteria":[{"type":"regex","path":"/summary","pattern":"x"},{"type":"json_schema","path":"","schema":{"type":"object"}}]}`
	cr := criteria.MustParse(in)
	b, err := json.Marshal(cr)
	if err != nil {
		t.Fatal(err)
	}
	var back criteria.Criteria
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Nodes() != 3 {
		t.Fatalf("%s", b)
	}
}

func TestInvalidResult(t *testing.T) {
	cr := criteria.MustParse(`{"type":"not","criterion":{"type":"exact","path":"","value":1}}`)
	out := cr.Evaluate([]byte(`{"a":`))
	if !out.Success || !strings.Contains(out.Trace[1].Reason, "not valid JSON") {
		t.Fatalf("%+v", out)
	}
}

// TestEvaluationIsLinear checks that evaluation time grows in proportion to
// the result: a result 16 times larger costs at most about 16 times more
// (with a generous factor for noise), for regexes that would backtrack
// catastrophically in a backtracking engine.
func TestEvaluationIsLinear(t *testing.T) {
	cr := criteria.MustParse(`{"type":"all_of","criteria":[
		{"type":"regex","path":"/s","pattern":"^(a+)+$"},
		{"type":"json_schema","path":"/xs","schema":{"type":"array","items":{"type":"string","pattern":"^(a|aa)+$"}}},
		{"type":"exact","path":"/xs","value":[]}]}`)
	mk := func(n int) []byte {
		xs := make([]string, n/100)
		for i := range xs {
			xs[i] = strings.Repeat("a", 99) + "b"
		}
		b, _ := json.Marshal(map[string]any{"s": strings.Repeat("a", n) + "b", "xs": xs})
		return b
	}
	cost := func(doc []byte) time.Duration {
		best := time.Duration(1 << 62)
		for range 5 {
			start := time.Now()
			cr.Evaluate(doc)
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := cost(mk(20_000)), cost(mk(320_000))
	if large > 64*small+20*time.Millisecond {
		t.Fatalf("16x the result cost %v against %v: not linear", large, small)
	}
}

func BenchmarkEvaluate64Nodes(b *testing.B) {
	var leaves []string
	for i := range 63 {
		switch i % 4 {
		case 0:
			leaves = append(leaves, `{"type":"exact","path":"/status","value":"resolved"}`)
		case 1:
			leaves = append(leaves, `{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.5}`)
		case 2:
			leaves = append(leaves, `{"type":"regex","path":"/summary","pattern":"invoice \\d+"}`)
		default:
			leaves = append(leaves, `{"type":"json_schema","path":"/labels","schema":{"type":"array","items":{"type":"string"}}}`)
		}
	}
	cr := criteria.MustParse(`{"type":"all_of","criteria":[` + strings.Join(leaves, ",") + `]}`)
	doc := []byte(result)
	b.ReportAllocs()
	for b.Loop() {
		if !cr.Evaluate(doc).Success {
			b.Fatal("not matched")
		}
	}
}

func ExampleCriteria_Evaluate() {
	cr := criteria.MustParse(`{"type":"all_of","criteria":[
		{"type":"exact","path":"/status","value":"resolved"},
		{"type":"numeric_threshold","path":"/confidence","op":">=","value":0.9}]}`)
	out := cr.Evaluate([]byte(`{"status":"resolved","confidence":0.85}`))
	fmt.Println(out.Success)
	for _, s := range out.Trace {
		fmt.Printf("%-12s %-5v %s\n", s.Node+s.Path, s.Matched, s.Reason)
	}
	// Output:
	// false
	//              false 1 of 2 criteria matched; all must
	// criteria[0]/status true  the value at "/status" equals "resolved"
	// criteria[1]/confidence false the value at "/confidence" is 0.85, not >= 0.9
}
