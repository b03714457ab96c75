package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// GET /v1/margins: the report of the key's environment's Settled workflows
// by product, customer and day (a refund counted, a workflow still Running
// not), a product filter, an empty range, the refusals, the live
// environment apart; every answer is validated against the OpenAPI
// document.
func TestMargins(t *testing.T) {
	e, fs := newFundsEnv(t, envOptions{live: true})
	key := e.keys.create(t, settleflow.Test, "pro")
	e.deposit(fs, "cus_a", 10*quote1)
	e.deposit(fs, "cus_b", 10*quote1)
	before := time.Now().UTC().Add(-time.Second)
	a := e.create(key, `{"product":"ticket-triage","customerId":"cus_a","payload":{"ticketId":"T-1"}}`).json(t)["id"].(string)
	b := e.create(key, `{"product":"ticket-triage","customerId":"cus_b","payload":{"ticketId":"T-2"}}`).json(t)["id"].(string)
	held := e.create(key, `{"product":"ticket-triage","customerId":"cus_b","payload":{"ticketId":"T-hold"}}`).json(t)["id"].(string)
	e.waitWorkflow(key, a, settleflow.Settled)
	day := e.waitWorkflow(key, b, settleflow.Settled)["createdAt"].(string)[:10]
	e.waitWorkflow(key, held, settleflow.Running)
	rf := e.do("POST", "/v1/workflows/"+a+"/refunds", key, `{"amount":100}`)
	if rf.status != http.StatusCreated {
		t.Fatalf("refund: %d %s", rf.status, rf.body)
	}
	e.waitRefund(key, rf.json(t)["id"].(string), settleflow.RefundSucceeded)

	type money struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	}
	type row struct {
		Key                     string
		Workflows               int64
		Charged, Refunded, Cost money
		Margin                  *json.Number
	}
	type report struct {
		Object                      string
		Livemode                    bool
		GroupBy                     string
		CreatedAfter, CreatedBefore *string
		Product, Currency           string
		Data                        []row
		Total                       row
	}
	get := func(key, q string) report {
		t.Helper()
		r := e.do("GET", "/v1/margins?"+q, key, "")
		if r.status != http.StatusOK {
			t.Fatalf("margins %s: %d %s", q, r.status, r.body)
		}
		if got, want := keysOf(r.json(t)), []string{"createdAfter", "createdBefore", "currency", "data", "groupBy", "livemode", "object", "product", "total"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("report names %v, want %v", got, want)
		}
		var rep report
		d := json.NewDecoder(bytes.NewReader(r.body))
		d.UseNumber()
		if err := d.Decode(&rep); err != nil {
			t.Fatal(err)
		}
		if rep.Object != "margin_report" || rep.Currency != "usd" {
			t.Fatalf("margins %s: %s", q, r.body)
		}
		return rep
	}
	usd := func(n int64) money { return money{n, "usd"} }
	ratio := func(s string) *json.Number { n := json.Number(s); return &n }
	// One workflow of each customer: charged 286, cost 150; cus_a's refunded
	// 100 of it: (186 − 150) / 186 = 0.19354… → 0.1935; cus_b's
	// (286 − 150) / 286 = 0.47552… → 0.4755; in total (472 − 300) / 472 =
	// 0.36440… → 0.3644.
	rowA := row{"cus_a", 1, usd(quote1), usd(100), usd(150), ratio("0.1935")}
	rowB := row{"cus_b", 1, usd(quote1), usd(0), usd(150), ratio("0.4755")}
	total := row{"", 2, usd(2 * quote1), usd(100), usd(300), ratio("0.3644")}

	rep := get(key, "groupBy=customer")
	if rep.Livemode || rep.GroupBy != "customer" || rep.CreatedAfter != nil || rep.CreatedBefore != nil || rep.Product != "" ||
		!reflect.DeepEqual(rep.Data, []row{rowA, rowB}) || !reflect.DeepEqual(rep.Total, total) {
		t.Fatalf("by customer: %+v", rep)
	}
	byProduct := total
	byProduct.Key = "ticket-triage"
	if rep := get(key, "groupBy=product"); !reflect.DeepEqual(rep.Data, []row{byProduct}) || !reflect.DeepEqual(rep.Total, total) {
		t.Fatalf("by product: %+v", rep)
	}
	after := before.Format(time.RFC3339Nano)
	until := time.Now().UTC().Add(time.Minute).Format(time.RFC3339)
	byDay := total
	byDay.Key = day
	rep = get(key, "groupBy=day&product=ticket-triage&createdAfter="+url.QueryEscape(after)+"&createdBefore="+url.QueryEscape(until))
	if !reflect.DeepEqual(rep.Data, []row{byDay}) || rep.Product != "ticket-triage" || rep.CreatedAfter == nil || rep.CreatedBefore == nil {
		t.Fatalf("by day: %+v", rep)
	}
	if got, _ := time.Parse(time.RFC3339Nano, *rep.CreatedAfter); !got.Equal(before) {
		t.Fatalf("createdAfter %s, want %s", *rep.CreatedAfter, after)
	}
	// A range with nothing in it: no groups, a total of zeros and no margin.
	rep = get(key, "groupBy=day&createdAfter="+url.QueryEscape(until))
	if len(rep.Data) != 0 || rep.Data == nil || !reflect.DeepEqual(rep.Total, row{"", 0, usd(0), usd(0), usd(0), nil}) {
		t.Fatalf("an empty range: %+v", rep)
	}
	// HEAD works as GET does.
	if r := e.do("HEAD", "/v1/margins?groupBy=day", key, ""); r.status != http.StatusOK {
		t.Fatalf("HEAD: %d", r.status)
	}

	for _, c := range []struct{ q, code, param string }{
		{"", "parameter_missing", "groupBy"},
		{"groupBy=week", "parameter_invalid", "groupBy"},
		{"groupBy=Product", "parameter_invalid", "groupBy"},
		{"groupBy=", "parameter_invalid", "groupBy"},
		{"groupBy=day&groupBy=product", "parameter_invalid", "groupBy"},
		{"groupBy=day&product=no-such-product", "parameter_invalid", "product"},
		{"groupBy=day&createdAfter=yesterday", "parameter_invalid", "createdAfter"},
		{"groupBy=day&createdBefore=2026-11-01", "parameter_invalid", "createdBefore"},
		{"groupBy=day&createdAfter=" + url.QueryEscape(until) + "&createdBefore=" + url.QueryEscape(after), "parameter_invalid", "createdBefore"},
		{"groupBy=day&group_by=day", "parameter_unknown", "group_by"},
		{"groupBy=day&limit=10", "parameter_unknown", "limit"},
	} {
		r := e.do("GET", "/v1/margins?"+c.q, key, "")
		if eo := r.errorObject(t); r.status != http.StatusBadRequest || eo["code"] != c.code || eo["param"] != c.param || eo["message"] == "" {
			t.Errorf("margins?%s: %d %s; want 400 %s naming %s", c.q, r.status, r.body, c.code, c.param)
		}
	}
	if r := e.do("POST", "/v1/margins?groupBy=day", key, ""); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET" {
		t.Fatalf("POST: %d %v", r.status, r.header)
	}
	if r := e.do("GET", "/v1/margins?groupBy=day", "", ""); r.status != http.StatusUnauthorized {
		t.Fatalf("no key: %d", r.status)
	}

	// A live key reports the live environment: none of the test workflows.
	live := e.keys.create(t, settleflow.Live, "starter")
	if rep := get(live, "groupBy=product"); !rep.Livemode || len(rep.Data) != 0 || rep.Total.Workflows != 0 {
		t.Fatalf("live: %+v", rep)
	}
}
