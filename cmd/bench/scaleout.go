package main

// -suite pipeline -postgres DSN [-instances N]: the pipeline with the
// reference servers on one Postgres database (a fresh one each round,
// dropped after) and one shared chain, a `geth --dev` node on loopback
// (-geth, default $SETTLEFLOW_GETH; settlement/scripts/install-geth.sh
// builds it): the embedded chain lives inside one process and cannot be
// shared. The contract is deployed by the server's own `chain deploy`, and
// every instance gets the flags it printed; creates go round-robin over the
// instances.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/uptrace/bun/driver/pgdriver"
)

// freshDatabase creates a database of its own on the server of dsn and
// returns its DSN and a function that drops it.
func freshDatabase(ctx context.Context, dsn string) (string, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("-postgres: %w", err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "settleflow_bench_" + hex.EncodeToString(b)
	admin := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn)))
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u.Path = "/" + name
	drop := func() {
		admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") //nolint:errcheck // best effort
		admin.Close()
	}
	return u.String(), drop, nil
}

// gethDev is a `geth --dev` node on loopback, a block a second.
type gethDev struct {
	cmd  *exec.Cmd
	url  string
	key  []byte // the funded dev account's private key
	done chan struct{}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startGethDev(bin, dir string) (*gethDev, error) {
	if bin == "" {
		return nil, fmt.Errorf("-suite pipeline -postgres needs geth for the shared chain: -geth PATH or SETTLEFLOW_GETH (build it with settlement/scripts/install-geth.sh DIR)")
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	authPort, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "geth.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--dev", "--dev.period", "1", "--datadir", filepath.Join(dir, "geth"),
		"--http", "--http.addr", "127.0.0.1", "--http.port", fmt.Sprint(httpPort), "--http.api", "eth,net,web3",
		"--authrpc.addr", "127.0.0.1", "--authrpc.port", fmt.Sprint(authPort),
		"--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", "0", "--nat", "none", "--netrestrict", "127.0.0.0/8")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	g := &gethDev{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", httpPort), done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(g.done) }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if c, err := ethclient.Dial(g.url); err == nil {
			_, err = c.ChainID(context.Background())
			c.Close()
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("geth --dev did not answer within a minute; see %s", logf.Name())
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "geth", "keystore", "*"))
	if len(files) != 1 {
		g.stop()
		return nil, fmt.Errorf("geth --dev keystore: %v", files)
	}
	blob, err := os.ReadFile(files[0])
	if err != nil {
		g.stop()
		return nil, err
	}
	k, err := keystore.DecryptKey(blob, "")
	if err != nil {
		g.stop()
		return nil, err
	}
	g.key = crypto.FromECDSA(k.PrivateKey)
	return g, nil
}

func (g *gethDev) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-g.done:
	case <-time.After(20 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// deployOnGeth deploys the settlement contract (and a test stablecoin) onto
// g with the server's `chain deploy` and returns the server flags it
// printed.
func deployOnGeth(bin, dir string, g *gethDev) ([]string, error) {
	keyFile := filepath.Join(dir, "operator.key")
	if err := os.WriteFile(keyFile, []byte(common.Bytes2Hex(g.key)), 0o600); err != nil {
		return nil, err
	}
	payeeKey, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	payee := crypto.PubkeyToAddress(payeeKey.PublicKey).Hex()
	out, err := exec.Command(bin, "-data", filepath.Join(dir, "deploy"), "chain", "deploy", "--env", "test", "--rpc", g.url,
		"--chain-id", "1337", "--key-file", keyFile, "--payee", payee, "--confirmations", "2").Output()
	if err != nil || !strings.HasPrefix(string(out), "-test-rpc ") {
		return nil, fmt.Errorf("chain deploy: %v: %s", err, out)
	}
	return strings.Fields(string(out)), nil
}

// setUpScaleOut prepares a round on Postgres: a fresh database, geth with
// the contract, an API key and the receiver's endpoint. It returns the
// server flags every instance takes, the key, the endpoint's secret and
// the clean-up.
func setUpScaleOut(ctx context.Context, c pipelineConfig, bin, dir, hookURL string) (flags []string, key, secret string, cleanup func(), err error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			undoAll() // the named cleanup is nil on an error return
		}
	}()
	dsn, drop, err := freshDatabase(ctx, c.pgDSN)
	if err != nil {
		return nil, "", "", nil, err
	}
	undo = append(undo, drop)
	g, err := startGethDev(c.geth, dir)
	if err != nil {
		return nil, "", "", nil, err
	}
	undo = append(undo, g.stop)
	chainFlags, err := deployOnGeth(bin, dir, g)
	if err != nil {
		return nil, "", "", nil, err
	}
	flags = append([]string{"-postgres", dsn}, chainFlags...)
	cli := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append(append([]string{"-data", filepath.Join(dir, "cli")}, flags...), args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%s: %v: %s", strings.Join(args[:2], " "), err, out)
		}
		return string(out), nil
	}
	out, err := cli("keys", "create", "--env", "test", "--name", "bench", "--plan", "enterprise", "--per-minute", "100000000", "--per-day", "1000000000")
	if err != nil {
		return nil, "", "", nil, err
	}
	if key = regexp.MustCompile(`sk_test_[A-Za-z0-9]+`).FindString(out); key == "" {
		return nil, "", "", nil, fmt.Errorf("keys create printed no key: %s", out)
	}
	if out, err = cli("webhooks", "add", "--env", "test", "--url", hookURL); err != nil {
		return nil, "", "", nil, err
	}
	if secret = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(out); secret == "" {
		return nil, "", "", nil, fmt.Errorf("webhooks add printed no secret: %s", out)
	}
	return flags, key, secret, undoAll, nil
}
