package settlement

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sync/atomic"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// logWindow is how many blocks one log query spans, adapted to what the
// node answers: providers refuse a query that spans too many blocks or
// returns too many logs (-32005 "query returned more than 10000 results",
// "block range too large"), and a flood of small deposits can make any
// fixed range too large. A refused query is retried over half the blocks,
// down to one block; after each success the window doubles back toward its
// maximum. A block whose logs are still refused is read in parts (see
// readBlock), so no block stops the reader for good. The zero value spans
// FundsLogRange blocks. Safe for concurrent use.
type logWindow struct {
	max  uint64        // 0: FundsLogRange
	size atomic.Uint64 // 0: max
	// split counts the blocks read in parts (one query per event
	// signature, or the block's receipts): a flood of one block.
	split atomic.Int64
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
// the last block read. A block whose logs the node refuses in one query is
// read in parts (readBlock). It fails only when a block cannot be read in
// any of these ways, or when ctx ends.
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
		if ctx.Err() != nil {
			return nil, to, fmt.Errorf("logs of blocks %d-%d: %w", from, to, err)
		}
		if size == 1 {
			logs, perr := readBlock(ctx, b, q, from)
			if perr != nil {
				return nil, to, fmt.Errorf("logs of block %d: %w; read in parts: %w", from, err, perr)
			}
			w.split.Add(1)
			return logs, to, nil
		}
		size = max(1, size/2)
		w.size.Store(size)
	}
}

// blockReceipts is the node's eth_getBlockReceipts (ethclient.Client and
// the simulated backend's client have it).
type blockReceipts interface {
	BlockReceipts(ctx context.Context, blockNrOrHash rpc.BlockNumberOrHash) ([]*types.Receipt, error)
}

// blockTransactions reads a block's transactions and their receipts one by
// one, for a node without eth_getBlockReceipts.
type blockTransactions interface {
	BlockByNumber(ctx context.Context, number *big.Int) (*types.Block, error)
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
}

// readBlock reads the logs q selects in block n when the node refuses to
// answer them in one query (more logs than it returns: one block flooded
// with deposits, or with an owner's request/cancel loop). First one query
// per event signature of q; if one of those is refused too, the block's
// receipts (eth_getBlockReceipts, or each transaction's receipt), whose
// logs are filtered here as the node would. Each log is returned once, in
// the order of the block.
func readBlock(ctx context.Context, b ethereum.LogFilterer, q ethereum.FilterQuery, n uint64) ([]types.Log, error) {
	q.FromBlock, q.ToBlock = new(big.Int).SetUint64(n), new(big.Int).SetUint64(n)
	if len(q.Topics) > 0 && len(q.Topics[0]) > 1 {
		var all []types.Log
		var err error
		for _, sig := range q.Topics[0] {
			one := q
			one.Topics = slices.Clone(q.Topics)
			one.Topics[0] = []common.Hash{sig}
			var logs []types.Log
			if logs, err = b.FilterLogs(ctx, one); err != nil {
				break
			}
			all = append(all, logs...)
		}
		if err == nil {
			slices.SortFunc(all, func(a, b types.Log) int { return int(a.Index) - int(b.Index) })
			return all, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
	}
	var receipts []*types.Receipt
	switch r := b.(type) {
	case blockReceipts:
		var err error
		if receipts, err = r.BlockReceipts(ctx, rpc.BlockNumberOrHashWithNumber(rpc.BlockNumber(n))); err != nil {
			return nil, fmt.Errorf("receipts of block %d: %w", n, err)
		}
	case blockTransactions:
		blk, err := r.BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", n, err)
		}
		for _, tx := range blk.Transactions() {
			rc, err := r.TransactionReceipt(ctx, tx.Hash())
			if err != nil {
				return nil, fmt.Errorf("receipt of %s in block %d: %w", tx.Hash().Hex(), n, err)
			}
			if rc.BlockHash != blk.Hash() {
				return nil, fmt.Errorf("receipt of %s: in block %s, not %s (the chain moved while it was read)", tx.Hash().Hex(), rc.BlockHash.Hex(), blk.Hash().Hex())
			}
			receipts = append(receipts, rc)
		}
	default:
		return nil, fmt.Errorf("the node refuses the block's logs and cannot be asked for its receipts")
	}
	var out []types.Log
	var hash common.Hash
	for _, rc := range receipts {
		for _, l := range rc.Logs {
			if hash == (common.Hash{}) {
				hash = l.BlockHash
			} else if l.BlockHash != hash {
				return nil, fmt.Errorf("the receipts of block %d are of two blocks (%s and %s): the chain moved while they were read", n, hash.Hex(), l.BlockHash.Hex())
			}
			if l.BlockNumber == n && matches(q, l) {
				out = append(out, *l)
			}
		}
	}
	slices.SortFunc(out, func(a, b types.Log) int { return int(a.Index) - int(b.Index) })
	return out, nil
}

// matches reports whether l is a log q selects (its addresses and topics,
// as eth_getLogs filters them).
func matches(q ethereum.FilterQuery, l *types.Log) bool {
	if len(q.Addresses) > 0 && !slices.Contains(q.Addresses, l.Address) {
		return false
	}
	if len(q.Topics) > len(l.Topics) {
		return false
	}
	for i, want := range q.Topics {
		if len(want) > 0 && !slices.Contains(want, l.Topics[i]) {
			return false
		}
	}
	return true
}
