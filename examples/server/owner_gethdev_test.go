package main

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// Issue 37, finding 1, on a real `geth --dev` node (TestOwnerOverHTTPS's
// money path; the simulated chain's is there): deployed with a 4-second
// withdrawal notice, a funded test customer's owner is set through the
// API with a grant a fresh wallet signs; the contract records it and the
// customer shows it once followed; a deposit naming another owner
// reverts; another account can neither ask for nor take a withdrawal; the
// owner asks for more than the balance (clamped to it), cannot withdraw
// before the notice, withdraws after it and holds the tokens; the server
// follows the withdrawal, and `chain reconcile` is clean.
func TestOwnerOnGethDev(t *testing.T) {
	url, devKey := startGethDev(t)
	ctx := context.Background()
	dir := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "operator.key")
	if err := os.WriteFile(keyFile, []byte(common.Bytes2Hex(devKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	const notice = 4 * time.Second
	out, errOut, code := runCmd(t, dir, "chain", "deploy", "--env", "test", "--rpc", url, "--chain-id", "1337",
		"--key-file", keyFile, "--payee", "0x000000000000000000000000000000000000dEaD", "--confirmations", "2",
		"--withdrawal-notice", notice.String())
	if code != 0 || !strings.HasPrefix(out, "-test-rpc ") {
		t.Fatalf("chain deploy: exit %d\n%s%s", code, out, errOut)
	}
	flags := strings.Fields(out)
	if out, errOut, code := runCmd(t, dir, append(append([]string{}, flags...), "chain", "status", "--env", "test")...); code != 0 || !strings.Contains(out, notice.String()+" before") {
		t.Fatalf("chain status (want a %s notice): exit %d\n%s%s", notice, code, out, errOut)
	}
	secret, err := readSecretFile(flagValue(flags, "-test-customer-ref-secret-file"))
	if err != nil {
		t.Fatal(err)
	}
	faucetKey, err := crypto.LoadECDSA(flagValue(flags, "-test-faucet-key-file"))
	if err != nil {
		t.Fatal(err)
	}
	contract := common.HexToAddress(flagValue(flags, "-test-contract"))
	const customer = "cus_owner_geth"
	ref := settlement.CustomerRef(secret, "test", customer)

	client, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	abi, erc20 := bindings.NewSettleflowSettlement(), bindings.NewTestUSD()
	read := func(to common.Address, data []byte) []byte {
		t.Helper()
		out, err := client.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	type acct struct {
		owner                       common.Address
		balance, pending, available int64
	}
	account := func() acct {
		t.Helper()
		a, err := abi.UnpackAccount(read(contract, abi.PackAccount(ref)))
		if err != nil {
			t.Fatal(err)
		}
		cents := func(v *big.Int) int64 { return new(big.Int).Quo(v, big.NewInt(10_000)).Int64() }
		return acct{a.Owner, cents(a.Balance), cents(a.Pending), a.AvailableAt.Int64()}
	}
	token := common.HexToAddress(flagValue(flags, "-test-token"))
	tokens := func(who common.Address) int64 {
		t.Helper()
		v, err := erc20.UnpackBalanceOf(read(token, erc20.PackBalanceOf(who)))
		if err != nil {
			t.Fatal(err)
		}
		return new(big.Int).Quo(v, big.NewInt(10_000)).Int64()
	}

	// Gas money for the owner's wallet and another account, and tokens for
	// the other, sent before the server runs (its operator and faucet send
	// under these keys then).
	opKey, _ := crypto.ToECDSA(devKey)
	dev := settlement.Transactor{Backend: client, Key: opKey}
	faucet := settlement.Transactor{Backend: client, Key: faucetKey}
	wallet, attackerKey := mustKey(t), mustKey(t)
	walletAddr, attackerAddr := crypto.PubkeyToAddress(wallet.PublicKey), crypto.PubkeyToAddress(attackerKey.PublicKey)
	for _, who := range []common.Address{walletAddr, attackerAddr} {
		if _, err := dev.SendValue(ctx, &who, big.NewInt(1e18), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := faucet.Send(ctx, &token, erc20.PackTransfer(attackerAddr, big.NewInt(100*10_000))); err != nil {
		t.Fatal(err)
	}
	owner := settlement.Transactor{Backend: client, Key: wallet}
	attacker := settlement.Transactor{Backend: client, Key: attackerKey}
	if _, err := attacker.Send(ctx, &token, erc20.PackApprove(contract, big.NewInt(100*10_000))); err != nil {
		t.Fatal(err)
	}

	out = cli(t, dir, append(append([]string{}, flags...), "keys", "create", "--env", "test", "--name", "owners", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")...)
	apiKey := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir, append(append([]string{}, flags...), "-test-faucet", "0")...)
	start := time.Now()
	poll := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s", what)
			}
		}
	}
	getCustomer := func() map[string]any {
		t.Helper()
		code, c := call(t, s, apiKey, "GET", "/v1/customers/"+customer, "", "")
		if code != http.StatusOK {
			t.Fatalf("GET customer: HTTP %d %v", code, c)
		}
		return c
	}

	// Funded before it has an owner (a deposit names the recorded one).
	const funded = 5000
	if code, c := call(t, s, apiKey, "POST", "/v1/test_helpers/customers/"+customer+"/fund", fmt.Sprintf(`{"amount":%d}`, funded), ""); code != http.StatusOK {
		t.Fatalf("fund: HTTP %d %v", code, c)
	}
	poll("the funding followed", func() bool { return balanceOf(getCustomer())["onChain"] == funded })
	c := getCustomer()
	dep, _ := c["deposit"].(map[string]any)
	if common.HexToAddress(fmt.Sprint(dep["contract"])) != contract || common.HexToHash(fmt.Sprint(dep["customerRef"])) != ref || c["owner"] != nil {
		t.Fatalf("the funded customer, before an owner: %v", c)
	}

	// The owner, through the API with the wallet's signature.
	g, sig := ownerGrant(t, s, apiKey, customer, wallet)
	code, ch := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/owner", ownerBody(g, sig), "owner-geth")
	if code != http.StatusAccepted || ch["status"] != "sent" || ch["effective"] != "now" || ch["address"] != strings.ToLower(walletAddr.Hex()) {
		t.Fatalf("set owner: HTTP %d %v", code, ch)
	}
	txHash := common.HexToHash(fmt.Sprint(ch["txHash"]))
	poll("setOwner mined", func() bool {
		r, err := client.TransactionReceipt(ctx, txHash)
		return err == nil && r.Status == 1
	})
	if a := account(); a.owner != walletAddr || a.balance != funded || a.pending != 0 {
		t.Fatalf("account(ref) after setOwner: %+v, want the wallet %s owning %d", a, walletAddr, funded)
	}
	poll("the customer shows its owner", func() bool { return getCustomer()["owner"] == walletAddr.Hex() })

	// A deposit naming any other owner (another account, none) reverts.
	for _, named := range []common.Address{attackerAddr, {}} {
		if _, err := attacker.Send(ctx, &contract, abi.PackDeposit(ref, named, big.NewInt(10_000))); err == nil {
			t.Errorf("a deposit naming owner %s, not the recorded one, was accepted", named)
		}
	}
	if got := tokens(attackerAddr); got != 100 {
		t.Errorf("the other account holds %d cents after its reverted deposits, want 100", got)
	}
	if _, err := attacker.Send(ctx, &contract, abi.PackRequestWithdrawal(ref, big.NewInt(funded*10_000))); err == nil {
		t.Error("another account asked for a withdrawal of the customer's balance")
	}

	// The owner asks for more than the balance: clamped to it.
	r, err := owner.Send(ctx, &contract, abi.PackRequestWithdrawal(ref, big.NewInt((funded+1000)*10_000)))
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := client.HeaderByHash(ctx, r.BlockHash)
	if err != nil {
		t.Fatal(err)
	}
	a := account()
	if a.pending != funded || a.available != int64(hdr.Time)+int64(notice/time.Second) {
		t.Fatalf("after asking for %d of %d: %+v, want %d pending from %d", funded+1000, funded, a, funded, int64(hdr.Time)+int64(notice/time.Second))
	}
	// Within a block or two of the request, well before the notice.
	if r, err := owner.Send(ctx, &contract, abi.PackWithdraw(ref)); err == nil {
		h, _ := client.HeaderByHash(ctx, r.BlockHash)
		t.Fatalf("a withdrawal in block %d (time %d) before the notice ends at %d", r.BlockNumber, h.Time, a.available)
	}
	poll("the server shows the withdrawal pending", func() bool {
		b := balanceOf(getCustomer())
		return b["pendingWithdrawal"] == funded && b["available"] == 0
	})
	poll("the notice passed", func() bool {
		h, err := client.HeaderByNumber(ctx, nil)
		return err == nil && h.Time >= uint64(a.available)
	})
	if _, err := attacker.Send(ctx, &contract, abi.PackWithdraw(ref)); err == nil {
		t.Error("another account withdrew the customer's balance")
	}
	if _, err := owner.Send(ctx, &contract, abi.PackWithdraw(ref)); err != nil {
		t.Fatal(err)
	}
	if got := tokens(walletAddr); got != funded {
		t.Fatalf("the owner holds %d cents after withdrawing, want the balance %d", got, funded)
	}
	if a := account(); a.owner != walletAddr || a.balance != 0 || a.pending != 0 {
		t.Fatalf("account(ref) after the withdrawal: %+v", a)
	}
	poll("the server follows the withdrawal", func() bool {
		b := balanceOf(getCustomer())
		return b["onChain"] == 0 && b["pendingWithdrawal"] == 0
	})
	t.Logf("owner set, followed, withdrawn and followed on geth --dev in %s", time.Since(start).Round(time.Millisecond))
	s.kill()

	if out, errOut, code := runCmd(t, dir, append(append([]string{}, flags...), "chain", "reconcile", "--env", "test")...); code != 0 || !strings.Contains(out, "no discrepancy") {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}
}
