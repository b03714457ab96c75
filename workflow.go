package settleflow

import (
	"strings"

	"github.com/settleflow/settleflow/wire"
)

// Status is a workflow's state (wire.Status). The names are part of the
// wire contract.
type Status = wire.Status

// The states of a workflow. See the package documentation for the diagram.
const (
	// Pending: created and quoted, queued for execution.
	Pending = wire.Pending
	// Running: the product is executing.
	Running = wire.Running
	// Settling: the charge is on its way to the chain and waits for
	// confirmations.
	Settling = wire.Settling
	// Settled: the charge is confirmed; workflow.completed was emitted.
	Settled = wire.Settled
	// Failed: execution or settlement failed for good.
	Failed = wire.Failed
	// Canceled: canceled while still Pending (Engine.Cancel).
	Canceled = wire.Canceled
)

// Statuses lists every status in the order of the state machine.
var Statuses = wire.Statuses

// statusNames is the list of statuses for error messages.
var statusNames = func() string {
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}()

// ParseStatus returns the status named by s, exactly as on the wire (see
// wire.ParseStatus).
func ParseStatus(s string) (Status, error) { return wire.ParseStatus(s) }

// Transition is a legal move between two statuses (wire.Transition),
// obtained from Status.To.
type Transition = wire.Transition

// Transitions lists every legal transition, for Store adapters that enforce
// the state machine in the database too.
func Transitions() []Transition { return wire.Transitions() }

// Workflow is a priced run of a product for a customer (wire.Workflow). Its
// JSON form is the wire object of the HTTP API.
type Workflow = wire.Workflow

// Terms are what a workflow was created under, beyond its quote
// (wire.Terms): pricing, success criteria and margin floor, kept by a Store
// as one value.
type Terms = wire.Terms
