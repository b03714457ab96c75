package settleflow_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/settleflow/settleflow"
)

// orderLog records, in order, what the services and the notifier of an
// engine saw.
type orderLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *orderLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *orderLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// loggedService is a Service that logs its Start and Stop, and fails its
// Start with startErr.
type loggedService struct {
	name     string
	log      *orderLog
	startErr error
}

func (s *loggedService) Name() string { return s.name }

func (s *loggedService) Start(context.Context) error {
	s.log.add("start " + s.name)
	return s.startErr
}

func (s *loggedService) Stop(context.Context) error {
	s.log.add("stop " + s.name)
	return nil
}

// loggingNotifier logs each Notify call, then records the events.
type loggingNotifier struct {
	settleflow.Notifier
	log *orderLog
}

func (n loggingNotifier) Notify(ctx context.Context, evs []settleflow.Event) error {
	n.log.add("notify")
	return n.Notifier.Notify(ctx, evs)
}

// Options.Services start before the engine's stages, in order, and stop
// after them, in reverse: no event reaches the Notifier before the first
// service started or after the last one stopped.
func TestServicesRunAroundTheStages(t *testing.T) {
	log := &orderLog{}
	a, b := &loggedService{name: "a", log: log}, &loggedService{name: "b", log: log}
	f := newFixture(t, func(o *settleflow.Options) {
		o.Services = []settleflow.Service{a, b}
		o.Notifier = loggingNotifier{Notifier: o.Notifier, log: log}
	})
	ctx := context.Background()
	if err := f.engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w := f.create(t, settleflow.Test, "T-svc", 0)
	f.waitTerminal(t, settleflow.Test, w.ID)
	waitUntil(t, "the workflow's event notified", func() bool { return len(f.notifier.byWorkflow()[w.ID]) > 0 })
	if err := f.engine.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got := log.all()
	if len(got) < 5 || got[0] != "start a" || got[1] != "start b" || got[len(got)-2] != "stop b" || got[len(got)-1] != "stop a" {
		t.Fatalf("order %q; want start a, start b, the notifications, stop b, stop a", got)
	}
	for _, l := range got[2 : len(got)-2] {
		if l != "notify" {
			t.Fatalf("order %q: %q between the services' start and stop", got, l)
		}
	}
}

// A service whose Start fails fails the engine's Start, naming it; the
// services started before it are stopped, and the engine claims nothing.
// Start can be called again.
func TestServiceStartFailureFailsStart(t *testing.T) {
	log := &orderLog{}
	a := &loggedService{name: "a", log: log}
	bad := &loggedService{name: "bad", log: log, startErr: errors.New("port taken")}
	f := newFixture(t, func(o *settleflow.Options) { o.Services = []settleflow.Service{a, bad} })
	w := f.create(t, settleflow.Test, "T-bad", 0)
	err := f.engine.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bad") || !strings.Contains(err.Error(), "port taken") {
		t.Fatalf("Start: %v; want an error naming the service bad and its cause", err)
	}
	if got := log.all(); len(got) != 3 || got[2] != "stop a" {
		t.Fatalf("order %q; want start a, start bad, stop a", got)
	}
	if got, err := f.engine.Fetch(context.Background(), settleflow.Test, w.ID); err != nil || got.Status != settleflow.Pending {
		t.Fatalf("%v %v; want the workflow still Pending: the engine did not start", got, err)
	}
	// Once the service can start, Start may be called again, and runs.
	bad.startErr = nil
	if err := f.engine.Start(context.Background()); err != nil {
		t.Fatalf("Start again once the service starts: %v", err)
	}
	if got := f.waitTerminal(t, settleflow.Test, w.ID)[w.ID]; got.Status != settleflow.Settled {
		t.Fatalf("%s after the second Start, want Settled", got.Status)
	}
}

// A nil service is refused by New.
func TestNilServiceRefused(t *testing.T) {
	f := newFixture(t, nil)
	_, err := settleflow.New(settleflow.Options{Store: f.store, Settler: f.settler, Notifier: f.notifier,
		Products: settleflow.NewProducts(), Services: []settleflow.Service{nil}})
	if err == nil || !strings.Contains(err.Error(), "Services[0]") {
		t.Fatalf("New with a nil service: %v; want an error naming Services[0]", err)
	}
}
