package wire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/settleflow/settleflow/wire"
)

// TestEventDataForms: a workflow event names its customer beside the
// workflow, a customer.funded event keeps its own form, and both read back.
func TestEventDataForms(t *testing.T) {
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
			[]string{`"customerId":"cus_a"`, `"deposit"`}, []string{`"workflowId"`, `"status"`}},
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
		})
	}
}
