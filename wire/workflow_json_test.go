package wire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// plainWorkflow has Workflow's fields without its methods: what
// encoding/json writes for it is the reference AppendJSON must match.
type plainWorkflow Workflow

func reference(t testing.TB, w *Workflow) []byte {
	t.Helper()
	b, err := json.Marshal((*plainWorkflow)(w))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// randomString mixes plain ASCII with every kind of character encoding/json
// escapes: quotes, backslashes, controls, HTML, U+2028/9, invalid UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", "cus_", " ", "\"", "\\", "\n", "\t", "\r", "\b", "\f", "\x00", "\x1f", "\x7f",
		"<", ">", "&", "\u2028", "\u2029", "é", "日本", "😀", "\xff", "\xe2\x80", "/", "'"}
	var sb strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		sb.WriteString(pieces[r.IntN(len(pieces))])
	}
	return sb.String()
}

var rawSamples = []string{`{}`, `{"units":1}`, `{"a": [1, 2, {"b":"<x>&y"}]}`, "{\n\t\"k\" : \"v\u2028\" }", `[]`, `"s"`, `12.5e3`, `null`, `true`,
	`{"html":"\u003c"}`, `{"s":"a b"}`}

func randomWorkflow(r *rand.Rand) *Workflow {
	ts := func() time.Time {
		return time.Unix(r.Int64N(1<<36), r.Int64N(1e9)).UTC()
	}
	w := &Workflow{
		ID: randomString(r), Object: "workflow", Livemode: r.IntN(2) == 0, Product: randomString(r), CustomerID: randomString(r),
		Payload: json.RawMessage(rawSamples[r.IntN(len(rawSamples))]),
		Quoted:  Money{Amount: r.Int64() - r.Int64(), Currency: randomString(r)},
		Margin:  Margin{Target: BasisPoints(r.Int64N(40001) - 20000)},
		Status:  Status(randomString(r)), Result: json.RawMessage(rawSamples[r.IntN(len(rawSamples))]),
		CreatedAt: ts(), UpdatedAt: ts(), Sequence: r.Uint64(),
	}
	if r.IntN(2) == 0 {
		a := BasisPoints(r.Int64N(2_000_001) - 1_000_000)
		w.Margin.Achieved = &a
	}
	if r.IntN(2) == 0 {
		w.Settlement = &Settlement{ChainID: r.Int64(), Network: randomString(r), TxHash: randomString(r), BlockNumber: r.Uint64(), Confirmations: r.Uint64()}
		if r.IntN(2) == 0 { // the cost, when the settler knows it
			w.Settlement.GasUsed, w.Settlement.Fee = r.Uint64(), randomString(r)
		}
	}
	if r.IntN(2) == 0 {
		w.Failure = &Failure{Code: ErrorCode(randomString(r)), Message: randomString(r)}
	}
	if r.IntN(5) == 0 {
		w.Result = nil
	}
	bp := func() *BasisPoints { b := BasisPoints(r.Int64N(20001) - 10000); return &b }
	w.Pricing = Pricing{Model: PricingModel(randomString(r))}
	if r.IntN(2) == 0 {
		w.Pricing.Markup, w.Pricing.MinimumCharge = bp(), &Money{Amount: r.Int64(), Currency: randomString(r)}
	}
	if r.IntN(2) == 0 {
		w.Pricing.BaseShare = bp()
	}
	if r.IntN(2) == 0 {
		w.SuccessCriteria = json.RawMessage(rawSamples[r.IntN(len(rawSamples))])
		w.MarginFloor = bp()
	}
	if r.IntN(2) == 0 {
		w.Charged = &Money{Amount: r.Int64(), Currency: randomString(r)}
		w.Cost = &Cost{Amount: r.Int64(), Currency: randomString(r)}
		for range r.IntN(4) {
			w.Cost.Items = append(w.Cost.Items, CostItem{Category: CostCategory(randomString(r)), Provider: randomString(r), Units: r.Int64(), Amount: r.Int64()})
		}
	}
	if r.IntN(2) == 0 {
		w.Outcome = &Outcome{Success: r.IntN(2) == 0}
		for range r.IntN(4) {
			w.Outcome.Trace = append(w.Outcome.Trace, OutcomeStep{Node: randomString(r), Path: randomString(r), Type: randomString(r), Matched: r.IntN(2) == 0, Reason: randomString(r)})
		}
	}
	if r.IntN(7) == 0 {
		w.CreatedAt = time.Date(2026, 11, 21, 12, 0, 0, 0, time.FixedZone("x", 3600)) // a zone other than UTC
	}
	return w
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10_000; i++ {
		w := randomWorkflow(r)
		want := reference(t, w)
		if got := w.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
		got, err := json.Marshal(w) // through MarshalJSON
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d: json.Marshal = %s, %v\nwant %s", i, got, err, want)
		}
		var back Workflow
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("case %d: the output does not decode: %v", i, err)
		}
	}
}

func TestMarshalJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for name, w := range map[string]*Workflow{
		"invalid payload":  {Payload: json.RawMessage(`{"a":`)},
		"invalid result":   {Payload: json.RawMessage(`{}`), Result: json.RawMessage(`nope`)},
		"invalid criteria": {Payload: json.RawMessage(`{}`), SuccessCriteria: json.RawMessage(`{"type":`)},
		"empty payload":    {Payload: json.RawMessage{}},
		"year 10000":       {CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := json.Marshal((*plainWorkflow)(w)); err == nil {
			t.Fatalf("%s: encoding/json accepted it; the case is wrong", name)
		}
		if b, err := json.Marshal(w); err == nil {
			t.Errorf("%s: MarshalJSON = %s, want an error", name, b)
		}
	}
}

func BenchmarkWorkflowJSON(b *testing.B) {
	a := BasisPoints(3000)
	w := &Workflow{ID: "wf_01JDQ7Z5K8X9Y2M3N4P5Q6R7S8", Object: "workflow", Product: "noop", CustomerID: "cus_bench",
		Payload: json.RawMessage(`{"units":1}`), Quoted: Money{Amount: 143, Currency: Currency}, Margin: Margin{Target: 3000, Achieved: &a},
		Status: Settled, Result: json.RawMessage(`{"ok":true}`), Settlement: &Settlement{ChainID: 1337, Network: "simulated", TxHash: "0x" + strings.Repeat("ab", 32), BlockNumber: 12, Confirmations: 1},
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal((*plainWorkflow)(w))
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			buf = w.AppendJSON(buf[:0])
		}
	})
}
