// Package settleflow is an embeddable engine that prices and runs workflows for
// customers and settles each charge on a public blockchain.
//
// Your program registers products; asks the [Engine] for a workflow of a
// product on behalf of a customer; the engine quotes a price at once, runs the
// product in the background, settles the charge on chain (test charges on a
// testnet, live charges on a mainnet), records the margin it achieved, and
// emits a workflow.completed (or workflow.failed) event that a [Notifier]
// delivers, for example as a signed webhook.
//
// It is built for money: amounts are integers of minor units ([Money]),
// every state change is durable before it is acknowledged, each charge is
// keyed by its workflow and a dense sequence number so it is never charged
// twice, and a crash (kill -9) loses nothing that was acknowledged.
//
// # Lifecycle
//
// Workflows move through one state machine ([Status]; [Status.To] is the only
// way to get a [Transition], and the database refuses any other):
//
//	Pending ──► Running ──► Settling ──► Settled
//	   │           │            │
//	   │           └────────────┴──► Failed
//	   └──► Canceled  (Engine.Cancel, only while Pending; nothing charged)
//
// The types a client sees (Workflow, Event, Money, ErrorCode …) are
// declared in package [github.com/settleflow/settleflow/wire], which depends
// on nothing outside the standard library, and are the same types here
// under the same names (type aliases); package client and webhook
// verification (webhook/signature) import wire, not this package.
//
// [Engine.Create] validates and prices the request and returns once the
// workflow is committed, Pending, with its quote. A worker claims it under a
// lease (Running) and runs the product's Execute; the result decides the
// charge and the workflow moves to Settling, with its charge numbered; the
// [Settler] submits charges in batches and the engine asks about them until
// the chain confirms them (Settled) or refuses one (Failed: nothing charged).
// A charge of 0 is Settled without touching the chain. [Engine.Cancel]
// cancels a workflow still Pending (workflow.canceled). Every event is written
// in the same transaction as its state change and handed to the Notifier at
// least once, with a stable id: through an outbox, or, for a workflow update's
// event when the Notifier is the webhook package on the Store's database,
// inside that transaction (its deliveries recorded with it);
// [Engine.ListEvents] and [Engine.FetchEvent] read them back.
//
// A workflow that was Running or Settling when its process died is claimed
// again when its lease ends (at once if the engine restarts with the same
// [Options.WorkerID]); one still Pending waits its turn as before. So a product's Execute may run more than once for
// one workflow ([WorkflowID] names it); the settlement contract records each
// charge's sequence once, so a charge submitted again is not charged again.
//
// # Usage
//
// The package's example "Embedding" (Example_embedding, in
// example_engine_test.go) is the whole program in 25 lines, as the README
// shows it: a SQLite store, the in-process simulated chain, one
// product, a Create answered Pending with a quote of 286, and the workflow
// Settled in the background. In outline:
//
//	products := settleflow.NewProducts()
//	settleflow.Register(products, settleflow.Product[Ticket]{Name: "ticket-triage",
//		Price:    settleflow.Price{TargetMargin: 3000}, // 30 %
//		Estimate: func(Ticket) (int64, error) { return 200, nil },
//		Execute:  runTicket,
//	})
//	engine, err := settleflow.New(settleflow.Options{Store: store, Settler: chain,
//		Notifier: notifier, Products: products})
//	engine.Start(ctx)
//	defer engine.Stop(ctx)
//	wf, _, err := engine.Create(ctx, settleflow.CreateParams{Environment: settleflow.Test,
//		Product: "ticket-triage", CustomerID: "cus_123", Payload: payload})
//
// # What an embedder provides
//
// [New] takes four pieces in [Options]; everything else has a default:
//
//   - a [Store], where workflows, events, idempotency records, customer
//     accounts and refunds live: package
//     github.com/settleflow/settleflow/storage/sqlite opens one on SQLite,
//     github.com/settleflow/settleflow/storage/postgres on Postgres (several
//     engines may share it), both built on storage/bunstore; storage/storetest
//     is the suite every Store passes.
//   - a [Settler], which submits batches of charges and reports their state:
//     package github.com/settleflow/settleflow/settlement settles on an EVM
//     chain with go-ethereum, or on an in-process simulated chain for test
//     mode. A Settler that is also [Funds] has charges paid from customers'
//     prepaid balances, which the engine reserves at Create ([Engine.Customer],
//     [Engine.Refund]).
//   - a [Notifier], which takes the engine's events: package
//     github.com/settleflow/settleflow/webhook delivers them as signed
//     webhooks; [NotifierFunc] adapts a function.
//   - the [Products]: [NewProducts], then [Register] for each product, with a
//     typed payload decoded strictly and validated, its JSON Schema, its
//     [Price], an Estimate of its cost and its Execute.
//
// Store, Settler, Funds and Notifier, with the values they pass, are
// declared in package github.com/settleflow/settleflow/driver, which
// depends on wire and the standard library only, and are the same types
// here under the same names: a platform team that swaps the storage or the
// chain adapter implements them.
//
// # Pricing
//
// Money is an integer count of minor units and margins are basis points
// ([BasisPoints]: 3000 is 0.3). The quote is ceil(estimate / (1 − target
// margin)), at least the minimum charge ([Price.Quote]). The charge never
// exceeds the quote; a [Price]'s Model decides it once the product ran:
//
//   - [PricingFixed] (the default): the quote, whatever happened;
//   - [PricingCapped]: the cost plus a markup, up to the quote;
//   - [PricingSuccessFee]: the quote if the outcome meets the success
//     criteria (package github.com/settleflow/settleflow/criteria), else 0;
//   - [PricingHybrid]: a base share of the quote always, the rest on success.
//
// A product reports its cost as items ([CostItem], [ReportSpend]) and may
// declare a margin floor: the run then has a budget ([SpendBudget]), and a
// spend past it stops the run with nothing charged. [Engine.Margins] reports
// the margins achieved.
//
// # Related packages
//
// github.com/settleflow/settleflow/httpapi serves the engine as the /v1 HTTP
// API (an http.Handler); github.com/settleflow/settleflow/client is its Go
// client (sdk/node and sdk/python hold the Node.js and Python ones);
// github.com/settleflow/settleflow/webhook signs, verifies
// ([github.com/settleflow/settleflow/webhook.ConstructEvent]) and delivers
// webhooks; github.com/settleflow/settleflow/dashboard is the operator
// dashboard; github.com/settleflow/settleflow/apikey and
// github.com/settleflow/settleflow/ratelimit authenticate and limit API
// requests. The reference server, examples/server, wires them all into one
// binary (go run ./examples/server). The repository's docs directory explains
// the engine's stages and queues (docs/architecture.md), running the server
// (docs/operating.md), embedding (docs/embedding.md) and the wire contract
// (docs/api.md).
package settleflow
