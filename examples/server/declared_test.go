package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/declared"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// The demo products declared in testdata/demo-products.json quote every
// payload exactly as their Go versions (products.go, outcome_products.go)
// do, through the engine's own Quote: the same estimate and quote for every
// payload both accept, and a refusal naming the same field for every
// payload both refuse. Payloads come from a table of edges and from a
// seeded random generator (the seed is logged).
func TestDeclaredDemoProductsQuoteAsGo(t *testing.T) {
	ctx := context.Background()
	goEngine, declaredEngine := demoEngines(t)

	// The two catalogues list the same products, priced the same way.
	goList, declList := goEngine.Products(), declaredEngine.Products()
	if len(goList) != len(declList) {
		t.Fatalf("%d Go products, %d declared", len(goList), len(declList))
	}
	for i := range goList {
		g, d := goList[i], declList[i]
		if g.Name != d.Name || g.Description != d.Description || g.PricingSummary != d.PricingSummary ||
			g.TargetMargin != d.TargetMargin || g.MinimumCharge != d.MinimumCharge || !jsonEqual(t, g.Pricing, d.Pricing) ||
			!jsonEqual(t, g.MarginFloor, d.MarginFloor) || !jsonEqual(t, g.SuccessCriteria, d.SuccessCriteria) || !jsonEqual(t, g.Example, d.Example) {
			t.Errorf("catalogue entries differ:\nGo       %+v\ndeclared %+v", g, d)
		}
	}

	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 38))
	payloads := demoPayloadTable()
	for range 400 {
		for name, gen := range demoGenerators {
			payloads = append(payloads, demoPayload{name, gen(rng)})
		}
	}
	accepted := map[string]int{}
	for _, p := range payloads {
		params := settleflow.CreateParams{Environment: settleflow.Test, Product: p.product, CustomerID: "cus_1", Payload: json.RawMessage(p.payload)}
		gq, gerr := goEngine.Quote(ctx, params)
		dq, derr := declaredEngine.Quote(ctx, params)
		switch {
		case gerr == nil && derr == nil:
			accepted[p.product]++
			if gq.EstimatedCost != dq.EstimatedCost || gq.Quoted != dq.Quoted {
				t.Errorf("%s %s: Go estimates %d (quote %d), declared %d (quote %d)", p.product, clip(p.payload), gq.EstimatedCost, gq.Quoted.Amount, dq.EstimatedCost, dq.Quoted.Amount)
			}
		case gerr != nil && derr != nil:
			var gi, di *settleflow.InvalidError
			if !errors.As(gerr, &gi) || !errors.As(derr, &di) || gi.Param != di.Param {
				t.Errorf("%s %s: refused differently:\nGo       %v\ndeclared %v", p.product, clip(p.payload), gerr, derr)
			}
		default:
			t.Errorf("%s %s: Go says %v, declared says %v", p.product, clip(p.payload), gerr, derr)
		}
	}
	for name := range demoGenerators {
		if accepted[name] < 300 {
			t.Errorf("%s: only %d payloads quoted: the generator tests too little", name, accepted[name])
		}
	}
}

// demoEngines are two engines on one store and chain, not started (Quote
// needs neither): one with the Go demo products, one with the declared.
func demoEngines(t testing.TB) (goEngine, declaredEngine *settleflow.Engine) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "settleflow.db"), sqlite.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	goProducts, err := demoProducts()
	if err != nil {
		t.Fatal(err)
	}
	decl, err := declared.Load("testdata/demo-products.json")
	if err != nil {
		t.Fatal(err)
	}
	declProducts := settleflow.NewProducts()
	never := declared.ExecutorFunc(func(context.Context, string, json.RawMessage) (settleflow.Execution, error) {
		return settleflow.Execution{}, errors.New("not run in this test")
	})
	if err := declared.Register(declProducts, decl, never); err != nil {
		t.Fatal(err)
	}
	notify := settleflow.NotifierFunc(func(context.Context, []settleflow.Event) error { return nil })
	for _, e := range []struct {
		ps  *settleflow.Products
		out **settleflow.Engine
	}{{goProducts, &goEngine}, {declProducts, &declaredEngine}} {
		if *e.out, err = settleflow.New(settleflow.Options{Store: store, Settler: chain, Products: e.ps, Notifier: notify}); err != nil {
			t.Fatal(err)
		}
	}
	return goEngine, declaredEngine
}

type demoPayload struct{ product, payload string }

