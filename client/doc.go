// Package client is the official Go client of the settleflow HTTP API.
//
//	c := client.New(os.Getenv("SETTLEFLOW_API_KEY"),
//		client.WithBaseURL("https://127.0.0.1:8443"),
//		client.WithRootCAs(pool), // the reference server's self-signed certificate
//	)
//	wf, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{
//		Product:    "ticket-triage",
//		CustomerID: "cus_123",
//		Payload:    map[string]any{"ticketId": "T-42"},
//	})
//
// The client's services mirror the API's resources: [Client.Workflows]
// (Create, Fetch, List, ListAutoPaging, Cancel), [Client.Quotes] (Create),
// [Client.Products] (List, Fetch), [Client.Events] (List, Fetch,
// ListAutoPaging), [Client.Customers] (Fetch), [Client.Refunds] (Create,
// Fetch, List, ListAutoPaging), [Client.Margins] (Report),
// [Client.TestHelpers] (FundCustomer, test keys only) and [Client.OpenAPI].
// Objects are the types of package
// [github.com/settleflow/settleflow/wire], the wire contract, which like
// this package depends on nothing outside the standard library (the engine
// re-exports each under the same name: settleflow.Workflow is
// wire.Workflow): [wire.Workflow], [wire.Event], [wire.ProductInfo],
// [wire.Customer], [wire.Refund], [wire.MarginReport],
// with money as integer minor units ([wire.Money]) and margins as
// basis points ([wire.BasisPoints]: 0.2875 on the wire is 2875). A
// Workflow's fields that are not on the wire (Sequence, ActualCost,
// Attempts) stay zero.
//
// # Outcome pricing
//
// A product's pricing model ([wire.Pricing]: fixed, capped,
// success_fee or hybrid) decides how much of the quote a workflow is
// charged once it ran. [WorkflowCreateParams] and [QuoteCreateParams] take
// optional SuccessCriteria, a criteria tree (see package
// [github.com/settleflow/settleflow/criteria]) that replaces the product's
// default, and MarginFloor, a least margin that may raise the product's:
//
//	floor := wire.BasisPoints(2500) // 0.25 on the wire
//	wf, err := c.Workflows.Create(ctx, &client.WorkflowCreateParams{
//		Product: "ticket-triage", CustomerID: "cus_123", Payload: payload,
//		SuccessCriteria: json.RawMessage(`{"type": "exact", "path": "/queue", "value": "billing"}`),
//		MarginFloor:     &floor,
//	})
//
// A [Quote] shows the Pricing, SuccessCriteria and MarginFloor in force and
// the Budget the floor leaves; a floor the quote does not keep is an
// [*InvalidRequestError] with Code margin_below_floor. Once it ran, a
// workflow has its Charged amount (at most Quoted; 0 for a success fee
// whose criteria did not hold), its Cost with items by category, and the
// criteria's Outcome with a trace of each criterion's verdict; an execution
// that spent past its budget fails with margin_floor_exceeded.
//
// # Lists
//
// List returns one page, newest first ([Page]: Data, HasMore), paged with
// StartingAfter and EndingBefore. ListAutoPaging returns an iterator over
// every item, fetching pages as the loop goes:
//
//	for wf, err := range c.Workflows.ListAutoPaging(ctx, &client.WorkflowListParams{Status: wire.Settled}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(wf.ID, wf.Quoted.Amount)
//	}
//
// # Errors
//
// An answer of the API that is an error is an [*APIError] (Status, Type,
// Code, Param, Message, RequestID, Header), returned wrapped in its
// category, which errors.As tells apart: [*AuthenticationError] (401),
// [*PaymentError] (402 insufficient_funds, with the amounts),
// [*PermissionError] (403), [*RateLimitError] (429, with RetryAfter),
// [*IdempotencyError] (409 idempotency_key_reused), [*InvalidRequestError]
// (other 4xx) and [*ServerError] (5xx). A request that got no answer is a
// [*ConnectionError]. A canceled context is returned as such
// (errors.Is(err, context.Canceled)).
//
// # Retries and idempotency
//
// A call is retried, up to [WithMaxRetries] times (default 2), when it got
// no answer or a 408, 429 or 5xx: after a random wait of up to 0.5 s, 1 s,
// 2 s, … (exponential backoff with full jitter, at most 8 s), or, when the
// answer says how long to wait (Retry-After, or X-RateLimit-Reset on a 429),
// after that long plus a little jitter. A server asking for more than a
// minute, or a wait the context's deadline does not leave room for, ends the
// call with the error at once. Canceling the context ends the wait.
//
// Every POST carries an Idempotency-Key, the caller's
// ([WorkflowCreateParams].IdempotencyKey) or one generated from crypto/rand,
// and the same one on each retry: a create whose answer was lost is
// answered again by the server rather than executed twice, so a call makes
// at most one workflow. (Unlike the Stripe clients this one retries 429s
// too; the key makes it safe.) The one exception is
// [TestHelperService.FundCustomer]: the server does not store its key, and
// every call deposits, so it is sent once.
//
// # Security
//
// The client speaks HTTPS (TLS 1.2 or later); plain http is accepted only
// for a loopback base URL, and its own HTTP client follows no redirect. The API key is sent only
// in the Authorization header: it never appears in an error, in the output
// of fmt (any verb) or log/slog, or in what [WithLogger] logs; a Client
// prints as settleflow.Client{baseURL: …, apiKey: sk_test_…a1b2}.
//
// # Webhooks
//
// Deliveries are verified with the package
// [github.com/settleflow/settleflow/webhook/signature], where the server's
// signing code lives too, and which depends on nothing outside the standard
// library and package wire: signature.ConstructEvent takes the raw body, the
// service-signature header and the endpoint's whsec_ secret, and returns the
// [wire.Event] or a *signature.VerificationError whose Reason says why not
// (no_matching_signature, timestamp_outside_tolerance, …);
// signature.VerifyStandard checks the Standard Webhooks headers instead. See
// the webhook receiver example.
package client
