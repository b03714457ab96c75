// Package wire holds the types of settleflow's wire contract, docs/api.md:
// the workflow and its state machine, events and their data, money and
// basis points, environments, pricing, costs and outcomes, refunds,
// customers, the product catalogue, margin reports, error codes and the
// error object every failed request answers with.
//
// It imports nothing outside the standard library, so that a program that
// only talks to a settleflow server (through package client) or only
// verifies its webhooks (through package webhook/signature) depends on
// nothing else. The engine (package settleflow), the HTTP API (httpapi),
// the Go client (client) and webhook verification share these types: the
// engine re-exports each under its old name (settleflow.Workflow is
// wire.Workflow), so the same value crosses every layer without conversion.
package wire
