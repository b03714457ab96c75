package settlement

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/settleflow/settleflow"
)

// OwnerChange is an owner change the operator proposed for a customer that
// has an owner (setOwner with a grant of another address): it makes Next
// the owner at EffectiveAt (completeOwnerChange, which anyone may call once
// due), unless the current owner cancels it first.
type OwnerChange struct {
	// Next is the proposed owner, checksummed hex.
	Next        string
	EffectiveAt time.Time
}

// OwnerChange reads the owner change proposed for customerID in env's
// contract now (at the chain's latest block); nil if none.
func (s *Settler) OwnerChange(ctx context.Context, env settleflow.Environment, customerID string) (*OwnerChange, error) {
	c, ok := s.chains[env]
	if !ok {
		return nil, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackOwnerChange(c.ref(customerID))}, nil)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: reading the owner change of %s: %w", env, customerID, err)
	}
	oc, err := settlementABI.UnpackOwnerChange(out)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: reading the owner change of %s: %w", env, customerID, err)
	}
	if oc.Next == (common.Address{}) {
		return nil, nil
	}
	return &OwnerChange{Next: oc.Next.Hex(), EffectiveAt: time.Unix(oc.EffectiveAt.Int64(), 0).UTC()}, nil
}

// ProposedOwner implements settleflow.OwnerChangeReader: OwnerChange on
// the wire.
func (s *Settler) ProposedOwner(ctx context.Context, env settleflow.Environment, customerID string) (*settleflow.OwnerChangeProposal, error) {
	oc, err := s.OwnerChange(ctx, env, customerID)
	if err != nil || oc == nil {
		return nil, err
	}
	return &settleflow.OwnerChangeProposal{Address: oc.Next, EffectiveAt: oc.EffectiveAt}, nil
}

var _ settleflow.OwnerChangeReader = (*Settler)(nil)
