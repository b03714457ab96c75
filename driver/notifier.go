package driver

import (
	"context"

	"github.com/settleflow/settleflow/wire"
)

// Notifier receives the events the engine wrote to its outbox, oldest first.
//
// Notify returns nil only once it has taken durable responsibility for every
// event given (for example by recording a delivery per webhook endpoint); the
// engine then marks them dispatched. A Notifier that can record inside the
// Store's own transaction (storage.TxNotifier, with storage/bunstore) is
// handed a workflow update's events there instead (see Update.Notifier). After a crash an event may be handed over
// again, with the same ID; a Notifier dedupes on it. An error leaves the events
// in the outbox, and they are offered again after a backoff.
type Notifier interface {
	Notify(ctx context.Context, events []wire.Event) error
}

// NotifierFunc adapts a function to the [Notifier] interface.
type NotifierFunc func(ctx context.Context, events []wire.Event) error

// Notify calls f.
func (f NotifierFunc) Notify(ctx context.Context, events []wire.Event) error { return f(ctx, events) }
