package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rpcReporting is a JSON-RPC endpoint that answers eth_chainId with id, and
// nothing else: enough for the server's start-up check, which must refuse
// the chain before it asks anything more.
func rpcReporting(t *testing.T, id int64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if req.Method != "eth_chainId" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not in this test"}}`, req.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x%x"}`, req.ID, id)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The chain-kind guard, through the server's flags: a mainnet id for test,
// a testnet id for live, and a node on another chain than configured are
// each refused at start, before anything is served.
func TestChainKindGuardThroughFlags(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "operator.key")
	if err := os.WriteFile(keyFile, []byte("b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(t.TempDir(), "customer-ref.secret")
	if err := os.WriteFile(secretFile, []byte("5f0e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796"), 0o600); err != nil {
		t.Fatal(err)
	}
	const contract = "0x1111111111111111111111111111111111111111"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"mainnet for test", []string{"-test-rpc", rpcReporting(t, 1), "-test-chain-id", "1", "-test-contract", contract, "-test-key-file", keyFile, "-test-customer-ref-secret-file", secretFile}, "mainnet"},
		{"testnet for live", []string{"-live-rpc", rpcReporting(t, 11155111), "-live-chain-id", "11155111", "-live-contract", contract, "-live-key-file", keyFile, "-live-customer-ref-secret-file", secretFile}, "testnet"},
		{"another chain", []string{"-test-rpc", rpcReporting(t, 84532), "-test-chain-id", "11155111", "-test-contract", contract, "-test-key-file", keyFile, "-test-customer-ref-secret-file", secretFile}, "node is on chain id 84532, configured 11155111"},
		{"incomplete", []string{"-test-rpc", "http://127.0.0.1:1", "-test-contract", contract}, "-test-chain-id"},
	} {
		var out syncBuffer
		args := append([]string{"-data", t.TempDir(), "-https", "127.0.0.1:0", "-http", "", "-log-level", "error"}, c.args...)
		err := run(t.Context(), args, &out, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(out.String(), "listening") {
			t.Errorf("%s: %v (stdout %q); want refused at start, saying %q", c.name, err, out.String(), c.want)
		}
	}
}
