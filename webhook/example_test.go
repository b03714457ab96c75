package webhook_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/settleflow/settleflow/webhook"
)

// A receiver verifies each delivery against the raw body and its endpoint
// secret, and answers 400 when it does not verify.
func ExampleConstructEvent() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"evt_01JD3Q6Y6F8Q2W9T4M5N7P8R0S","object":"event","type":"workflow.completed",` +
		`"livemode":false,"createdAt":"2026-11-21T10:00:00Z","data":{"workflowId":"wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S",` +
		`"status":"Settled","quoted":{"amount":1250,"currency":"usd"},"margin":{"target":0.3,"achieved":0.2875}}}`)

	// What the sender puts in the service-signature header.
	header, _ := webhook.Sign(time.Now(), body, secret)

	event, err := webhook.ConstructEvent(body, header, secret)
	if err != nil {
		fmt.Println("400:", err)
		return
	}
	fmt.Println(event.Type, event.Data.WorkflowID, event.Data.Margin.Achieved)

	// A tampered body does not verify.
	_, err = webhook.ConstructEvent(append(body, ' '), header, secret)
	var sve *webhook.SignatureVerificationError
	if errors.As(err, &sve) {
		fmt.Println("rejected:", sve.Reason)
	}
	// Output:
	// workflow.completed wf_01JD3Q6Y6F8Q2W9T4M5N7P8R0S 0.2875
	// rejected: no_matching_signature
}
