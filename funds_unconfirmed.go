package settleflow

import (
	"context"
	"fmt"
	"time"
)

// FundsUnconfirmedError is returned by Create for a test customer seen for
// the first time, and by FundTestCustomer, when the test faucet's deposit
// for the customer was sent but is not confirmed (at the chain's
// confirmation depth, and applied) within Options.FaucetWait or before the
// caller's context ends: the engine admits a workflow only against
// confirmed deposits. A chain that makes no block of its own, such as
// `geth --dev` started without `--dev.period` (a block only when a
// transaction arrives), never confirms it. Nothing was stored; the
// deposit counts once it is confirmed, and a later create then finds it
// (the faucet does not deposit again). Over HTTP it is a 503 with code
// funds_unconfirmed and a Retry-After header.
type FundsUnconfirmedError struct {
	Environment Environment
	CustomerID  string
	// TxHash is the deposit's transaction when this call sent it; empty
	// when another request (here or on another instance) sent it.
	TxHash string
	// Waited is how long the call waited for the confirmation.
	Waited time.Duration
	// RetryAfter is when to try again.
	RetryAfter time.Duration
}

func (e *FundsUnconfirmedError) Error() string {
	tx := "sent by another request"
	if e.TxHash != "" {
		tx = "transaction " + e.TxHash
	}
	return fmt.Sprintf("settleflow: funds unconfirmed: the test faucet's deposit for customer %s (%s) was not confirmed within %s: the %s chain has not made the blocks that confirm it (geth --dev needs --dev.period)",
		e.CustomerID, tx, e.Waited.Round(time.Millisecond), e.Environment)
}

// faucetWait is how long a wait for a faucet deposit may last: at most
// Options.FaucetWait, and ending before ctx does (by a tenth of what is
// left, at most a second), so that the caller hears why it was refused
// rather than its own deadline.
func (e *Engine) faucetWait(ctx context.Context) time.Duration {
	d := e.opts.FaucetWait
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		d = min(d, left-min(time.Second, left/10))
	}
	return max(d, 0)
}
