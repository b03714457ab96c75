package settleflow

import "github.com/settleflow/settleflow/wire"

// Environment is the world a key, workflow, event or endpoint belongs to
// (wire.Environment).
type Environment = wire.Environment

// The two environments. Live settles on a mainnet, test on a testnet.
const (
	// Test is the test environment (wire.Test).
	Test = wire.Test
	// Live is the live environment (wire.Live).
	Live = wire.Live
)

// Money is an amount in integer minor units of a currency (wire.Money).
type Money = wire.Money

// Currency is the only currency the engine quotes in.
const Currency = wire.Currency

// BasisPoints is a ratio in hundredths of a percent (wire.BasisPoints).
type BasisPoints = wire.BasisPoints

// ParseBasisPoints reads a ratio written as a JSON number into basis
// points, exactly (see wire.ParseBasisPoints).
func ParseBasisPoints(s string) (BasisPoints, error) { return wire.ParseBasisPoints(s) }

// Margin is a workflow's target and achieved margin (wire.Margin).
type Margin = wire.Margin
