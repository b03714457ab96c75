package settleflow

import (
	"errors"

	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Failure is why a workflow failed: the workflow's "failure" object on the
// wire (wire.Failure). It implements error.
type Failure = wire.Failure

// Sentinel errors returned by the engine and every Store.
var (
	// ErrNotFound: no such workflow (or event) in that environment
	// ([driver.ErrNotFound]).
	ErrNotFound = driver.ErrNotFound
	// ErrWorkflowState: the workflow's status does not allow the operation
	// ([driver.ErrWorkflowState]).
	ErrWorkflowState = driver.ErrWorkflowState
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

// ErrRefundsNotSupported is returned by Engine.Refund in an environment whose
// charges are not paid from customer balances (the Settler is not [Funds],
// or not Funded for it): there is no balance to give the money back to.
var ErrRefundsNotSupported = errors.New("settleflow: refunds need a settler that charges customer balances")

// PermanentError marks an error that retrying cannot fix ([driver.PermanentError]).
type PermanentError = driver.PermanentError

// StateError is returned when a workflow's current status does not allow the operation asked for, for example Engine.Cancel of a workflow that is already Running ([driver.StateError]).
type StateError = driver.StateError

// Permanent marks err as permanent ([driver.Permanent]): a product's
// Execute, or a Settler, returns one to end a workflow in Failed at once.
func Permanent(err error) error { return driver.Permanent(err) }

// IsPermanent reports whether err is, or wraps, a permanent error
// ([driver.IsPermanent]).
func IsPermanent(err error) bool { return driver.IsPermanent(err) }
