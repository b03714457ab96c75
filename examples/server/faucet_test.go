package main

import (
	"fmt"
	"strings"
	"testing"
)

// More than the test faucet holds is a 400 naming what it holds and how to
// refill it, and deposits nothing (it answered 500 internal_error, with
// "execution reverted" in the log).
func TestFundMoreThanTheFaucetHolds(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	// The embedded chain's faucet holds 10,000,000.00 (1e9 cents).
	code, _, body := s.do("POST", "/v1/test_helpers/customers/cus_faucet_limit/fund", s.firstKey, fmt.Sprintf(`{"amount":%d}`, int64(2_000_000_000)))
	if code != 400 {
		t.Fatalf("funding more than the faucet holds: %d %v", code, body)
	}
	e, _ := body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["code"] != "parameter_invalid" || e["param"] != "amount" || !strings.Contains(msg, "the test faucet holds 10000000 (1000000000 cents)") ||
		!strings.Contains(msg, "mint") {
		t.Fatalf("error %v", e)
	}
	code, _, cus := s.do("GET", "/v1/customers/cus_faucet_limit", s.firstKey, "")
	if code != 200 {
		t.Fatalf("customer: %d %v", code, cus)
	}
	if bal, _ := cus["balance"].(map[string]any); bal["onChain"] != float64(0) {
		t.Fatalf("the refused funding deposited: %v", bal)
	}
}
