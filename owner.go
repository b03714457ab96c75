package settleflow

import "github.com/settleflow/settleflow/driver"

// OwnerGrant is a customer's signed consent that an address owns its balance
// on chain ([driver.OwnerGrant]).
type OwnerGrant = driver.OwnerGrant

// OwnerSetter is a Funds settler that sets balance owners from signed grants
// ([driver.OwnerSetter]).
type OwnerSetter = driver.OwnerSetter
