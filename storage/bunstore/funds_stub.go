package bunstore

// TEMPORARY: the funds and refunds methods of settleflow.Store, to be
// replaced by their implementation (funds.go, refunds.go). Every call fails.

import (
	"context"
	"errors"
	"time"

	"github.com/settleflow/settleflow"
)

var errFundsUnimplemented = errors.New("bunstore: funds and refunds are not implemented yet")

func (s *Store) GetAccount(ctx context.Context, env settleflow.Environment, customerID, ref string) (*settleflow.Account, error) {
	return nil, errFundsUnimplemented
}
func (s *Store) MarkFaucet(ctx context.Context, env settleflow.Environment, customerID, ref string, at time.Time) (bool, error) {
	return false, errFundsUnimplemented
}
func (s *Store) FundsCursor(ctx context.Context, env settleflow.Environment) (settleflow.FundsCursor, error) {
	return settleflow.FundsCursor{}, errFundsUnimplemented
}
func (s *Store) ApplyFunds(ctx context.Context, b settleflow.FundsBatch) (bool, error) {
	return false, errFundsUnimplemented
}
func (s *Store) InsertRefund(ctx context.Context, in settleflow.RefundInsert) (settleflow.RefundInsertResult, error) {
	return settleflow.RefundInsertResult{}, errFundsUnimplemented
}
func (s *Store) GetRefund(ctx context.Context, env settleflow.Environment, id string) (*settleflow.Refund, error) {
	return nil, errFundsUnimplemented
}
func (s *Store) ListRefunds(ctx context.Context, q settleflow.RefundQuery) ([]*settleflow.Refund, bool, error) {
	return nil, false, errFundsUnimplemented
}
func (s *Store) ClaimRefunds(ctx context.Context, c settleflow.Claim) ([]*settleflow.Refund, error) {
	return nil, errFundsUnimplemented
}
func (s *Store) UpdateRefunds(ctx context.Context, us []settleflow.RefundUpdate) ([]bool, error) {
	return nil, errFundsUnimplemented
}
