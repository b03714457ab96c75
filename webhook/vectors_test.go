package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow"
)

// The webhook test vectors shared by this package and the three client
// libraries (sdk/node, sdk/python, client): testdata/webhooks.json at the
// repository's root. `go test ./webhook -run TestVectors -update-vectors`
// writes them afresh (new secrets, same cases); every verifier must then
// agree with the file as committed.
var updateVectors = flag.Bool("update-vectors", false, "rewrite ../testdata/webhooks.json")

const vectorsPath = "../testdata/webhooks.json"

func ptrInt64(v int64) *int64 { return &v }

// vectorFile is the file's layout; its description field says how to use it.
type vectorFile struct {
	Description     string   `json:"description"`
	SignatureHeader string   `json:"signatureHeader"`
	Tolerance       int64    `json:"tolerance"`
	Vectors         []vector `json:"vectors"`
}

type vector struct {
	Name string `json:"name"`
	// Scheme is "service" (verify headers[signatureHeader] as
	// ConstructEvent does) or "standard" (verify webhook-id,
	// webhook-timestamp and webhook-signature).
	Scheme  string            `json:"scheme"`
	Secret  string            `json:"secret"`
	Now     int64             `json:"now"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
	Expect  vectorExpect      `json:"expect"`
}

type vectorExpect struct {
	OK bool `json:"ok"`
	// Reason is set when OK is false: one of the Reason constants.
	Reason Reason `json:"reason,omitempty"`
	// For OK vectors of the service scheme: what the constructed event holds.
	EventID          string `json:"eventId,omitempty"`
	Type             string `json:"type,omitempty"`
	WorkflowID       string `json:"workflowId,omitempty"`
	MarginAchieved   *int64 `json:"marginAchieved,omitempty"`
	QuotedAmount     int64  `json:"quotedAmount,omitempty"`
	FailureCode      string `json:"failureCode,omitempty"`
	FailureMessageIs string `json:"failureMessage,omitempty"`
	// For refund.* events: the refund of data.refund.
	RefundID     string `json:"refundId,omitempty"`
	RefundAmount int64  `json:"refundAmount,omitempty"`
	RefundStatus string `json:"refundStatus,omitempty"`
	// For customer.funded: data.customerId, data.deposit.amount.amount and
	// data.balance.available.
	CustomerID       string `json:"customerId,omitempty"`
	DepositAmount    int64  `json:"depositAmount,omitempty"`
	BalanceAvailable int64  `json:"balanceAvailable,omitempty"`
	// For customer.owner_set: data.owner.address; for
	// customer.withdrawal_requested: data.withdrawal.amount.amount (with
	// customerId and balanceAvailable).
	OwnerAddress     string `json:"ownerAddress,omitempty"`
	WithdrawalAmount int64  `json:"withdrawalAmount,omitempty"`
}

func TestVectors(t *testing.T) {
	if *updateVectors {
		writeVectors(t)
	}
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) < 10 {
		t.Fatalf("only %d vectors", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			opts := VerifyOptions{Tolerance: time.Duration(f.Tolerance) * time.Second, Now: func() time.Time { return time.Unix(v.Now, 0) }}
			var err error
			switch v.Scheme {
			case "service":
				var ev struct {
					ID   string `json:"id"`
					Type string `json:"type"`
				}
				got, cerr := ConstructEventWithOptions([]byte(v.Body), v.Headers[f.SignatureHeader], v.Secret, opts)
				err = cerr
				if cerr == nil {
					ev.ID, ev.Type = got.ID, string(got.Type)
					if ev.ID != v.Expect.EventID || ev.Type != v.Expect.Type || got.Data.WorkflowID != v.Expect.WorkflowID {
						t.Errorf("event %s %s %s, want %s %s %s", ev.ID, ev.Type, got.Data.WorkflowID, v.Expect.EventID, v.Expect.Type, v.Expect.WorkflowID)
					}
					if got.Data.Quoted.Amount != v.Expect.QuotedAmount {
						t.Errorf("quoted %d, want %d", got.Data.Quoted.Amount, v.Expect.QuotedAmount)
					}
					switch a := got.Data.Margin.Achieved; {
					case (a == nil) != (v.Expect.MarginAchieved == nil):
						t.Errorf("margin achieved %v, want %v", a, v.Expect.MarginAchieved)
					case a != nil && int64(*a) != *v.Expect.MarginAchieved:
						t.Errorf("margin achieved %d, want %d", *a, *v.Expect.MarginAchieved)
					}
					switch r := got.Data.Refund; {
					case (r == nil) != (v.Expect.RefundID == ""):
						t.Errorf("refund %+v, want %q", r, v.Expect.RefundID)
					case r != nil && (r.ID != v.Expect.RefundID || r.Amount != v.Expect.RefundAmount || string(r.Status) != v.Expect.RefundStatus || r.WorkflowID != v.Expect.WorkflowID):
						t.Errorf("refund %+v, want %s %d %s of %s", r, v.Expect.RefundID, v.Expect.RefundAmount, v.Expect.RefundStatus, v.Expect.WorkflowID)
					}
					if got.Data.CustomerID != v.Expect.CustomerID {
						t.Errorf("customer %q, want %q", got.Data.CustomerID, v.Expect.CustomerID)
					}
					if v.Expect.CustomerID != "" && (got.Data.Balance == nil || got.Data.Balance.Available != v.Expect.BalanceAvailable) {
						t.Errorf("balance %+v, want %d available", got.Data.Balance, v.Expect.BalanceAvailable)
					}
					if d := got.Data.Deposit; (d == nil) != (v.Expect.DepositAmount == 0) || d != nil && d.Amount.Amount != v.Expect.DepositAmount {
						t.Errorf("deposit %+v, want %d", d, v.Expect.DepositAmount)
					}
					if o := got.Data.Owner; (o == nil) != (v.Expect.OwnerAddress == "") || o != nil && o.Address != v.Expect.OwnerAddress {
						t.Errorf("owner %+v, want %q", o, v.Expect.OwnerAddress)
					}
					if w := got.Data.Withdrawal; (w == nil) != (v.Expect.WithdrawalAmount == 0) || w != nil && w.Amount.Amount != v.Expect.WithdrawalAmount {
						t.Errorf("withdrawal %+v, want %d", w, v.Expect.WithdrawalAmount)
					}
				}
			case "standard":
				h := http.Header{}
				for k, val := range v.Headers {
					h.Set(k, val)
				}
				err = VerifyStandardWithOptions([]byte(v.Body), h, v.Secret, opts)
			default:
				t.Fatalf("scheme %q", v.Scheme)
			}
			if v.Expect.OK {
				if err != nil {
					t.Fatalf("want ok, got %v", err)
				}
				return
			}
			var sve *SignatureVerificationError
			if !errors.As(err, &sve) {
				t.Fatalf("want %s, got %v", v.Expect.Reason, err)
			}
			if sve.Reason != v.Expect.Reason {
				t.Fatalf("reason %s, want %s", sve.Reason, v.Expect.Reason)
			}
		})
	}
}

// writeVectors builds the cases with this package's signing code (which the
// independent verifier in helpers_test.go and the standardwebhooks interop
// test check) and writes them.
func writeVectors(t *testing.T) {
	secret, _ := NewSecret()
	rotated, _ := NewSecret()
	other, _ := NewSecret()
	const now = int64(1795478400) // 2026-11-24T00:00:00Z
	at := time.Unix(now, 0)
	bp := settleflow.BasisPoints(2875)
	completed := mustJSON(settleflow.Event{ID: "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", Object: "event", Type: settleflow.EventWorkflowCompleted,
		CreatedAt: at.Add(123456 * time.Microsecond).UTC(), Data: settleflow.EventData{
			WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J", Status: "Settled", Quoted: settleflow.Money{Amount: 358, Currency: "usd"},
			Margin: settleflow.Margin{Target: 3000, Achieved: &bp}, Result: json.RawMessage(`{"priority":"high","queue":"billing"}`)}})
	failed := mustJSON(settleflow.Event{ID: "evt_01KAQ0Q4AB6G1Q2W3E4R5T6Y7U", Object: "event", Type: settleflow.EventWorkflowFailed, Livemode: true,
		CreatedAt: at.UTC(), Data: settleflow.EventData{
			WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1K", Status: "Failed", Quoted: settleflow.Money{Amount: 1250, Currency: "usd"},
			Margin: settleflow.Margin{Target: 3000}, Failure: &settleflow.Failure{Code: settleflow.FailureExecutionFailed, Message: "ticket \"T-42\" — not found ✓"}}})
	// The events of customer funds and refunds: their data has other fields
	// than a workflow's, and every verifier returns them too.
	refunded := func(id, typ string, st settleflow.RefundStatus, amount int64, s *settleflow.Settlement, f *settleflow.Failure) []byte {
		return mustJSON(settleflow.Event{ID: id, Object: "event", Type: settleflow.EventType(typ), CreatedAt: at.UTC(), Data: settleflow.EventData{
			WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J", Refund: &settleflow.Refund{ID: "re_01KAQ0Q5CD6G1Q2W3E4R5T6Y7V", Object: "refund",
				WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J", Amount: amount, Currency: "usd", Reason: "duplicate — «ticket»", Status: st,
				Settlement: s, Failure: f, CreatedAt: at.Add(-time.Minute).UTC(), UpdatedAt: at.UTC()}}})
	}
	refundSucceeded := refunded("evt_01KAQ0Q5EF6G1Q2W3E4R5T6Y7W", "refund.succeeded", settleflow.RefundSucceeded, 100,
		&settleflow.Settlement{ChainID: 84532, Network: "base-sepolia", TxHash: "0x" + strings.Repeat("ab", 32), BlockNumber: 4242, Confirmations: 3}, nil)
	refundFailed := refunded("evt_01KAQ0Q5GH6G1Q2W3E4R5T6Y7X", "refund.failed", settleflow.RefundFailed, 258, nil,
		&settleflow.Failure{Code: settleflow.FailureSettlementReverted, Message: "the refund transaction reverted"})
	customerFunded := mustJSON(settleflow.Event{ID: "evt_01KAQ0Q5JK6G1Q2W3E4R5T6Y7Y", Object: "event", Type: settleflow.EventCustomerFunded,
		CreatedAt: at.UTC(), Data: settleflow.EventData{CustomerID: "cus_123",
			Deposit: &settleflow.DepositEvent{Amount: settleflow.Money{Amount: 50000, Currency: "usd"}, TxHash: "0x" + strings.Repeat("cd", 32), BlockNumber: 4243},
			Balance: &settleflow.Balance{OnChain: 150000, Reserved: 358, PendingWithdrawal: 0, Available: 149642, Currency: "usd"}}})
	ownerSet := mustJSON(settleflow.Event{ID: "evt_01KAQ0Q5NP6G1Q2W3E4R5T6Y80", Object: "event", Type: settleflow.EventCustomerOwnerSet,
		CreatedAt: at.UTC(), Data: settleflow.EventData{CustomerID: "cus_123",
			Owner:   &settleflow.OwnerSetEvent{Address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", TxHash: "0x" + strings.Repeat("ef", 32), BlockNumber: 4244},
			Balance: &settleflow.Balance{OnChain: 150000, Reserved: 358, PendingWithdrawal: 0, Available: 149642, Currency: "usd"}}})
	due := at.Add(24 * time.Hour).UTC()
	withdrawalRequested := mustJSON(settleflow.Event{ID: "evt_01KAQ0Q5QR6G1Q2W3E4R5T6Y81", Object: "event", Type: settleflow.EventCustomerWithdrawalRequested,
		CreatedAt: at.UTC(), Data: settleflow.EventData{CustomerID: "cus_123",
			Withdrawal: &settleflow.WithdrawalRequestEvent{Amount: settleflow.Money{Amount: 1234, Currency: "usd"}, AvailableAt: &due,
				TxHash: "0x" + strings.Repeat("12", 32), BlockNumber: 4245},
			Balance: &settleflow.Balance{OnChain: 150000, Reserved: 358, PendingWithdrawal: 1234, Available: 148408, Currency: "usd"}}})
	// An outcome-priced workflow that spent past its margin floor's budget:
	// its data carries pricing, the cost breakdown and the outcome.
	flooredAt := settleflow.BasisPoints(-1200)
	floored := mustJSON(settleflow.Event{ID: "evt_01KAQ0Q5LM6G1Q2W3E4R5T6Y7Z", Object: "event", Type: settleflow.EventWorkflowMarginBelowFloor,
		CreatedAt: at.UTC(), Data: settleflow.EventData{
			WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1L", Status: "Settling", Quoted: settleflow.Money{Amount: 1000, Currency: "usd"},
			Margin: settleflow.Margin{Target: 3000, Achieved: &flooredAt}, Result: json.RawMessage(`{"status":"resolved"}`),
			Pricing: &settleflow.Pricing{Model: settleflow.PricingSuccessFee}, Charged: &settleflow.Money{Amount: 1000, Currency: "usd"},
			Cost: &settleflow.Cost{Amount: 1120, Currency: "usd", Items: []settleflow.CostItem{
				{Category: settleflow.CostModel, Provider: "llm", Units: 48000, Amount: 960},
				{Category: settleflow.CostHuman, Provider: "reviewer — «night»", Units: 1, Amount: 160}}},
			Outcome: &settleflow.Outcome{Success: true, Trace: []settleflow.OutcomeStep{
				{Node: "", Path: "/status", Type: "exact", Matched: true, Reason: "/status is \"resolved\""}}}}})
	achieved := int64(2875)
	okCompleted := vectorExpect{OK: true, EventID: "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", Type: "workflow.completed", WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J", MarginAchieved: &achieved, QuotedAmount: 358}
	fail := func(r Reason) vectorExpect { return vectorExpect{Reason: r} }
	svc := func(t time.Time, body []byte, secrets ...string) map[string]string {
		v, err := Sign(t, body, secrets...)
		if err != nil {
			panic(err)
		}
		return map[string]string{DefaultSignatureHeader: v}
	}
	std := func(id string, t time.Time, body []byte, secrets ...string) map[string]string {
		v, err := SignStandard(id, t, body, secrets...)
		if err != nil {
			panic(err)
		}
		return map[string]string{HeaderWebhookID: id, HeaderWebhookTimestamp: itoa(t.Unix()), HeaderWebhookSignature: v}
	}
	tampered := bytes.Replace(completed, []byte(`"amount":358`), []byte(`"amount":359`), 1)
	// Every verifier tolerates an event without createdAt (the signature proved
	// it authentic, and receivers dedupe on id) and refuses one whose createdAt
	// is not an RFC 3339 timestamp.
	noCreatedAt := bytes.Replace(completed, []byte(`"createdAt":"2026-11-24T00:00:00.123456Z",`), nil, 1)
	badCreatedAt := bytes.Replace(completed, []byte(`"createdAt":"2026-11-24T00:00:00.123456Z"`), []byte(`"createdAt":"soon"`), 1)
	reformatted := bytes.Replace(completed, []byte(`,"object"`), []byte(`, "object"`), 1)
	fs := []vector{
		{Name: "valid", Scheme: "service", Secret: secret, Now: now, Body: string(completed), Headers: svc(at, completed, secret), Expect: okCompleted},
		{Name: "valid failed event with non-ASCII message", Scheme: "service", Secret: secret, Now: now, Body: string(failed), Headers: svc(at, failed, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q4AB6G1Q2W3E4R5T6Y7U", Type: "workflow.failed", WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1K", QuotedAmount: 1250}},
		{Name: "valid refund.succeeded event", Scheme: "service", Secret: secret, Now: now, Body: string(refundSucceeded), Headers: svc(at, refundSucceeded, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q5EF6G1Q2W3E4R5T6Y7W", Type: "refund.succeeded", WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J",
				RefundID: "re_01KAQ0Q5CD6G1Q2W3E4R5T6Y7V", RefundAmount: 100, RefundStatus: "Succeeded"}},
		{Name: "valid refund.failed event", Scheme: "service", Secret: secret, Now: now, Body: string(refundFailed), Headers: svc(at, refundFailed, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q5GH6G1Q2W3E4R5T6Y7X", Type: "refund.failed", WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1J",
				RefundID: "re_01KAQ0Q5CD6G1Q2W3E4R5T6Y7V", RefundAmount: 258, RefundStatus: "Failed"}},
		{Name: "valid customer.funded event", Scheme: "service", Secret: secret, Now: now, Body: string(customerFunded), Headers: svc(at, customerFunded, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q5JK6G1Q2W3E4R5T6Y7Y", Type: "customer.funded", CustomerID: "cus_123", DepositAmount: 50000, BalanceAvailable: 149642}},
		{Name: "valid customer.owner_set event", Scheme: "service", Secret: secret, Now: now, Body: string(ownerSet), Headers: svc(at, ownerSet, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q5NP6G1Q2W3E4R5T6Y80", Type: "customer.owner_set", CustomerID: "cus_123",
				OwnerAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", BalanceAvailable: 149642}},
		{Name: "valid customer.withdrawal_requested event", Scheme: "service", Secret: secret, Now: now, Body: string(withdrawalRequested),
			Headers: svc(at, withdrawalRequested, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q5QR6G1Q2W3E4R5T6Y81", Type: "customer.withdrawal_requested", CustomerID: "cus_123",
				WithdrawalAmount: 1234, BalanceAvailable: 148408}},
		{Name: "valid workflow.margin_below_floor event", Scheme: "service", Secret: secret, Now: now, Body: string(floored), Headers: svc(at, floored, secret),
			Expect: vectorExpect{OK: true, EventID: "evt_01KAQ0Q5LM6G1Q2W3E4R5T6Y7Z", Type: "workflow.margin_below_floor", WorkflowID: "wf_01KAQ0Q2ZZ8X7C6V5B4N3M2K1L",
				MarginAchieved: ptrInt64(-1200), QuotedAmount: 1000}},
		{Name: "standard: valid customer.funded event", Scheme: "standard", Secret: secret, Now: now, Body: string(customerFunded),
			Headers: std("evt_01KAQ0Q5JK6G1Q2W3E4R5T6Y7Y", at, customerFunded, secret), Expect: vectorExpect{OK: true}},
		{Name: "tampered body", Scheme: "service", Secret: secret, Now: now, Body: string(tampered), Headers: svc(at, completed, secret), Expect: fail(ReasonNoMatchingSignature)},
		{Name: "body re-serialized (whitespace added)", Scheme: "service", Secret: secret, Now: now, Body: string(reformatted), Headers: svc(at, completed, secret), Expect: fail(ReasonNoMatchingSignature)},
		{Name: "wrong secret", Scheme: "service", Secret: other, Now: now, Body: string(completed), Headers: svc(at, completed, secret), Expect: fail(ReasonNoMatchingSignature)},
		{Name: "timestamp 301s old", Scheme: "service", Secret: secret, Now: now + 301, Body: string(completed), Headers: svc(at, completed, secret), Expect: fail(ReasonTimestampOutsideTolerance)},
		{Name: "timestamp 300s old (at the tolerance)", Scheme: "service", Secret: secret, Now: now + 300, Body: string(completed), Headers: svc(at, completed, secret), Expect: okCompleted},
		{Name: "timestamp 301s in the future", Scheme: "service", Secret: secret, Now: now - 301, Body: string(completed), Headers: svc(at, completed, secret), Expect: fail(ReasonTimestampOutsideTolerance)},
		{Name: "rotation: old secret signs first", Scheme: "service", Secret: secret, Now: now, Body: string(completed), Headers: svc(at, completed, secret, rotated), Expect: okCompleted},
		{Name: "rotation: new secret signs second", Scheme: "service", Secret: rotated, Now: now, Body: string(completed), Headers: svc(at, completed, secret, rotated), Expect: okCompleted},
		{Name: "rotation: neither secret", Scheme: "service", Secret: other, Now: now, Body: string(completed), Headers: svc(at, completed, secret, rotated), Expect: fail(ReasonNoMatchingSignature)},
		{Name: "unknown scheme and a malformed v1 ignored beside a good v1", Scheme: "service", Secret: secret, Now: now, Body: string(completed),
			Headers: map[string]string{DefaultSignatureHeader: "t=" + itoa(now) + ",v0=abcd,v1=zz," + svc(at, completed, secret)[DefaultSignatureHeader][len("t=")+len(itoa(now))+1:]}, Expect: okCompleted},
		{Name: "no header", Scheme: "service", Secret: secret, Now: now, Body: string(completed), Headers: map[string]string{}, Expect: fail(ReasonMissingHeader)},
		{Name: "no timestamp", Scheme: "service", Secret: secret, Now: now, Body: string(completed),
			Headers: map[string]string{DefaultSignatureHeader: svc(at, completed, secret)[DefaultSignatureHeader][len("t=")+len(itoa(now))+1:]}, Expect: fail(ReasonMalformedHeader)},
		{Name: "timestamp not an integer", Scheme: "service", Secret: secret, Now: now, Body: string(completed),
			Headers: map[string]string{DefaultSignatureHeader: "t=soon,v1=" + "00"}, Expect: fail(ReasonMalformedHeader)},
		{Name: "two timestamps", Scheme: "service", Secret: secret, Now: now, Body: string(completed),
			Headers: map[string]string{DefaultSignatureHeader: "t=" + itoa(now) + "," + svc(at, completed, secret)[DefaultSignatureHeader]}, Expect: fail(ReasonMalformedHeader)},
		{Name: "no v1 signature", Scheme: "service", Secret: secret, Now: now, Body: string(completed),
			Headers: map[string]string{DefaultSignatureHeader: "t=" + itoa(now)}, Expect: fail(ReasonNoSignature)},
		{Name: "signed body is not an event", Scheme: "service", Secret: secret, Now: now, Body: `{"hello":"world"}`,
			Headers: svc(at, []byte(`{"hello":"world"}`), secret), Expect: fail(ReasonInvalidPayload)},
		{Name: "event without createdAt (tolerated)", Scheme: "service", Secret: secret, Now: now, Body: string(noCreatedAt),
			Headers: svc(at, noCreatedAt, secret), Expect: okCompleted},
		{Name: "createdAt not a timestamp", Scheme: "service", Secret: secret, Now: now, Body: string(badCreatedAt),
			Headers: svc(at, badCreatedAt, secret), Expect: fail(ReasonInvalidPayload)},
		{Name: "standard: valid", Scheme: "standard", Secret: secret, Now: now, Body: string(completed), Headers: std("evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", at, completed, secret), Expect: vectorExpect{OK: true}},
		{Name: "standard: rotation, two signatures", Scheme: "standard", Secret: rotated, Now: now, Body: string(completed), Headers: std("evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", at, completed, secret, rotated), Expect: vectorExpect{OK: true}},
		{Name: "standard: tampered body", Scheme: "standard", Secret: secret, Now: now, Body: string(tampered), Headers: std("evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", at, completed, secret), Expect: fail(ReasonNoMatchingSignature)},
		{Name: "standard: id changed", Scheme: "standard", Secret: secret, Now: now, Body: string(completed),
			Headers: func() map[string]string {
				h := std("evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", at, completed, secret)
				h[HeaderWebhookID] = "evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y8"
				return h
			}(), Expect: fail(ReasonNoMatchingSignature)},
		{Name: "standard: timestamp old", Scheme: "standard", Secret: secret, Now: now + 3600, Body: string(completed), Headers: std("evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", at, completed, secret), Expect: fail(ReasonTimestampOutsideTolerance)},
		{Name: "standard: missing webhook-id", Scheme: "standard", Secret: secret, Now: now, Body: string(completed),
			Headers: func() map[string]string {
				h := std("evt_01KAQ0Q3K9V6G1Q2W3E4R5T6Y7", at, completed, secret)
				delete(h, HeaderWebhookID)
				return h
			}(), Expect: fail(ReasonMissingHeader)},
	}
	f := vectorFile{
		Description: "Webhook signature test vectors shared by the Go webhook package and the Node.js, Python and Go clients. " +
			"Verify each vector with its secret as if the clock read `now` (unix seconds) and the tolerance were `tolerance` seconds. " +
			"Scheme \"service\": verify headers[signatureHeader] (t=<unix>,v1=<hex HMAC-SHA256(key, t + \".\" + body)>, one v1 per signing secret) and parse the body as an event; " +
			"scheme \"standard\": verify the Standard Webhooks headers (webhook-signature: space-separated v1,<base64 HMAC-SHA256(key, id + \".\" + t + \".\" + body)>). " +
			"The key is the base64 decoding of the secret after \"whsec_\". expect.ok says whether it verifies; if not, expect.reason names why " +
			"(missing_header, malformed_header, no_v1_signature, timestamp_outside_tolerance, no_matching_signature, invalid_payload). " +
			"marginAchieved is in basis points (0.2875 on the wire is 2875). quotedAmount and marginAchieved are a workflow.* event's; " +
			"refundId, refundAmount and refundStatus are data.refund's of a refund.* event; customerId, depositAmount and balanceAvailable " +
			"are data.customerId, data.deposit.amount.amount and data.balance.available of a customer.funded event; ownerAddress is data.owner.address of a customer.owner_set event and withdrawalAmount data.withdrawal.amount.amount of a customer.withdrawal_requested event. Regenerate with: go test ./webhook -run TestVectors -update-vectors",
		SignatureHeader: DefaultSignatureHeader,
		Tolerance:       int64(DefaultTolerance / time.Second),
		Vectors:         fs,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(vectorsPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vectorsPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
