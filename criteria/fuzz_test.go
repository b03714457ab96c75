package criteria_test

import (
	"testing"

	"github.com/settleflow/settleflow/criteria"
)

// FuzzParseEvaluate feeds arbitrary trees and results: nothing panics, a
// tree that parses evaluates to a trace of one step per node, and it
// round-trips through its JSON.
func FuzzParseEvaluate(f *testing.F) {
	f.Add(`{"type":"exact","path":"/a","value":1}`, `{"a":1}`)
	f.Add(`{"type":"numeric_threshold","path":"/a/0","op":"<=","value":1e3}`, `{"a":[999.5]}`)
	f.Add(`{"type":"regex","path":"","pattern":"(x+x+)+y"}`, `"xxxxxxxxxxxxxxxxxxxxxxxx"`)
	f.Add(`{"type":"json_schema","path":"/a","schema":{"type":"object","properties":{"b":{"minimum":2}}}}`, `{"a":{"b":1}}`)
	f.Add(`{"type":"any_of","criteria":[{"type":"not","criterion":{"type":"exact","path":"/~1~0","value":null}}]}`, `{"/~":null}`)
	f.Add(`{"type":"numeric_threshold","path":"/n","op":"==","value":1}`, `{"n":1e99999999999}`)
	f.Fuzz(func(t *testing.T, tree, result string) {
		cr, err := criteria.Parse([]byte(tree))
		if err != nil {
			if _, ok := err.(*criteria.Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out := cr.Evaluate([]byte(result))
		if len(out.Trace) != cr.Nodes() || out.Trace[0].Matched != out.Success {
			t.Fatalf("trace %+v for %d nodes", out, cr.Nodes())
		}
		b, err := cr.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := criteria.Parse(b)
		if err != nil || again.Nodes() != cr.Nodes() {
			t.Fatalf("round trip %s: %v", b, err)
		}
		if again.Evaluate([]byte(result)).Success != out.Success {
			t.Fatalf("round trip changed the verdict: %s", b)
		}
	})
}
