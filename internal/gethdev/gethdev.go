// Package gethdev starts `geth --dev` nodes on loopback for tests: one
// starter for every package whose tests run against a real node
// (settlement, portal, x402).
package gethdev

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/ethclient"
)

// Node is a running geth --dev node.
type Node struct {
	Client *ethclient.Client
	// URL is its HTTP JSON-RPC endpoint.
	URL string
	// KeyFile is the developer account's keystore file (empty password),
	// DevKey its key: the account geth funds at genesis.
	KeyFile string
	DevKey  *ecdsa.PrivateKey
	// DataDir is the node's data directory.
	DataDir string
}

// Options configures Start.
type Options struct {
	// Genesis, if set, initializes the data directory first (`geth
	// init`): --dev keeps the chain it finds there, and its developer
	// account is then geth's developer key (settlement.GethDevGenesis).
	Genesis []byte
	// Verbosity is geth's log level (default 2); the log is shown when
	// the test fails.
	Verbosity int
}

// Start starts `geth --dev --dev.period 1` from SETTLEFLOW_GETH (the test
// is skipped with a message saying how to get one when it is unset) on
// loopback ports, waits for it to answer, reads its developer key, and
// stops it when the test ends.
func Start(t testing.TB, o Options) *Node {
	t.Helper()
	bin := os.Getenv("SETTLEFLOW_GETH")
	if bin == "" {
		t.Skip("SETTLEFLOW_GETH is not set: build geth with settlement/scripts/install-geth.sh DIR and set SETTLEFLOW_GETH=DIR/geth to run the geth --dev tests")
	}
	if o.Verbosity == 0 {
		o.Verbosity = 2
	}
	dir := t.TempDir()
	datadir := filepath.Join(dir, "data")
	if o.Genesis != nil {
		gfile := filepath.Join(dir, "genesis.json")
		if err := os.WriteFile(gfile, o.Genesis, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "--datadir", datadir, "init", gfile).CombinedOutput(); err != nil {
			t.Fatalf("geth init: %v\n%s", err, out)
		}
	}
	httpPort, authPort := FreePort(t), FreePort(t)
	logPath := filepath.Join(dir, "geth.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--dev", "--dev.period", "1", "--datadir", datadir,
		"--http", "--http.addr", "127.0.0.1", "--http.port", fmt.Sprint(httpPort), "--http.api", "eth,net,web3",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", fmt.Sprint(authPort),
		"--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", "0", "--nat", "none", "--netrestrict", "127.0.0.0/8",
		"--verbosity", fmt.Sprint(o.Verbosity))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start geth: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				if len(b) > 4000 {
					b = b[len(b)-4000:]
				}
				t.Logf("geth log tail:\n%s", b)
			}
		}
	})
	ctx := context.Background()
	url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	var client *ethclient.Client
	for deadline := time.Now().Add(60 * time.Second); client == nil; time.Sleep(100 * time.Millisecond) {
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
	}
	t.Cleanup(client.Close)
	files, err := filepath.Glob(filepath.Join(datadir, "keystore", "*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("dev keystore: %v %v", files, err)
	}
	blob, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := keystore.DecryptKey(blob, "")
	if err != nil {
		t.Fatal(err)
	}
	return &Node{Client: client, URL: url, KeyFile: files[0], DevKey: key.PrivateKey, DataDir: datadir}
}

// FreePort is a free TCP port on loopback.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
