// Package webhook signs, delivers and verifies settleflow's webhooks.
//
// A [Service] keeps webhook endpoints per environment, each with its own
// whsec_ secret, in tables prefixed webhook_ of the engine's database. It
// implements [settleflow.Notifier]: Notify durably records one delivery per
// enabled endpoint of each event's environment, and the deliverer started by
// [Service.Start] POSTs each event at least once, signed, retrying failures on
// a schedule that spans about three days.
//
// Every delivery carries two signatures over the exact bytes of the body:
//
//	service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, t + "." + body)>
//	webhook-id:        <event id>
//	webhook-timestamp: <unix seconds>
//	webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + t + "." + body)>
//
// where key is the base64-decoded part of the secret after "whsec_". During a
// secret rotation both secrets sign, so both headers carry one signature per
// valid secret. The first header name is configurable (see
// [Config.ShortName]); the webhook-* headers follow the Standard Webhooks
// specification, so any Standard Webhooks library verifies deliveries too.
//
// Endpoint URLs follow a policy against server-side request forgery, checked
// at registration and again on every attempt, down to each address the
// deliverer connects to: live endpoints must be https and resolve to public
// addresses only; test endpoints may be http and local unless
// [Config.StrictTestURLs]; URLs with credentials are refused. Show URLs
// through [RedactURL].
//
// Receivers verify the first header with [ConstructEvent] (or the Standard
// Webhooks headers with [VerifyStandard]) and dedupe on the event id, which is
// also the webhook-id: delivery is at least once. Verification and signing
// live in package [github.com/settleflow/settleflow/webhook/signature], which
// depends on nothing outside the standard library and package wire: a
// receiver imports that one rather than this package, whose delivery side
// needs a database. The names here forward to it.
package webhook
