package stage_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settleflow/settleflow/internal/stage"
)

// recorder is a Stage that logs its starts and stops.
type recorder struct {
	name     string
	log      *[]string
	mu       *sync.Mutex
	startErr error
}

func (r recorder) Name() string { return r.name }
func (r recorder) Start(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, "start "+r.name)
	return r.startErr
}
func (r recorder) Stop(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, "stop "+r.name)
	return nil
}

func TestGroupStartsInOrderAndStopsInReverse(t *testing.T) {
	var log []string
	var mu sync.Mutex
	g := stage.NewGroup(recorder{"a", &log, &mu, nil}, recorder{"b", &log, &mu, nil}, recorder{"c", &log, &mu, nil})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err == nil {
		t.Fatal("a second Start succeeded")
	}
	if err := g.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}
	if !slices.Equal(log, want) {
		t.Fatalf("log %v, want %v", log, want)
	}
}

func TestGroupStopsWhatStartedWhenOneFails(t *testing.T) {
	var log []string
	var mu sync.Mutex
	boom := errors.New("boom")
	g := stage.NewGroup(recorder{"a", &log, &mu, nil}, recorder{"b", &log, &mu, nil}, recorder{"c", &log, &mu, boom}, recorder{"d", &log, &mu, nil})
	err := g.Start(context.Background())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "starting c") {
		t.Fatalf("Start: %v, want boom naming c", err)
	}
	want := []string{"start a", "start b", "start c", "stop b", "stop a"}
	if !slices.Equal(log, want) {
		t.Fatalf("log %v, want %v", log, want)
	}
}

func TestLoopRunsUntilStopWhateverStartsCtx(t *testing.T) {
	ticks := make(chan struct{}, 100)
	l := stage.NewLoop("ticker", func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
				select {
				case ticks <- struct{}{}:
				default:
				}
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel() // bounds Start only
	<-ticks
	<-ticks
	if err := l.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for len(ticks) > 0 {
		<-ticks
	}
	time.Sleep(10 * time.Millisecond)
	if len(ticks) != 0 {
		t.Fatal("the loop ran after Stop returned")
	}
	if err := l.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestLoopStopReportsACutShortWait(t *testing.T) {
	release := make(chan struct{})
	l := stage.NewLoop("slow", func(ctx context.Context) {
		<-ctx.Done()
		<-release // takes its time to notice
	})
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	go func() { time.Sleep(50 * time.Millisecond); close(release) }()
	if err := l.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop: %v, want the deadline", err)
	}
}
