// Package server is the whole settleflow server in one value: the engine
// and its stages, the signed webhook deliverer, the HTTP API over HTTPS
// with health checks, Prometheus metrics and the dashboard, rate limits,
// settlement on a chain, TLS, and optionally sales to agents that pay over
// HTTP 402 ([X402Config], at /x402/) — built from a [Config] by [New], run by
// [Server.Start] and [Server.Stop], or by [Server.Run] until a context
// ends. It is the composition root of the reference server
// (go run ./examples/server), which is the flags and subcommands around
// it.
//
// Embed server when you want all of that as the reference server runs it:
// your products, served over the API the SDKs speak, with its keys,
// webhooks, dashboard and chains, in your own binary and beside your own
// code (read [Server.Engine] for in-process calls). Every field of Config
// but Products defaults to the reference server's behaviour.
//
// Embed the engine alone ([settleflow.New], with a store from
// storage/sqlite or storage/postgres, a settler from settlement and a
// notifier of your own) when you serve requests your own way — your own
// HTTP API, a queue consumer, a batch job — or assemble the pieces
// differently: mount [httpapi] in your router, deliver events yourself.
//
// # Contexts
//
// One meaning throughout: New's and Start's ctx bound building and
// starting only — ending it later stops nothing; Stop's ctx bounds the
// graceful shutdown, and when it ends, work in flight is cut short and
// taken up again at the next start, nothing acknowledged lost. Run's ctx
// is the server's lifetime.
package server
