package driver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/settleflow/settleflow/wire"
)

var (
	// ErrNotFound: no such workflow (or event) in that environment.
	ErrNotFound = errors.New("settleflow: not found")
	// ErrWorkflowState: the workflow's status does not allow the operation
	// (a cancel of a workflow that is no longer Pending). Every *StateError
	// matches it with errors.Is.
	ErrWorkflowState = errors.New("settleflow: the workflow's status does not allow this")
)

// PermanentError marks an error that retrying cannot fix. A product or Settler
// returns one (via [Permanent]) to end a workflow in Failed at once.
type PermanentError struct {
	Err error
}

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so the engine does not retry it. Wrapping a *Failure
// sets the workflow's failure code and message; any other error is reported
// under a generic code.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err, or any error it wraps, is permanent.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// StateError is returned when a workflow's current status does not allow
// the operation asked for, for example Engine.Cancel of a workflow that is
// already Running. It is a conflict with the workflow's state, not a bad
// request: over HTTP it is a 409 whose code is Code(). Status is the status
// the workflow had when the operation was refused.
type StateError struct {
	// Op is the operation refused, e.g. "cancel".
	Op         string
	WorkflowID string
	Status     wire.Status
}

func (e *StateError) Error() string {
	return fmt.Sprintf("settleflow: cannot %s workflow %s: it is %s", e.Op, e.WorkflowID, e.Status)
}

// Is makes errors.Is(err, ErrWorkflowState) true for every StateError.
func (e *StateError) Is(target error) bool { return target == ErrWorkflowState }

// Code is a stable machine-readable code naming the status that refused
// the operation: "workflow_" followed by the status in lower case
// (workflow_running, workflow_settling, workflow_settled, workflow_failed,
// workflow_canceled), so a client can tell "too late, it runs" from
// "already canceled" without parsing the message.
func (e *StateError) Code() wire.ErrorCode {
	return wire.ErrorCode("workflow_" + strings.ToLower(string(e.Status)))
}
