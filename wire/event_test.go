package wire_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/settleflow/settleflow/wire"
)

// TestEventDataForms: a workflow event names its customer beside the
// workflow, the customer.* events keep their own form (each its own
// object), and every form reads back to the same bytes.
func TestEventDataForms(t *testing.T) {
	availableAt := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		data wire.EventData
		want []string // in the JSON
		not  []string // not in the JSON
	}{
		{"workflow", wire.EventData{WorkflowID: "wf_1", CustomerID: "cus_a", Status: wire.Settled},
			[]string{`"workflowId":"wf_1"`, `"customerId":"cus_a"`, `"status":"Settled"`}, []string{`"deposit"`}},
		{"workflow recorded before the customer", wire.EventData{WorkflowID: "wf_1", Status: wire.Settled},
			[]string{`"workflowId":"wf_1"`}, []string{`"customerId"`}},
		{"customer.funded", wire.EventData{CustomerID: "cus_a", Deposit: &wire.DepositEvent{TxHash: "0x1"}},
			[]string{`"customerId":"cus_a"`, `"deposit"`}, []string{`"workflowId"`, `"status"`, `"owner"`, `"withdrawal"`}},
		{"customer.owner_set", wire.EventData{CustomerID: "cus_a", Owner: &wire.OwnerSetEvent{Address: "0xAb", TxHash: "0x2", BlockNumber: 7}},
			[]string{`"customerId":"cus_a"`, `"owner":{"address":"0xAb","txHash":"0x2","blockNumber":7}`, `"balance":null`},
			[]string{`"workflowId"`, `"deposit"`, `"withdrawal"`}},
		{"customer.withdrawal_requested", wire.EventData{CustomerID: "cus_a", Withdrawal: &wire.WithdrawalRequestEvent{
			Amount: wire.Money{Amount: 250, Currency: "usd"}, AvailableAt: &availableAt, TxHash: "0x3", BlockNumber: 8}},
			[]string{`"customerId":"cus_a"`, `"withdrawal":{"amount":{"amount":250,"currency":"usd"},"availableAt":"2026-12-01T00:00:00Z","txHash":"0x3","blockNumber":8}`},
			[]string{`"workflowId"`, `"deposit"`, `"owner"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(string(b), n) {
					t.Errorf("%s has %s", b, n)
				}
			}
			var back wire.EventData
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.WorkflowID != tc.data.WorkflowID || back.CustomerID != tc.data.CustomerID || back.Status != tc.data.Status {
				t.Errorf("read back %+v, want %+v", back, tc.data)
			}
			if again, _ := json.Marshal(back); string(again) != string(b) {
				t.Errorf("read back and written again: %s, want %s", again, b)
			}
		})
	}
}
