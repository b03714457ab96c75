package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/settleflow/settleflow/client"
)

// A worker says who it is in every claim: its host and "pid-N" by default,
// or the name it is given, with the library's version. (The server side,
// with the dashboard that shows it, is dashboard's TestWorkersInChromium.)
func TestWorkerIdentityOnClaim(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		opts       client.WorkerOptions
		host, name string
	}{
		{client.WorkerOptions{}, host, "pid-" + strconv.Itoa(os.Getpid())},
		{client.WorkerOptions{Name: "triage-1", Host: "box-7"}, "box-7", "triage-1"},
	} {
		claims := make(chan map[string]json.RawMessage, 16)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var body map[string]json.RawMessage
			if err := json.Unmarshal(b, &body); err != nil {
				t.Errorf("claim body %s: %v", b, err)
			}
			select {
			case claims <- body:
			default:
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"list","url":"/v1/tasks/claim","data":[],"hasMore":false}`))
		}))
		c := client.New("rk_test_x", client.WithBaseURL(srv.URL))
		tc.opts.Wait = time.Second
		wk := c.NewWorker(tc.opts)
		wk.Handle("ticket-triage", func(context.Context, *client.Task) (client.TaskResult, error) { return client.TaskResult{}, nil })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- wk.Run(ctx) }()
		var body map[string]json.RawMessage
		select {
		case body = <-claims:
		case <-time.After(10 * time.Second):
			t.Fatal("no claim came")
		}
		cancel()
		<-done
		srv.Close()
		var id client.WorkerIdentity
		if err := json.Unmarshal(body["worker"], &id); err != nil {
			t.Fatalf("claim's worker %s: %v", body["worker"], err)
		}
		if id.Host != tc.host || id.Name != tc.name || id.SDK != "settleflow-go/"+client.Version {
			t.Fatalf("claim says %+v; want host %q, name %q, sdk settleflow-go/%s", id, tc.host, tc.name, client.Version)
		}
	}
}
