package settlement

import (
	"context"
	"math/big"
	"time"
)

// How soon a pending charge is worth asking about again. The engine polls
// each Settling workflow; without a hint it waits its SettlementPollInterval
// (2 s by default), which on a chain that confirms in half a second is most
// of a workflow's latency. The hint is the settler's estimate of when the
// charge's state changes: its batch sent, then a block per confirmation, then
// one of its own polls to see it.

// blockTimeSample is how many recent blocks the block time is measured over.
const blockTimeSample = 64

// estimateBlockTime measures the chain's time between blocks from the
// timestamps of its last blockTimeSample blocks: at least a second (block
// timestamps count whole seconds), fallback when the chain is too young to
// tell.
func estimateBlockTime(ctx context.Context, b Backend, fallback time.Duration) time.Duration {
	head, err := b.HeaderByNumber(ctx, nil)
	if err != nil || head.Number.Uint64() < blockTimeSample {
		return fallback
	}
	old, err := b.HeaderByNumber(ctx, new(big.Int).Sub(head.Number, big.NewInt(blockTimeSample)))
	if err != nil || head.Time <= old.Time {
		return fallback
	}
	return max(time.Duration(head.Time-old.Time)*time.Second/blockTimeSample, time.Second)
}

// checkAfterLocked is item it's hint (c.mu held); 0 when the chain's
// finality is the node's "finalized" block, which no block count predicts.
func (c *chain) checkAfterLocked(it *item) time.Duration {
	bt, conf := c.cfg.BlockTime, c.cfg.Confirmations
	if bt <= 0 || conf == 0 {
		return 0
	}
	now := c.now()
	var d time.Duration
	switch {
	case it.state == stQueued:
		d = max(c.cfg.FlushInterval-now.Sub(it.queuedAt), 0) + time.Duration(conf)*bt
	case it.tx != nil && it.tx.receipt != nil:
		got := c.confirmationsLocked(it.tx.receipt.BlockNumber.Uint64())
		d = time.Duration(max(int64(conf)-int64(got), 1)) * bt
	case it.tx != nil:
		d = max(time.Duration(conf)*bt-time.Since(it.tx.sentAt), bt)
	default:
		d = bt
	}
	return d + c.cfg.PollInterval
}
