// Package webhook signs, delivers and verifies settleflow's webhooks.
//
// A [Service] keeps webhook endpoints per environment, each with its own
// whsec_ secret, in tables prefixed webhook_ of the engine's database. It
// implements [settleflow.Notifier]: Notify durably records one delivery per
// enabled endpoint of each event's environment, and the deliverer started by
// [Service.Start] POSTs each event at least once, signed, retrying failures on
// a schedule that spans about three days. It is also a
// [storage.TxNotifier]: when it shares the engine's database, the workflow
// store (storage/bunstore) has it record a workflow update's deliveries in
// that update's own transaction, so the event is written once, already
// dispatched, and commits together with its deliveries.
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
// Deliveries are taken from customers in turn. Each endpoint keeps a fair
// queue: a delivery's lane is the customer its event names (a workflow.*
// event's workflow's, a customer.funded event's, a refund's), and its place in the endpoint's line
// is given when Notify records it: right after its lane's last delivery, or,
// if that was long ago, right after the head of the line. So a customer with
// 20,000 deliveries queued takes every other turn, not the next 20,000, and
// another customer's next event is among the next deliveries sent. Events
// that name no customer (workflow.* events recorded before they carried the
// customer, a refund event read back from the outbox) share one lane of their
// own, served in turn with the customers'. Within a lane
// each endpoint is sent deliveries in the order they were recorded (with
// several attempts in flight per endpoint, requests may still overlap). A
// failed attempt keeps its delivery's place: it waits out its retry delay out
// of line and is sent at that place, ahead of the later deliveries, once due.
// A resent delivery ([Service.RetryDelivery]) keeps its place too: it goes
// first.
//
// The deliverer claims due deliveries under a lease, a few per endpoint
// ahead of those in flight. In the process whose deliverer runs, Notify may
// record a delivery already claimed instead (leased to that process and
// queued for sending once committed, which saves the claim's write), under
// the claim's own bounds and only where that cannot put it ahead of anyone:
// within the deliverer's budget and the endpoint's room (twice its
// concurrency, as for a claim, or, once its receiver has answered, as many
// as its concurrency sends within about a second at the latency seen, if
// that is more, so that a burst recorded at once costs no claim); only
// when its first attempt is due at once; only for an endpoint not known to have a
// backlog (its last claim probe found as many deliveries as it had room for,
// or left some of those it found, or deliveries were recorded for it
// unleased since); and only if, read in the recording transaction, the
// endpoint has no delivery due and unleased, whether a first attempt waiting
// in line or a retry that has come due. The others are recorded unleased
// and take their place in line. A delivery recorded claimed has its place in
// line like any other: if its process dies before sending it, its lease runs
// out and it is claimed in its place, by this or another process. Each
// endpoint's queued deliveries, claimed or recorded claimed, go out in line
// order, and an attempt starts only while its delivery's lease outlasts it
// by a margin: a queued delivery that waited longer (its receiver slowed
// down) is released with its endpoint's later ones, back to their place in
// line, and claimed again.
//
// Each attempt is recorded: a delivery's latest attempt on its own row (the
// delivery's last_* columns), the ones before it in webhook_attempts, so a
// delivery that succeeds at once costs no attempt row; [Service.ListAttempts]
// returns them all, in order.
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
