// Package stage holds the engine's background stages as named types
// (Commit, Execute, Finish, Settle, Dispatch, Funds, Refunds, Retention)
// and the one start/stop contract they share with services run beside
// them, such as the webhook deliverer, in the manner of River's startstop
// services. Every stage is handed one Env (the Store, the clock, the
// logger, the retry policy, the worker id); stages meet on a run's Lines or
// in the Store, never by calling into one another. The contracts they use
// (Store, Settler, Notifier) come from package driver, so this package does
// not import the engine's.
//
// One meaning of the context everywhere: the ctx given to Start bounds
// starting only (a stage's work runs until Stop, whatever becomes of that
// ctx); the ctx given to Stop bounds the graceful part of stopping: when it
// ends, the stage cuts its work short (canceling what is in flight, which
// must then be left for another worker to redo) and returns once its
// goroutines have exited, with ctx's error.
package stage

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Stage is a background service with a start/stop lifecycle.
type Stage interface {
	// Name names the stage in errors and logs.
	Name() string
	// Start begins the stage's work in the background and returns; ctx
	// bounds Start itself only.
	Start(ctx context.Context) error
	// Stop ends the stage's work, gracefully until ctx ends, then cut
	// short; it returns when every goroutine of the stage has exited, with
	// ctx's error if it had to cut work short. Stop without Start, and a
	// second Stop, return nil at once.
	Stop(ctx context.Context) error
}

// Loop is a Stage that runs one function in a goroutine: Stop cancels the
// function's context and waits for it to return. Its work is cut short by
// design (a poll loop, whose work is durable in the Store), so Stop's ctx
// only bounds the wait for the function to notice.
type Loop struct {
	name string
	run  func(ctx context.Context)

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewLoop returns a Loop named name that runs run until Stop.
func NewLoop(name string, run func(ctx context.Context)) *Loop {
	return &Loop{name: name, run: run}
}

// Name implements Stage.
func (l *Loop) Name() string { return l.name }

// Start implements Stage.
func (l *Loop) Start(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return fmt.Errorf("stage %s: already started", l.name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		l.run(ctx)
	}(l.done)
	return nil
}

// Stop implements Stage.
func (l *Loop) Stop(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		<-done // the function was canceled: it returns promptly
		return ctx.Err()
	}
}

// Group starts stages in order and stops them in the reverse order: a stage
// started later may hand work to one started earlier, which is still
// running while the later one drains.
type Group struct {
	stages []Stage

	mu      sync.Mutex
	started int
}

// NewGroup returns a Group of stages, in starting order.
func NewGroup(stages ...Stage) *Group { return &Group{stages: stages} }

// Start starts each stage in turn. If one fails, those already started are
// stopped (in reverse, under ctx) and the error names the stage.
func (g *Group) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started > 0 {
		return errors.New("stage: group already started")
	}
	for i, s := range g.stages {
		if err := s.Start(ctx); err != nil {
			g.started = i
			stopErr := g.stopLocked(ctx)
			return errors.Join(fmt.Errorf("starting %s: %w", s.Name(), err), stopErr)
		}
	}
	g.started = len(g.stages)
	return nil
}

// Stop stops the started stages in reverse order, each under ctx, and
// returns their errors joined (ctx's error, when it cut work short).
func (g *Group) Stop(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopLocked(ctx)
}

func (g *Group) stopLocked(ctx context.Context) error {
	var errs []error
	for i := g.started - 1; i >= 0; i-- {
		if err := g.stages[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", g.stages[i].Name(), err))
		}
	}
	g.started = 0
	return errors.Join(errs...)
}

// Names lists the group's stages in starting order.
func (g *Group) Names() []string {
	out := make([]string, len(g.stages))
	for i, s := range g.stages {
		out[i] = s.Name()
	}
	return out
}
