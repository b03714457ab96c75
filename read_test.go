package settleflow_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/settleflow/settleflow"
)

// All walks every page: each workflow once, newest first, only those
// matching the filters; breaking out stops fetching; a bad parameter is
// yielded as an error.
func TestEngineAll(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	var created []string
	for i := range 23 {
		created = append(created, f.create(t, settleflow.Test, fmt.Sprint("T-", i), 0).ID)
	}
	f.create(t, settleflow.Live, "T-live", 0) // another environment: never listed

	var got []string
	for w, err := range f.engine.All(ctx, settleflow.ListParams{Environment: settleflow.Test, Limit: 5}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, w.ID)
	}
	if len(got) != len(created) {
		t.Fatalf("All yielded %d workflows, want %d", len(got), len(created))
	}
	for i, id := range got {
		if want := created[len(created)-1-i]; id != want {
			t.Fatalf("position %d: %s, want %s (newest first, no gap, no duplicate)", i, id, want)
		}
	}

	n := 0
	for range f.engine.All(ctx, settleflow.ListParams{Environment: settleflow.Test, Limit: 5}) {
		n++
		if n == 7 {
			break
		}
	}
	if n != 7 {
		t.Fatalf("break after 7: got %d", n)
	}

	for w, err := range f.engine.All(ctx, settleflow.ListParams{Environment: settleflow.Test, Limit: 500}) {
		var inv *settleflow.InvalidError
		if w != nil || !errors.As(err, &inv) || inv.Param != "limit" {
			t.Fatalf("limit 500: yielded %v, %v; want one *InvalidError naming limit", w, err)
		}
	}
}
