package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// Deliveries to one endpoint reuse their connections (keep-alive), and go
// over HTTP/2 when the receiver offers it.
func TestConnectionsReused(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := "http1.1"
		if h2 {
			name = "h2"
		}
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			conns, protos := 0, map[int]int{}
			recv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				mu.Lock()
				protos[r.ProtoMajor]++
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			}))
			recv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					mu.Lock()
					conns++
					mu.Unlock()
				}
			}
			cfg := fastConfig(t)
			if h2 {
				recv.EnableHTTP2 = true
				recv.StartTLS()
				pool := x509.NewCertPool()
				pool.AddCert(recv.Certificate())
				cfg.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true,
					MaxIdleConnsPerHost: DefaultMaxPerEndpoint}
			} else {
				recv.Start()
			}
			defer recv.Close()
			s := newService(t, openDB(t), cfg)
			createEndpoint(t, s, settleflow.Test, recv.URL)
			const n = 300
			evs := make([]settleflow.Event, n)
			for i := range evs {
				evs[i] = testEvent(false)
			}
			if err := s.Notify(context.Background(), evs); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 30*time.Second, "every delivery", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return protos[1]+protos[2] >= n
			})
			mu.Lock()
			defer mu.Unlock()
			limit, _ := s.EndpointConcurrency(mustEndpointID(t, s))
			t.Logf("%d requests over %d connections (%v); limit now %d", n, conns, protos, limit)
			// Reused: a few requests per connection at least (a request
			// may dial while another's connection is on its way back to
			// the pool, so the count is not bounded by the limit exactly);
			// over HTTP/2, a handful of connections carry everything.
			if conns*4 > n || (h2 && conns > 8) {
				t.Errorf("%d connections for %d deliveries; want them reused", conns, n)
			}
			if h2 && protos[2] != n {
				t.Errorf("requests by HTTP major version %v; want all %d over HTTP/2", protos, n)
			}
		})
	}
}

func mustEndpointID(t *testing.T, s *Service) string {
	t.Helper()
	eps, err := s.ListEndpoints(context.Background(), settleflow.Test)
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints: %v %v", eps, err)
	}
	return eps[0].ID
}
