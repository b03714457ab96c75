package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage/sqlite"
)

// benchReceiver answers 200 and counts requests.
func benchReceiver(b *testing.B) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv, &n
}

// BenchmarkDelivery measures delivered events per second, end to end: Notify
// records each event durably (SQLite, synchronous FULL, the default), the
// deliverer claims it under a lease, signs it, POSTs it to a loopback
// receiver and records the attempt. One endpoint, default concurrency
// (adaptive: from 4 in flight, up to 32 while the receiver answers fast). sync=NORMAL shows the cost without an fsync per
// commit (a commit then survives kill -9 but not power loss).
func BenchmarkDelivery(b *testing.B) {
	for _, sync := range []sqlite.Synchronous{sqlite.SyncFull, sqlite.SyncNormal} {
		b.Run("sync="+string(sync), func(b *testing.B) { benchDelivery(b, sync) })
	}
}

func benchDelivery(b *testing.B, sync sqlite.Synchronous) {
	db, err := sqlite.OpenDB(filepath.Join(b.TempDir(), "bench.db"), sqlite.OpenOptions{Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s, err := New(ctx, db, Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	srv, got := benchReceiver(b)
	if _, _, err := s.CreateEndpoint(ctx, EndpointParams{Environment: settleflow.Test, URL: srv.URL}); err != nil {
		b.Fatal(err)
	}
	events := make([]settleflow.Event, b.N)
	for i := range events {
		events[i] = testEvent(false)
	}
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Stop(ctx)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < len(events); i += 100 {
		if err := s.Notify(ctx, events[i:min(i+100, len(events))]); err != nil {
			b.Fatal(err)
		}
	}
	for got.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	// Wait for the last attempts to be recorded, as the engine would.
	for {
		n, err := db.Bun().NewSelect().Model((*deliveryRow)(nil)).Where("status = ?", "succeeded").Count(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == int64(b.N) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkBaselinePlainPOST is the baseline of BenchmarkDelivery: the same
// body POSTed unsigned, with nothing recorded, by as many goroutines as the
// deliverer has in flight per endpoint, to the same kind of receiver.
func BenchmarkBaselinePlainPOST(b *testing.B) {
	srv, _ := benchReceiver(b)
	body, _ := json.Marshal(testEvent(false))
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = DefaultMaxPerEndpoint
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range DefaultMaxPerEndpoint {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkSign measures the signing cost per event: both signature headers
// (service-signature and webhook-signature) over a typical event with one
// secret.
func BenchmarkSign(b *testing.B) {
	secret, _ := NewSecret()
	key, _ := secretKey(secret)
	keys := [][]byte{key}
	ev := testEvent(false)
	body, _ := json.Marshal(ev)
	h := http.Header{}
	t := time.Now().Unix()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		setDeliveryHeaders(h, DefaultSignatureHeader, ev.ID, t, body, keys)
	}
}

// BenchmarkBaselineMarshal is the baseline of BenchmarkSign: marshalling the
// same event to JSON once, which every delivery needs anyway.
func BenchmarkBaselineMarshal(b *testing.B) {
	ev := testEvent(false)
	body, _ := json.Marshal(ev)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNotify measures the insert path alone: Notify recording batches of
// 100 events, of 16 customers, for two endpoints (SQLite, sync=NORMAL, so
// that the statements' cost shows rather than the fsync's), with the
// deliverer stopped so the queue grows to b.N events.
func BenchmarkNotify(b *testing.B) {
	db, err := sqlite.OpenDB(filepath.Join(b.TempDir(), "bench.db"), sqlite.OpenOptions{Synchronous: sqlite.SyncNormal})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s, err := New(ctx, db, Config{})
	if err != nil {
		b.Fatal(err)
	}
	for range 2 {
		if _, _, err := s.CreateEndpoint(ctx, EndpointParams{Environment: settleflow.Test, URL: "http://127.0.0.1:9/hook"}); err != nil {
			b.Fatal(err)
		}
	}
	events := make([]settleflow.Event, b.N)
	for i := range events {
		events[i] = testEvent(false)
		events[i].Type = settleflow.EventCustomerFunded
		events[i].Data = settleflow.EventData{CustomerID: "cus_" + strconv.Itoa(i%16)}
	}
	b.ResetTimer()
	for i := 0; i < len(events); i += 100 {
		if err := s.Notify(ctx, events[i:min(i+100, len(events))]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
