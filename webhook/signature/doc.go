// Package signature signs and verifies settleflow's webhook deliveries. It
// is the receiving side of package webhook, and like package wire it
// imports nothing outside the standard library: a webhook receiver needs
// only these two.
//
// Every delivery carries two signatures over the exact bytes of the body:
//
//	service-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, t + "." + body)>
//	webhook-id:        <event id>
//	webhook-timestamp: <unix seconds>
//	webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + t + "." + body)>
//
// where key is the base64-decoded part of the endpoint's secret after
// "whsec_" (see [Key]). The first header's name is the service's short name
// followed by "-signature" ([HeaderName], [DefaultHeader]); the webhook-*
// headers follow the Standard Webhooks specification.
//
// A receiver verifies the first header and reads the event with
// [ConstructEvent] (or checks the Standard Webhooks headers with
// [VerifyStandard]), answers 400 on a *[VerificationError], and dedupes on
// the event id: delivery is at least once.
package signature
