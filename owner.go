package settleflow

import (
	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// OwnerGrant is a customer's signed consent that an address owns its balance
// on chain ([driver.OwnerGrant]).
type OwnerGrant = driver.OwnerGrant

// OwnerSetter is a Funds settler that sets balance owners from signed grants
// ([driver.OwnerSetter]).
type OwnerSetter = driver.OwnerSetter

// OwnerChangeReader is a settler that reads a proposed owner change
// ([driver.OwnerChangeReader]).
type OwnerChangeReader = driver.OwnerChangeReader

// OwnerChangeProposal is a change of owner proposed on chain
// ([wire.OwnerChangeProposal]).
type OwnerChangeProposal = wire.OwnerChangeProposal

// OwnerGrantRecord is an owner grant the engine sent
// ([driver.OwnerGrantRecord]).
type OwnerGrantRecord = driver.OwnerGrantRecord

// OwnerGrantStore is a Store that records owner grants
// ([driver.OwnerGrantStore]).
type OwnerGrantStore = driver.OwnerGrantStore

// OwnerGrantRequest is an unsigned owner grant ([wire.OwnerGrantRequest]).
type OwnerGrantRequest = wire.OwnerGrantRequest

// OwnerChange is an owner grant sent to the chain ([wire.OwnerChange]).
type OwnerChange = wire.OwnerChange
