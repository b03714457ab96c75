package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// startGethDev runs `geth --dev` on loopback (a block a second) and returns
// its RPC URL and the funded dev account's key. It needs SETTLEFLOW_GETH.
func startGethDev(t *testing.T) (string, []byte) {
	t.Helper()
	return startGeth(t, gethOptions{period: "1"})
}

// gethOptions says how startGeth runs `geth --dev`.
type gethOptions struct {
	// period is --dev.period (seconds between blocks); empty: geth's
	// default, a block only when a transaction arrives.
	period string
	// keyFile, if set, is a hex private key file imported into the node's
	// keystore (geth account import, no password) before it starts: the
	// developer account geth funds is then that key's
	// (docs/operating.md, "Several instances on a local chain").
	keyFile string
}

// startGeth runs `geth --dev` on loopback as o says and returns its RPC URL
// and the funded dev account's key. It needs SETTLEFLOW_GETH.
func startGeth(t *testing.T, o gethOptions) (string, []byte) {
	t.Helper()
	bin := os.Getenv("SETTLEFLOW_GETH")
	if bin == "" {
		t.Skip("SETTLEFLOW_GETH is not set: build geth with settlement/scripts/install-geth.sh DIR and set SETTLEFLOW_GETH=DIR/geth (.ci/run does)")
	}
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	dir := t.TempDir()
	httpPort := port()
	logf, _ := os.Create(filepath.Join(dir, "geth.log"))
	args := []string{"--dev", "--datadir", filepath.Join(dir, "data"),
		"--http", "--http.addr", "127.0.0.1", "--http.port", fmt.Sprint(httpPort), "--http.api", "eth,net,web3",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", fmt.Sprint(port()),
		"--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", "0", "--nat", "none", "--netrestrict", "127.0.0.0/8"}
	if o.period != "" {
		args = append(args, "--dev.period", o.period)
	}
	if o.keyFile != "" {
		pass := filepath.Join(dir, "empty.pass")
		if err := os.WriteFile(pass, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		imp := exec.Command(bin, "account", "import", "--datadir", filepath.Join(dir, "data"), "--password", pass, o.keyFile)
		if out, err := imp.CombinedOutput(); err != nil {
			t.Fatalf("geth account import: %v\n%s", err, out)
		}
		args = append(args, "--password", pass)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
		logf.Close()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if c, err := ethclient.Dial(url); err == nil {
			_, err = c.ChainID(context.Background())
			c.Close()
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("geth --dev did not answer")
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "data", "keystore", "*"))
	if len(files) != 1 {
		t.Fatalf("dev keystore: %v", files)
	}
	blob, _ := os.ReadFile(files[0])
	k, err := keystore.DecryptKey(blob, "")
	if err != nil {
		t.Fatal(err)
	}
	return url, crypto.FromECDSA(k.PrivateKey)
}

// The whole real-chain path on a `geth --dev` node standing in for a
// public testnet: `chain deploy` puts the contract and a test stablecoin on
// it; the server, started with the flags it printed, settles workflows
// there; killed with SIGKILL mid-batch and restarted, it settles every one
// exactly once; `chain reconcile` then finds no discrepancy, and names both
// discrepancies planted after (a settlement sent outside the engine, a
// workflow altered in the database).
func TestSettleOnGethDev(t *testing.T) {
	url, key := startGethDev(t)
	dir := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "operator.key")
	if err := os.WriteFile(keyFile, []byte(common.Bytes2Hex(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	payee := crypto.PubkeyToAddress(mustKey(t).PublicKey).Hex()
	out, errOut, code := runCmd(t, dir, "chain", "deploy", "--env", "test", "--rpc", url, "--chain-id", "1337",
		"--key-file", keyFile, "--payee", payee, "--confirmations", "2")
	if code != 0 || !strings.HasPrefix(out, "-test-rpc ") {
		t.Fatalf("chain deploy: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, common.Bytes2Hex(key)) {
		t.Fatal("chain deploy printed the operator key")
	}
	flags := strings.Fields(out)
	out, errOut, code = runCmd(t, dir, append(append([]string{}, flags...), "chain", "status", "--env", "test")...)
	if code != 0 || !strings.Contains(out, "chain 1337") || !strings.Contains(out, "ready") || !strings.Contains(out, "held      0 for customers") {
		t.Fatalf("chain status: exit %d\n%s%s", code, out, errOut)
	}
	out = cli(t, dir, "keys", "create", "--env", "test", "--name", "geth", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")
	apiKey := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)

	s := startProcessServer(t, dir, flags...)
	ids := s.createMany(t, apiKey, 0, 40)
	settledCount := func(s *processServer) int {
		n := 0
		for _, id := range ids {
			if s.get(t, apiKey, "/v1/workflows/"+id)["status"] == "Settled" {
				n++
			}
		}
		return n
	}
	// Kill it once the first batch is on chain and others are on their way.
	for deadline := time.Now().Add(2 * time.Minute); settledCount(s) == 0; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing settled on geth --dev")
		}
	}
	more := s.createMany(t, apiKey, 40, 60)
	s.kill()
	ids = append(ids, more...)

	s = startProcessServer(t, dir, flags...)
	var once sync.Once
	for deadline := time.Now().Add(3 * time.Minute); settledCount(s) < len(ids); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			once.Do(func() { t.Fatalf("%d of %d settled after the restart", settledCount(s), len(ids)) })
		}
	}
	s.kill()

	reconcileArgs := append(append([]string{}, flags...), "chain", "reconcile", "--env", "test")
	out, errOut, code = runCmd(t, dir, reconcileArgs...)
	if code != 0 || !strings.Contains(out, "no discrepancy") || !strings.Contains(out, fmt.Sprintf("%d charges", len(ids))) {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}

	// Plant: a settlement outside the engine, and an altered workflow.
	ctx := context.Background()
	client, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	contract := common.HexToAddress(flags[5])
	opKey, _ := crypto.ToECDSA(key)
	secret, err := readSecretFile(flagValue(flags, "-test-customer-ref-secret-file"))
	if err != nil {
		t.Fatal(err)
	}
	// Debited from cus_1, who holds a balance, under a sequence no workflow has.
	tr := settlement.Transactor{Backend: client, Key: opKey}
	charge := settlement.PackedCharge{Cents: 321, Sequence: 900_001, Tag: settlement.WorkflowTag("wf_outside_engine")}.Pack()
	if _, err := tr.Send(ctx, &contract, bindings.NewSettleflowSettlement().PackSettle([][32]byte{settlement.CustomerRef(secret, "test", "cus_1")}, []*big.Int{charge})); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // two blocks on top: confirmed
	db, err := openDB(ctx, config{dataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Bun().NewRaw("UPDATE settleflow_workflows SET customer_id = 'cus_altered' WHERE id = ?", ids[3]).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, code = runCmd(t, dir, reconcileArgs...)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("tag %016x", settlement.WorkflowTag("wf_outside_engine"))) || !strings.Contains(out, "not_in_database") ||
		!strings.Contains(out, "customer_mismatch") || !strings.Contains(out, ids[3]) || !strings.Contains(out, "ledger_mismatch") {
		t.Fatalf("chain reconcile after planting: exit %d\n%s", code, out)
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
