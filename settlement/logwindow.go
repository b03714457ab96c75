package settlement

import (
	"context"
	"fmt"
	"math/big"
	"sync/atomic"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
)

// logWindow is how many blocks one log query spans, adapted to what the
// node answers: providers refuse a query that spans too many blocks or
// returns too many logs (-32005 "query returned more than 10000 results",
// "block range too large"), and a flood of small deposits can make any
// fixed range too large. A refused query is retried over half the blocks,
// down to one block; after each success the window doubles back toward its
// maximum. The zero value spans FundsLogRange blocks. Safe for concurrent
// use.
type logWindow struct {
	max  uint64        // 0: FundsLogRange
	size atomic.Uint64 // 0: max
}

func (w *logWindow) limit() uint64 {
	if w.max == 0 {
		return FundsLogRange
	}
	return w.max
}

func (w *logWindow) current() uint64 {
	if n := w.size.Load(); n > 0 {
		return min(n, w.limit())
	}
	return w.limit()
}

// read returns the logs q selects in blocks from to at most upTo, as many
// blocks as the window spans (FromBlock and ToBlock of q are set here), and
// the last block read. It fails only when a query of one block fails, or
// when ctx ends.
func (w *logWindow) read(ctx context.Context, b ethereum.LogFilterer, q ethereum.FilterQuery, from, upTo uint64) ([]types.Log, uint64, error) {
	size := w.current()
	for {
		to := upTo
		if upTo-from >= size {
			to = from + size - 1
		}
		q.FromBlock, q.ToBlock = new(big.Int).SetUint64(from), new(big.Int).SetUint64(to)
		logs, err := b.FilterLogs(ctx, q)
		if err == nil {
			// Grow back after a success (a flood passes).
			w.size.Store(min(size*2, w.limit()))
			return logs, to, nil
		}
		if ctx.Err() != nil || size == 1 {
			return nil, to, fmt.Errorf("logs of blocks %d-%d: %w", from, to, err)
		}
		size = max(1, size/2)
		w.size.Store(size)
	}
}
