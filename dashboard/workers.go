package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/settleflow/settleflow"
)

// Workers: the worker processes that claimed remote products' tasks
// through any instance on the database (kept in it), and on a workflow's
// page the worker that ran each attempt and the instance it claimed
// through (recorded in the database).

// workerView is one worker process of the Workers page.
type workerView struct {
	settleflow.WorkerSeen
	// KeyName is the worker key's name ("" if the key is gone).
	KeyName string
	// InFlight lists the tasks it holds now, by product, sorted.
	InFlight []productCount
	// Idle is how long since its last claim, rounded for people.
	Idle string
	// Quiet: no claim for a minute or more (a worker long-polls about
	// every 20 s, so a quiet one has probably stopped).
	Quiet bool
}

type productCount struct {
	Product string
	Tasks   int
}

type workersData struct {
	Workers []workerView
	// Remote names the engine's remote products: with none, no worker
	// ever claims.
	Remote []string
	// Held counts the tasks workers hold now.
	Held int
}

// keyNames maps the ids of env's keys to their names.
func (h *Handler) keyNames(r *http.Request, env settleflow.Environment) (map[string]string, error) {
	ks, err := h.keysOf(r, env)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(ks))
	for _, k := range ks {
		names[k.ID] = k.Name
	}
	return names, nil
}

func (h *Handler) workersPage(w http.ResponseWriter, r *http.Request, s *session) {
	names, err := h.keyNames(r, s.env)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.now()
	d := workersData{Remote: h.opts.Engine.RemoteProducts()}
	seen, err := h.opts.Engine.Workers(r.Context(), s.env)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, ws := range seen {
		v := workerView{WorkerSeen: ws, KeyName: names[ws.KeyID], Idle: ago(now.Sub(ws.LastClaim)), Quiet: now.Sub(ws.LastClaim) >= time.Minute}
		for p, n := range ws.InFlight {
			v.InFlight = append(v.InFlight, productCount{p, n})
			d.Held += n
		}
		slices.SortFunc(v.InFlight, func(a, b productCount) int { return strings.Compare(a.Product, b.Product) })
		d.Workers = append(d.Workers, v)
	}
	h.render(w, r, http.StatusOK, "workers", page{Title: "Workers", Nav: "workers", Data: d})
}

// ago says a duration as people read it: "just now", "42 s ago", "3 min
// ago", "2 h 5 min ago".
func ago(d time.Duration) string {
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	default:
		return fmt.Sprintf("%d h %d min ago", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}

// attemptView is one attempt of a workflow, as its page shows it.
type attemptView struct {
	settleflow.Attempt
	KeyName string
	// Took is how long the worker held it ("" while it runs).
	Took string
}

// attemptsOf returns the attempts of wf, with their keys' names.
func (h *Handler) attemptsOf(ctx context.Context, r *http.Request, env settleflow.Environment, wf *settleflow.Workflow) ([]attemptView, error) {
	as, err := h.opts.Engine.Attempts(ctx, env, wf.ID)
	if err != nil || len(as) == 0 {
		return nil, err
	}
	names, err := h.keyNames(r, env)
	if err != nil {
		return nil, err
	}
	out := make([]attemptView, len(as))
	for i, a := range as {
		out[i] = attemptView{Attempt: a, KeyName: names[a.WorkerKeyID]}
		if !a.EndedAt.IsZero() {
			out[i].Took = a.EndedAt.Sub(a.ClaimedAt).Round(time.Millisecond).String()
		}
	}
	return out, nil
}
