package bunstore

import (
	"context"

	"github.com/settleflow/settleflow"
)

// MigrateBeforeCanceled applies the migrations up to and including until
// with the state machine as it was before Canceled, building a database as
// the releases before Canceled left it.
func (s *Store) MigrateBeforeCanceled(ctx context.Context, until string) error {
	var statuses []settleflow.Status
	for _, st := range settleflow.Statuses {
		if st != settleflow.Canceled {
			statuses = append(statuses, st)
		}
	}
	var transitions []settleflow.Transition
	for _, tr := range settleflow.Transitions() {
		if tr.Next() != settleflow.Canceled {
			transitions = append(transitions, tr)
		}
	}
	return s.migrate(ctx, until, statuses, transitions)
}
