package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/apikey"
	"github.com/settleflow/settleflow/wire"
)

// The task endpoints (docs/api.md, "Workers and tasks"): workers claim the
// executions of remote products, report their spend and finish them. Only
// worker keys call them (auth's task).

// claimBody is the body of POST /v1/tasks/claim.
type claimBody struct {
	Products    []string    `json:"products"`
	Max         *int        `json:"max"`
	WaitSeconds *int        `json:"waitSeconds"`
	Worker      *workerBody `json:"worker"`
}

// workerBody is what a worker process says of itself in a claim
// (settleflow.WorkerInfo); every field optional.
type workerBody struct {
	Host string `json:"host"`
	Name string `json:"name"`
	SDK  string `json:"sdk"`
}

// heartbeatBody is the body of POST /v1/tasks/{id}/heartbeat.
type heartbeatBody struct {
	CostItems []wire.CostItem `json:"costItems"`
}

// completeBody is the body of POST /v1/tasks/{id}/complete.
type completeBody struct {
	Result    json.RawMessage `json:"result"`
	CostItems []wire.CostItem `json:"costItems"`
}

// failBody is the body of POST /v1/tasks/{id}/fail.
type failBody struct {
	Message string `json:"message"`
	Retry   bool   `json:"retry"`
}

// claimSlack is how long before the request deadline a claim stops
// waiting, so that its (empty) answer is not a 504.
const claimSlack = time.Second

func taskScope(p Principal) settleflow.TaskScope {
	return settleflow.TaskScope{Environment: p.Environment, Products: p.Products, Worker: p.KeyID}
}

func (h *handler) claimTasks(w http.ResponseWriter, r *http.Request) {
	var in claimBody
	if !h.readBody(w, r, &in) {
		return
	}
	p := principalFrom(r.Context())
	for i, name := range in.Products {
		if p.Products != nil && !taskScope(p).AllowsProduct(name) {
			writeError(w, r, &Error{Status: http.StatusForbidden, Type: TypePermission, Code: wire.CodeProductNotAllowed, Param: fmt.Sprintf("products[%d]", i),
				Message: fmt.Sprintf("This worker key may not serve product %q; it serves %v.", name, p.Products)})
			return
		}
	}
	params := settleflow.ClaimTasksParams{TaskScope: taskScope(p), Products: in.Products, Max: 1}
	if in.Max != nil {
		params.Max = *in.Max
	}
	if in.Worker != nil {
		params.WorkerInfo = settleflow.WorkerInfo{Host: in.Worker.Host, Name: in.Worker.Name, SDK: in.Worker.SDK}
	}
	if in.WaitSeconds != nil {
		if *in.WaitSeconds < 0 || *in.WaitSeconds > int(settleflow.MaxTaskWait/time.Second) {
			writeError(w, r, invalid(settleflow.CodeParameterInvalid, "waitSeconds",
				fmt.Sprintf("waitSeconds must be a whole number from 0 to %d", int(settleflow.MaxTaskWait/time.Second))))
			return
		}
		params.Wait = time.Duration(*in.WaitSeconds) * time.Second
		// The answer, empty or not, comes before the request deadline.
		if dl, ok := r.Context().Deadline(); ok {
			params.Wait = max(min(params.Wait, time.Until(dl)-claimSlack), 0)
		}
	}
	// A key revoked (or expired) while the claim waits takes no task: the
	// claim answers 401 as the next request with the key would.
	authorization := r.Header.Get("Authorization")
	params.Recheck = func(ctx context.Context) error {
		_, err := h.opts.Keys.Authenticate(ctx, authorization)
		return err
	}
	tasks, err := h.opts.Engine.ClaimTasks(r.Context(), params)
	var ae *apikey.AuthError
	if errors.As(err, &ae) {
		writeError(w, r, &Error{Status: http.StatusUnauthorized, Type: TypeAuthentication, Code: ae.Code, Message: ae.Message})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if tasks == nil {
		tasks = []settleflow.Task{}
	}
	writeJSON(w, http.StatusOK, list[settleflow.Task]{Object: "list", URL: "/v1/tasks/claim", Data: tasks})
}

func (h *handler) heartbeatTask(w http.ResponseWriter, r *http.Request, id string) {
	var in heartbeatBody
	if !h.readBody(w, r, &in) {
		return
	}
	t, err := h.opts.Engine.HeartbeatTask(r.Context(), taskScope(principalFrom(r.Context())), id, in.CostItems)
	h.answerTask(w, r, t, err)
}

func (h *handler) completeTask(w http.ResponseWriter, r *http.Request, id string) {
	var in completeBody
	if !h.readBody(w, r, &in) {
		return
	}
	t, err := h.opts.Engine.CompleteTask(r.Context(), taskScope(principalFrom(r.Context())), id, in.Result, in.CostItems)
	h.answerTask(w, r, t, err)
}

func (h *handler) failTask(w http.ResponseWriter, r *http.Request, id string) {
	var in failBody
	if !h.readBody(w, r, &in) {
		return
	}
	t, err := h.opts.Engine.FailTask(r.Context(), taskScope(principalFrom(r.Context())), id, in.Message, in.Retry)
	h.answerTask(w, r, t, err)
}

// answerTask answers a task, or the error of a call about one.
func (h *handler) answerTask(w http.ResponseWriter, r *http.Request, t settleflow.Task, err error) {
	var te *settleflow.TaskError
	switch {
	case errors.Is(err, settleflow.ErrTaskNotFound):
		writeError(w, r, &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: wire.CodeResourceMissing,
			Message: "No such task for this key (it may belong to another environment, or the server restarted since it was claimed: stop working on it)."})
	case errors.As(err, &te):
		writeError(w, r, &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: te.Code, Message: te.Message})
	case err != nil:
		h.fail(w, r, err)
	default:
		writeJSON(w, http.StatusOK, t)
	}
}
