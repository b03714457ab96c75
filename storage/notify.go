package storage

import (
	"context"
	"database/sql"

	"github.com/settleflow/settleflow/wire"
)

// A TxNotifier is a Notifier (driver.Notifier) that can take durable
// responsibility for events inside another package's write on the same
// [DB]: the webhook deliverer records each event's deliveries in the very
// transaction that writes the event. A Store on that DB (storage/bunstore)
// then writes the event once, already dispatched, instead of writing it to
// its outbox and marking it dispatched once a separate Notify has committed.
type TxNotifier interface {
	// DB is the database the notifier records to. A Store hands events
	// over inside its transaction only when this is its own DB.
	DB() *DB
	// PrepareNotify does, outside any transaction, what recording events
	// needs first (reading endpoints, marshalling, reserving room to send
	// at once). It returns an error, and then no Notice, when it cannot
	// record the events (the Store then leaves them to its outbox).
	PrepareNotify(ctx context.Context, events []wire.Event) (Notice, error)
}

// A Notice is the recording of a batch of events prepared by
// [TxNotifier.PrepareNotify], to be run inside a write and then ended.
type Notice interface {
	// Record records, inside tx, the notice's events for which keep
	// reports true (the others were not written: their workflow update did
	// not apply). It may run again, in another transaction, when a write
	// is rerun ([WriteOptions.Rerunnable]): it decides afresh each time.
	// If it fails, the write it ran in must not commit its work.
	Record(ctx context.Context, tx *sql.Tx, keep func(eventID string) bool) error
	// Done ends the notice once the write it ran in has ended; committed
	// reports whether Record's last run committed. It is called exactly
	// once, Record run or not.
	Done(committed bool)
}
