package settleflow_test

import (
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

func TestRetryPolicy(t *testing.T) {
	exp := settleflow.RetryPolicy{Base: time.Second, Max: 10 * time.Second, MaxAttempts: 4}
	if d := exp.Backoff(0); d != 0 {
		t.Fatalf("exponential: before the first attempt %v, want 0", d)
	}
	for attempt, full := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 9: 10 * time.Second} {
		for range 200 {
			if d := exp.Backoff(attempt); d < full/2 || d > full {
				t.Fatalf("exponential: after attempt %d waited %v, want within [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
	if exp.Attempts() != 4 {
		t.Fatalf("Attempts %d, want MaxAttempts 4", exp.Attempts())
	}

	sch := settleflow.RetryPolicy{Schedule: []time.Duration{0, 5 * time.Second, time.Minute}, Jitter: 0.1}
	for attempt, want := range map[int]time.Duration{0: 0, 1: 5 * time.Second, 2: time.Minute, 7: time.Minute} {
		for range 200 {
			if d := sch.Backoff(attempt); d < want || d > want+want/10 {
				t.Fatalf("schedule: after attempt %d waited %v, want within [%v, %v]", attempt, d, want, want+want/10)
			}
		}
	}
	if sch.Attempts() != 3 {
		t.Fatalf("Attempts %d, want len(Schedule) 3", sch.Attempts())
	}
	if (settleflow.RetryPolicy{Schedule: []time.Duration{time.Second}}).Backoff(1) != time.Second {
		t.Fatal("a schedule without jitter is exact")
	}
}