// demoPayloadTable holds each product's edges: the limits of every count,
// absent optional fields, characters of several bytes, and payloads both
// must refuse.
func demoPayloadTable() []demoPayload {
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	obj := func(kv ...any) string {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	var out []demoPayload
	add := func(product string, payloads ...string) {
		for _, p := range payloads {
			out = append(out, demoPayload{product, p})
		}
	}
	add("ticket-triage",
		`{"ticketId":"T"}`, `{"ticketId":"T","attachments":0}`, `{"ticketId":"T","attachments":1}`, `{"ticketId":"T","attachments":50}`,
		`{"ticketId":"T","attachments":51}`, `{"ticketId":"T","attachments":-1}`, `{"ticketId":"T","attachments":"2"}`,
		`{"ticketId":"","attachments":2}`, obj("ticketId", long("é", 100)), obj("ticketId", long("é", 101)),
		`{"attachments":2}`, `{"ticketId":"T","colour":"red"}`, `{"ticketId":"T","subject":"Refund for invoice 7","attachments":3}`)
	add("document-summary",
		`{"text":"a"}`, obj("text", long("a", 99)), obj("text", long("a", 100)), obj("text", long("a", 101)),
		obj("text", long("é", 50)), obj("text", long("é", 51)), obj("text", long("😀", 25)), obj("text", long("😀", 26)),
		obj("text", long("漢", 200000)), obj("text", long("a", 200000)), obj("text", long("a", 200001)),
		`{"text":""}`, `{"text":"hello","language":"en"}`, `{"text":"hello","language":"EN"}`, `{}`)
	add("image-moderation",
		`{"imageUrls":["https://a.example/x.jpg"]}`, obj("imageUrls", repeatURL(20)), obj("imageUrls", repeatURL(21)),
		`{"imageUrls":[]}`, `{"imageUrls":["ftp://a.example/x"]}`, `{"imageUrls":["https://a.example/x.jpg","not a url"]}`, `{}`)
	add("document-extraction",
		`{"documentId":"D","pages":1}`, `{"documentId":"D","pages":500}`, `{"documentId":"D","pages":501}`, `{"documentId":"D","pages":0}`,
		`{"documentId":"D","pages":12,"quality":"clean"}`, `{"documentId":"D","pages":12,"quality":"scanned"}`,
		`{"documentId":"D","pages":12,"quality":"damaged"}`, `{"documentId":"D","pages":500,"quality":"damaged"}`,
		`{"documentId":"D","pages":12,"quality":"blurry"}`, `{"documentId":"D"}`, `{"documentId":"D","pages":1.5}`)
	add("ticket-resolution",
		`{"ticketId":"T","question":"?"}`, obj("ticketId", "T", "question", long("q", 200)), obj("ticketId", "T", "question", long("q", 201)),
		obj("ticketId", "T", "question", long("é", 200)), obj("ticketId", "T", "question", long("é", 201)),
		obj("ticketId", "T", "question", long("😀", 5000)), obj("ticketId", "T", "question", long("😀", 5001)),
		`{"ticketId":"T","question":""}`, `{"question":"why?"}`)
	add("lead-enrichment",
		`{"email":"jane.doe@acme.example"}`, `{"email":"jane.doe@acme.example","company":"Acme"}`, `{"email":"jane@gmail.com"}`,
		`{"email":"not-an-address"}`, obj("email", "a@b.c", "company", long("x", 201)), `{"company":"Acme"}`)
	return out
}

func repeatURL(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://img%d.example/%d.png", i, i)
	}
	return out
}

// demoGenerators make random payloads of each product, mostly valid, some
// not (a count past its limit), with text of one to four bytes a character.
var demoGenerators = map[string]func(*rand.Rand) string{
	"ticket-triage": func(r *rand.Rand) string {
		m := map[string]any{"ticketId": text(r, 1+r.IntN(100))}
		if r.IntN(4) > 0 {
			m["attachments"] = r.IntN(56) // 51..55 refused by both
		}
		if r.IntN(2) == 0 {
			m["subject"] = text(r, r.IntN(300))
		}
		return marshal(m)
	},
	"document-summary": func(r *rand.Rand) string {
		m := map[string]any{"text": text(r, 1+r.IntN(3000))}
		if r.IntN(2) == 0 {
			m["language"] = "en"
		}
		return marshal(m)
	},
	"image-moderation": func(r *rand.Rand) string {
		return marshal(map[string]any{"imageUrls": repeatURL(1 + r.IntN(21))}) // 21 refused by both
	},
	"document-extraction": func(r *rand.Rand) string {
		m := map[string]any{"documentId": text(r, 1+r.IntN(100)), "pages": 1 + r.IntN(505)} // 501..505 refused by both
		if q := r.IntN(4); q > 0 {
			m["quality"] = []string{"clean", "scanned", "damaged"}[q-1]
		}
		return marshal(m)
	},
	"ticket-resolution": func(r *rand.Rand) string {
		return marshal(map[string]any{"ticketId": text(r, 1+r.IntN(100)), "question": text(r, 1+r.IntN(5000))})
	},
	"lead-enrichment": func(r *rand.Rand) string {
		m := map[string]any{"email": fmt.Sprintf("%s@%s.example", word(r), word(r))}
		if r.IntN(2) == 0 {
			m["company"] = text(r, r.IntN(200))
		}
		return marshal(m)
	},
}

// text is n characters, the first not white space, drawn from one-, two-,
// three- and four-byte characters.
func text(r *rand.Rand, n int) string {
	alphabet := []rune("abcxyz019 .,é漢😀\u00e9\u4e16")
	var b strings.Builder
	for i := range n {
		c := alphabet[r.IntN(len(alphabet))]
		if i == 0 && c == ' ' {
			c = 'a'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func word(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 1+r.IntN(12))
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	return marshal(a) == marshal(b)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// BenchmarkQuote compares a quote of a Go demo product and of its declared
// version, on a small payload and on the largest text document-summary
// takes:
//
//	go test ./examples/server -run '^$' -bench BenchmarkQuote -benchmem
func BenchmarkQuote(b *testing.B) {
	goEngine, declaredEngine := demoEngines(b)
	for _, c := range []struct{ name, product, payload string }{
		{"triage", "ticket-triage", `{"ticketId":"T-42","subject":"Refund for invoice 7","attachments":3}`},
		{"summary-200k", "document-summary", marshal(map[string]any{"text": strings.Repeat("é", 200000)})},
	} {
		for _, e := range []struct {
			kind   string
			engine *settleflow.Engine
		}{{"go", goEngine}, {"declared", declaredEngine}} {
			b.Run(c.name+"/"+e.kind, func(b *testing.B) {
				params := settleflow.CreateParams{Environment: settleflow.Test, Product: c.product, CustomerID: "cus_1", Payload: json.RawMessage(c.payload)}
				for b.Loop() {
					if _, err := e.engine.Quote(context.Background(), params); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
