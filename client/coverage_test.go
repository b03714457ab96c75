package client_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/settleflow/settleflow/client"
)

// operations maps every operationId of the API to the method that calls it:
// the service (a field of client.Client, or "" for the Client itself) and
// the method's name. TestOperationCoverage fails when the served OpenAPI
// document has an operation missing here, or a method here is missing from
// the client.
var operations = map[string]struct{ service, method string }{
	"createWorkflow":      {"Workflows", "Create"},
	"fetchWorkflow":       {"Workflows", "Fetch"},
	"listWorkflows":       {"Workflows", "List"},
	"cancelWorkflow":      {"Workflows", "Cancel"},
	"createQuote":         {"Quotes", "Create"},
	"listProducts":        {"Products", "List"},
	"fetchProduct":        {"Products", "Fetch"},
	"listEvents":          {"Events", "List"},
	"fetchEvent":          {"Events", "Fetch"},
	"fetchCustomer":       {"Customers", "Fetch"},
	"createOwnerGrant":    {"Customers", "CreateOwnerGrant"},
	"setOwner":            {"Customers", "SetOwner"},
	"createPortalSession": {"Customers", "CreatePortalSession"},
	"createRefund":        {"Refunds", "Create"},
	"fetchRefund":         {"Refunds", "Fetch"},
	"listRefunds":         {"Refunds", "List"},
	"fundTestCustomer":    {"TestHelpers", "FundCustomer"},
	"reportMargins":       {"Margins", "Report"},
	"openAPI":             {"", "OpenAPI"},
	"claimTasks":          {"Tasks", "Claim"},
	"heartbeatTask":       {"Tasks", "Heartbeat"},
	"completeTask":        {"Tasks", "Complete"},
	"failTask":            {"Tasks", "Fail"},
}

func TestOperationCoverage(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	raw, err := c.OpenAPI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for path, ops := range doc.Paths {
		for verb, op := range ops {
			if op.OperationID == "" {
				continue
			}
			ids = append(ids, op.OperationID)
			m, ok := operations[op.OperationID]
			if !ok {
				t.Errorf("%s %s (operation %s) has no method in the Go client", verb, path, op.OperationID)
				continue
			}
			recv := reflect.ValueOf(c)
			if m.service != "" {
				recv = recv.Elem().FieldByName(m.service)
				if !recv.IsValid() || recv.IsNil() {
					t.Errorf("operation %s: client.Client has no service %s", op.OperationID, m.service)
					continue
				}
			}
			method := recv.MethodByName(m.method)
			if !method.IsValid() {
				t.Errorf("operation %s: %s has no method %s", op.OperationID, recv.Type(), m.method)
				continue
			}
			// Callable: takes a context first and returns an error last.
			mt := method.Type()
			ctxType, errType := reflect.TypeFor[context.Context](), reflect.TypeFor[error]()
			if mt.NumIn() < 1 || mt.In(0) != ctxType || mt.NumOut() < 1 || mt.Out(mt.NumOut()-1) != errType {
				t.Errorf("operation %s: %s.%s has signature %s", op.OperationID, recv.Type(), m.method, mt)
			}
		}
	}
	if len(ids) < 10 || doc.OpenAPI == "" {
		t.Fatalf("the document has operations %v", ids)
	}
	for id := range operations {
		if !slices.Contains(ids, id) {
			t.Errorf("operation %s is in the table but not in the served document", id)
		}
	}
}

// The compiler checks the table's methods too.
var _ = []any{
	(*client.WorkflowService).Create, (*client.WorkflowService).Fetch, (*client.WorkflowService).List,
	(*client.WorkflowService).Cancel, (*client.WorkflowService).ListAutoPaging,
	(*client.QuoteService).Create, (*client.ProductService).List, (*client.ProductService).Fetch,
	(*client.EventService).List, (*client.EventService).Fetch, (*client.EventService).ListAutoPaging,
	(*client.CustomerService).Fetch, (*client.CustomerService).CreatePortalSession, (*client.RefundService).Create, (*client.RefundService).Fetch,
	(*client.RefundService).List, (*client.RefundService).ListAutoPaging, (*client.TestHelperService).FundCustomer,
	(*client.MarginService).Report, (*client.Client).OpenAPI,
}
