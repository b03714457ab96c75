package settlement

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.uber.org/zap/zaptest"
)

// deployV2 deploys the version 2 contract (testdata: its bytecode as
// built before version 3) for token and payee, operated by s's operator.
func deployV2(t *testing.T, s *Simulated) common.Address { return deployOld(t, s, 2) }

// deployOld deploys an earlier version of the contract from its bytecode
// in testdata (SettleflowSettlement.vN.bin, as built before version N+1).
func deployOld(t *testing.T, s *Simulated, version int) common.Address {
	t.Helper()
	bin, err := os.ReadFile(fmt.Sprintf("testdata/SettleflowSettlement.v%d.bin", version))
	if err != nil {
		t.Fatal(err)
	}
	tr := Transactor{Backend: s.Backend.Client(), Key: s.OperatorKey, Mine: s.Commit}
	// The constructor's arguments are the current version's.
	args := settlementABI.PackConstructor(s.Addresses.Token, s.Addresses.Payee, s.Addresses.Operator, cents(1), big.NewInt(3600))
	addr, err := tr.deploy(context.Background(), "0x"+strings.TrimSpace(string(bin)), args)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// A settler configured with a version 3 contract (one set of grant nonces
// for every signer: an owner could burn another customer's grant) refuses
// to start, naming the version and what to do.
func TestSettlerRefusesVersion3(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	v3 := deployOld(t, s, 3)
	if v, err := contractVersion(ctx, s.Backend.Client(), v3); err != nil || v != 3 {
		t.Fatalf("testdata's version 3 contract says version %d, %v", v, err)
	}
	_, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{Client: s.Backend.Client(), Contract: v3, Key: s.OperatorKey,
		CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2}})
	if err == nil || !strings.Contains(err.Error(), "settlement contract version 3") || !strings.Contains(err.Error(), "needs version 4") ||
		!strings.Contains(err.Error(), "chain deploy") {
		t.Fatalf("a version 3 contract: %v", err)
	}
}

// A settler configured with a version 2 contract refuses to start, naming
// the version and what to do.
func TestSettlerRefusesVersion2(t *testing.T) {
	ctx := context.Background()
	s := newSim(t, SimulatedOptions{ManualCommit: true})
	v2 := deployV2(t, s)
	_, err := New(ctx, Config{Logger: zaptest.NewLogger(t), Test: &ChainConfig{Client: s.Backend.Client(), Contract: v2, Key: s.OperatorKey,
		CustomerRefSecret: s.CustomerRefSecret, Confirmations: 2}})
	if err == nil || !strings.Contains(err.Error(), "version 2 or older") || !strings.Contains(err.Error(), "chain deploy") {
		t.Fatalf("a version 2 contract: %v", err)
	}
	if _, err := Inspect(ctx, s.Backend.Client(), v2); err == nil || !strings.Contains(err.Error(), "version 2 or older") {
		t.Fatalf("Inspect of a version 2 contract: %v", err)
	}
}

// A data directory whose simulated chain holds a version 2 contract (from
// an earlier build) is told to move the chain aside; nothing else changes.
func TestSimulatedDataDirWithVersion2(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	ctx := context.Background()
	s, err := NewSimulated(ctx, SimulatedOptions{Logger: zaptest.NewLogger(t), DataDir: dir, ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	v2 := deployV2(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Point the saved deployment at the version 2 contract, as a data
	// directory of the earlier build holds it.
	path := filepath.Join(dir, chainStateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st["addresses"].(map[string]any)["Contract"] = v2.Hex()
	b, _ = json.Marshal(st)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = NewSimulated(cctx, SimulatedOptions{Logger: zaptest.NewLogger(t), DataDir: dir, ManualCommit: true})
	if err == nil || !strings.Contains(err.Error(), "version 2 or older") || !strings.Contains(err.Error(), "move "+dir+" aside") {
		t.Fatalf("a data directory with a version 2 contract: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(b) {
		t.Error("the refused start changed the data directory's state")
	}
}
