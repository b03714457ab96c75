// Package settleflow is an embeddable engine that prices and runs workflows for
// customers and settles each charge on a public blockchain.
//
// An application registers products (see [Register]), builds an [Engine] with
// [New] from a [Store], a [Settler] and a [Notifier], and asks it for workflows
// with [Engine.Create]. The engine quotes a price at once, runs the product in
// the background, settles the quoted charge through the Settler, records the
// margin it achieved and writes a workflow.completed or workflow.failed event
// to its outbox in the same transaction as the state change; the Notifier
// delivers those events (for example as signed webhooks). [Engine.Cancel]
// cancels a workflow still Pending (workflow.canceled); [Engine.ListEvents]
// and [Engine.FetchEvent] read the events back.
//
// Workflows move through one state machine:
//
//	Pending ──► Running ──► Settling ──► Settled
//	   │           │            │
//	   │           └────────────┴──► Failed
//	   └──► Canceled  (Engine.Cancel, only while Pending; nothing charged)
//
// The types a client sees (Workflow, Event, Money, ErrorCode …) are
// declared in package [github.com/settleflow/settleflow/wire], which depends
// on nothing outside the standard library, and are the same types here
// under the same names (type aliases); package client and webhook
// verification (webhook/signature) import wire, not this package.
//
// Execution is durable: a workflow that was Pending, Running or Settling when
// the process died is picked up again after restart, and every charge carries
// the workflow id as its idempotency key, so it is never charged twice.
package settleflow
