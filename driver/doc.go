// Package driver holds the contracts the settleflow engine runs on and the
// values they exchange: the [Store] that keeps workflows, events, accounts
// and refunds; the [Settler] that takes charges to a chain (and [Funds],
// when charges are paid from customer balances); the [Notifier] that takes
// events; and the errors they return.
//
// A platform team that swaps the storage or the chain adapter implements
// these. The root package re-exports every name here under the same name
// (type aliases), so settleflow.Store and driver.Store are one type; the
// engine's stages (an internal package) import this package rather than the
// root one, as River's stages import riverdriver. It depends on package
// wire and the standard library only.
package driver
