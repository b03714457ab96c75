package settleflow

import (
	"github.com/settleflow/settleflow/driver"
	"github.com/settleflow/settleflow/wire"
)

// Settlement tells where a charge landed on chain: the "settlement" object
// on the wire (wire.Settlement).
type Settlement = wire.Settlement

// Charge is one workflow's quoted charge, handed to a [Settler] ([driver.Charge]).
type Charge = driver.Charge

// SettlementLease says which of several engines sharing a Store settles charges ([driver.SettlementLease]).
type SettlementLease = driver.SettlementLease

// SettlementState is how far a submitted charge has come ([driver.SettlementState]).
type SettlementState = driver.SettlementState

// SettlementStatus is a Settler's answer for one charge ([driver.SettlementStatus]).
type SettlementStatus = driver.SettlementStatus

// RefusedError is what a Settler's Submit returns when it refused some charges of the batch for good and took every other one ([driver.RefusedError]).
type RefusedError = driver.RefusedError

// Settler settles charges on chain ([driver.Settler]).
type Settler = driver.Settler

// The states of a charge a Settler reports ([driver.SettlementState]).
const (
	SettlementUnknown   = driver.SettlementUnknown
	SettlementPending   = driver.SettlementPending
	SettlementConfirmed = driver.SettlementConfirmed
	SettlementFailed    = driver.SettlementFailed
)
