package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// testFairQueue: Pending workflows are claimed by customer in turn, each
// customer's in the order they were created. A customer with a long queue
// does not hold back another's workflow created after it: that one is
// claimed as soon as the customers ahead of it have had one turn each.
func testFairQueue(t *testing.T, s settleflow.Store) {
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) }
	var burst []*settleflow.Workflow
	for i := range 40 {
		burst = append(burst, newWorkflow(settleflow.Test, at(i), "cus_burst", "triage"))
	}
	insert(t, s, burst[:25]...) // one batch
	for _, w := range burst[25:30] {
		insert(t, s, w) // one at a time
	}
	b := newWorkflow(settleflow.Test, at(100), "cus_b", "triage")
	c := newWorkflow(settleflow.Live, at(101), "cus_c", "triage")
	insert(t, s, b, c)
	insert(t, s, burst[30:]...) // the burst's customer again, after b and c
	now := at(1000)
	order := map[string]int{}
	var claimed []*settleflow.Workflow
	take := func(n int) {
		t.Helper()
		for _, w := range claim(t, s, "w", now, time.Minute, n) {
			order[w.ID] = len(claimed)
			claimed = append(claimed, w)
		}
	}
	take(4)
	// The line: burst[0] (the head), then one turn each: burst[1], b, c.
	for _, w := range []*settleflow.Workflow{b, c} {
		if i, ok := order[w.ID]; !ok {
			t.Fatalf("%s (%s) was not among the first 4 claimed, behind a queue of %d", w.ID, w.CustomerID, len(burst))
		} else if i < 1 {
			t.Fatalf("%s claimed before the head of the line", w.CustomerID)
		}
	}
	// A customer arriving now, with the burst half served, is next but one.
	take(14)
	d := newWorkflow(settleflow.Test, at(200), "cus_d", "triage")
	insert(t, s, d)
	take(3)
	if _, ok := order[d.ID]; !ok {
		t.Fatalf("a customer arriving behind %d queued workflows was not claimed within 3 (claimed %d)", len(burst)-16, len(claimed))
	}
	take(100)
	if len(claimed) != len(burst)+3 {
		t.Fatalf("claimed %d of %d", len(claimed), len(burst)+3)
	}
	// The burst's customer in its own order.
	for i := 1; i < len(burst); i++ {
		if order[burst[i].ID] < order[burst[i-1].ID] {
			t.Fatalf("the burst's workflow %d was claimed before its workflow %d: %s", i, i-1, fmt.Sprint(order[burst[i].ID], order[burst[i-1].ID]))
		}
	}
}
