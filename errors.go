package settleflow

import (
	"errors"
	"fmt"
	"strings"

	"github.com/settleflow/settleflow/wire"
)

// Failure is why a workflow failed: the workflow's "failure" object on the
// wire (wire.Failure). It implements error.
type Failure = wire.Failure

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

// Sentinel errors returned by the engine and every Store.
var (
	// ErrNotFound: no such workflow (or event) in that environment.
	ErrNotFound = errors.New("settleflow: not found")
	// ErrWorkflowState: the workflow's status does not allow the operation
	// (a cancel of a workflow that is no longer Pending). Every *StateError
	// matches it with errors.Is.
	ErrWorkflowState = errors.New("settleflow: the workflow's status does not allow this")
	// ErrEngineStopped: the engine is stopping or stopped and takes no work.
	ErrEngineStopped = errors.New("settleflow: engine stopped")
	// ErrEnvironmentNotConfigured: the engine's Settler cannot settle the
	// environment asked for (live mode without a mainnet configured, say),
	// so Quote and Create refuse it before anything runs.
	ErrEnvironmentNotConfigured = errors.New("settleflow: the settler cannot settle this environment")
)

// InvalidError is a bad input to the engine (wire.InvalidError): Param
// names the offending field as spelled on the wire, Code is stable.
type InvalidError = wire.InvalidError

// FieldError is returned by a product's payload validation to name the field
// at fault. Field is the path inside the payload ("ticketId", "items.0.sku");
// the engine reports it as "payload.<Field>".
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// StateError is returned when a workflow's current status does not allow
// the operation asked for, for example Engine.Cancel of a workflow that is
// already Running. It is a conflict with the workflow's state, not a bad
// request: over HTTP it is a 409 whose code is Code(). Status is the status
// the workflow had when the operation was refused.
type StateError struct {
	// Op is the operation refused, e.g. "cancel".
	Op         string
	WorkflowID string
	Status     Status
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
func (e *StateError) Code() ErrorCode {
	return ErrorCode("workflow_" + strings.ToLower(string(e.Status)))
}

// ErrRefundsNotSupported is returned by Engine.Refund in an environment whose
// charges are not paid from customer balances (the Settler is not [Funds],
// or not Funded for it): there is no balance to give the money back to.
var ErrRefundsNotSupported = errors.New("settleflow: refunds need a settler that charges customer balances")
