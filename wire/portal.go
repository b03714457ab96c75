package wire

import "time"

// PortalSession is a one-time sign-in link to the customer portal: the wire
// object "portal_session" answered by POST
// /v1/customers/{customerId}/portal_sessions. Only the answer holds the
// link: the server keeps a hash of its token.
type PortalSession struct {
	Object     string `json:"object"`
	ID         string `json:"id"`
	CustomerID string `json:"customerId"`
	Livemode   bool   `json:"livemode"`
	// URL is the one-time link to send the customer to: it opens a
	// portal session for this customer and environment, once, before
	// ExpiresAt.
	URL string `json:"url"`
	// ExpiresAt is when the link stops working, if it was not used.
	ExpiresAt time.Time `json:"expiresAt"`
}
