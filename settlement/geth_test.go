package settlement

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"go.uber.org/zap/zaptest"

	"github.com/settleflow/settleflow"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestGethDev settles against a real `geth --dev` node on loopback. It needs
// the geth binary in SETTLEFLOW_GETH; build one with
//
//	settlement/scripts/install-geth.sh /tmp/geth-bin
//	SETTLEFLOW_GETH=/tmp/geth-bin/geth go test -run TestGethDev -v ./settlement
func TestGethDev(t *testing.T) {
	gethBin := os.Getenv("SETTLEFLOW_GETH")
	if gethBin == "" {
		t.Skip("SETTLEFLOW_GETH is not set: build geth with settlement/scripts/install-geth.sh DIR and set SETTLEFLOW_GETH=DIR/geth to run the geth --dev integration test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	datadir := filepath.Join(dir, "data")
	httpPort, authPort := freePort(t), freePort(t)
	logPath := filepath.Join(dir, "geth.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(gethBin, "--dev", "--dev.period", "1", "--datadir", datadir,
		"--http", "--http.addr", "127.0.0.1", "--http.port", fmt.Sprint(httpPort), "--http.api", "eth,net,web3",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", fmt.Sprint(authPort),
		"--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", "0", "--nat", "none", "--netrestrict", "127.0.0.0/8",
		"--verbosity", "3")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start geth: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				if len(b) > 4000 {
					b = b[len(b)-4000:]
				}
				t.Logf("geth log tail:\n%s", b)
			}
		}
	}()

	url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	var client *ethclient.Client
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-exited:
			t.Fatalf("geth exited early: %v", err)
		default:
		}
		if c, err := ethclient.DialContext(ctx, url); err == nil {
			if _, err := c.ChainID(ctx); err == nil {
				client = c
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("geth did not answer on", url)
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer client.Close()

	// The dev account geth funds at genesis lives in its keystore, with an
	// empty password: it becomes the operator, read the way production reads
	// a keystore.
	files, err := filepath.Glob(filepath.Join(datadir, "keystore", "*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("dev keystore: %v %v", files, err)
	}
	blob, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	devKey, err := keystore.DecryptKey(blob, "")
	if err != nil {
		t.Fatal(err)
	}
	payeeKey, _ := crypto.GenerateKey()
	payee := crypto.PubkeyToAddress(payeeKey.PublicKey)
	tr := Transactor{Backend: client, Key: devKey.PrivateKey}
	addrs, err := tr.DeployDev(ctx, payee, cents(1_000_000))
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}

	cc := ChainConfig{RPCURL: url, ChainID: 1337, Contract: addrs.Contract, Token: addrs.Token, Payee: payee,
		KeystoreFile: files[0], Confirmations: 2, FlushInterval: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond}
	s, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer s.Close()
	if info, _ := s.Chain(settleflow.Test); info.Network != "dev" || info.Operator != addrs.Operator || info.Decimals != 6 {
		t.Errorf("chain info %+v", info)
	}
	// Live on a dev chain is refused.
	if _, err := New(ctx, Config{Live: &ChainConfig{RPCURL: url, ChainID: 1337, Contract: addrs.Contract, KeystoreFile: files[0]}}); err == nil {
		t.Error("live mode accepted geth --dev (chain id 1337)")
	}

	op0 := balance(t, client, addrs.Token, addrs.Operator)
	pay0 := balance(t, client, addrs.Token, payee)
	chs := []settleflow.Charge{charge("wf_geth_1", 1250), charge("wf_geth_2", 99), charge("wf_geth_3", 100000)}
	if err := s.Submit(ctx, chs); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(ctx, chs[:1]); err != nil { // a duplicate
		t.Fatal(err)
	}
	st := waitFor(t, s, chs, 90*time.Second, nil, confirmed)
	for _, x := range st {
		if x.Settlement.ChainID != 1337 || x.Settlement.Confirmations < 2 || x.Settlement.BlockNumber == 0 {
			t.Errorf("settlement %+v", x.Settlement)
		}
	}
	want := cents(1250 + 99 + 100000)
	if got := new(big.Int).Sub(balance(t, client, addrs.Token, payee), pay0); got.Cmp(want) != 0 {
		t.Errorf("payee received %s, want %s", got, want)
	}
	if got := new(big.Int).Sub(op0, balance(t, client, addrs.Token, addrs.Operator)); got.Cmp(want) != 0 {
		t.Errorf("operator paid %s, want %s", got, want)
	}

	// A restarted settler, with nothing in memory, finds them on chain.
	s.Close()
	s2, err := New(ctx, Config{Test: &cc, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	st2, err := s2.Status(ctx, chs)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range st2 {
		if x.State != settleflow.SettlementConfirmed || x.Settlement.TxHash != st[i].Settlement.TxHash {
			t.Errorf("after restart: %s", describe(st2))
		}
	}
}
