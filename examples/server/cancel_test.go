package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestCancelRacesExecutionOverHTTPS creates a backlog of workflows, then
// cancels each over HTTPS while the server's engine claims them: a cancel
// either wins (200 Canceled: the workflow is never executed) or loses with
// a 409 naming the status the workflow had reached (it was claimed, so it
// runs). Never both, and both happen.
func TestCancelRacesExecutionOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	// One worker: the backlog drains one workflow at a time (50 ms each), so
	// the cancels race the claims rather than arrive after them all.
	s := startServerWith(t, dir, "-workers", "1")
	// A key whose limits the 600 requests below do not reach.
	key := strings.Fields(cli(t, dir, "keys", "create", "--env", "test", "--name", "race", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000"))[1]
	const n = 200
	// parallel runs f(i) for every i, 32 at a time: the server takes at most
	// 64 connections from one address.
	parallel := func(f func(i int)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 32)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				f(i)
			}()
		}
		wg.Wait()
	}
	ids := make([]string, n)
	parallel(func(i int) {
		status, _, wf := s.do("POST", "/v1/workflows", key, fmt.Sprintf(`{"product":"ticket-triage","customerId":"cus_race","payload":{"ticketId":"T-%d"}}`, i))
		if status != 201 {
			t.Errorf("create: %d %v", status, wf)
			return
		}
		ids[i] = wf["id"].(string)
	})
	if t.Failed() {
		t.FailNow()
	}
	codes := make([]string, n)
	parallel(func(i int) {
		status, _, body := s.do("POST", "/v1/workflows/"+ids[i]+"/cancel", key, "")
		switch e, _ := body["error"].(map[string]any); {
		case status == 200 && body["status"] == "Canceled":
			codes[i] = "canceled"
		case status == 409 && e != nil:
			codes[i], _ = e["code"].(string)
		default:
			t.Errorf("cancel %s: %d %v", ids[i], status, body)
		}
	})
	won, lost := 0, 0
	for i, id := range ids {
		_, _, wf := s.do("GET", "/v1/workflows/"+id, key, "")
		switch st := wf["status"]; {
		case codes[i] == "canceled" && st == "Canceled" && wf["result"] == nil && wf["settlement"] == nil:
			won++
		case (codes[i] == "workflow_running" || codes[i] == "workflow_settling" || codes[i] == "workflow_settled") && st != "Canceled" && st != "Pending":
			lost++
		default:
			t.Errorf("%s: cancel answered %q, workflow now %v", id, codes[i], wf)
		}
	}
	t.Logf("%d cancels won, %d lost to execution", won, lost)
	if won == 0 || lost == 0 || won+lost != n {
		t.Fatalf("%d won, %d lost of %d: both outcomes must occur, and nothing else", won, lost, n)
	}
}
