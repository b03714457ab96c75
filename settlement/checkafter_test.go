package settlement

import (
	"context"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// A pending charge comes with a hint of when to ask again: about its
// remaining confirmations in block times, plus one poll; none once final.
func TestStatusHintsTheNextCheck(t *testing.T) {
	const bt, poll = 500 * time.Millisecond, 20 * time.Millisecond
	s := newSim(t, SimulatedOptions{ManualCommit: true, Tuning: ChainConfig{Confirmations: 3, FlushInterval: time.Hour,
		PollInterval: poll, BlockTime: bt, BatchSize: 1}})
	ctx := context.Background()
	ch := []settleflow.Charge{charge("wf_hint", 100)}
	if err := s.Submit(ctx, ch); err != nil {
		t.Fatal(err)
	}
	// Sent at once (a full batch of one), not yet mined: at most three
	// blocks and a poll away, at least one block.
	st := waitFor(t, s, ch, 10*time.Second, func() {}, func(st settleflow.SettlementStatus) bool {
		return st.State == settleflow.SettlementPending && st.Settlement != nil && st.Settlement.TxHash != ""
	})
	if h := st[0].CheckAfter; h < bt || h > 3*bt+poll {
		t.Errorf("sent, unmined: CheckAfter %v; want between %v and %v", h, bt, 3*bt+poll)
	}
	// Mined, short of three confirmations: the missing blocks and a poll.
	st = waitFor(t, s, ch, 10*time.Second, s.Commit, func(st settleflow.SettlementStatus) bool {
		return st.State == settleflow.SettlementPending && st.Settlement != nil && st.Settlement.Confirmations >= 1
	})
	if c := st[0].Settlement.Confirmations; st[0].CheckAfter != time.Duration(3-c)*bt+poll {
		t.Errorf("%d of 3 confirmations: CheckAfter %v; want %v", c, st[0].CheckAfter, time.Duration(3-c)*bt+poll)
	}
	st = waitFor(t, s, ch, 10*time.Second, s.Commit, confirmed)
	if st[0].CheckAfter != 0 {
		t.Errorf("confirmed: CheckAfter %v; want 0", st[0].CheckAfter)
	}
}
