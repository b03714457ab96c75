package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// Issue 37, finding 1, end to end against a reference-server process on its
// embedded chain: a customer's wallet signs the grant the API prepares, the
// API sets it as the owner of the customer's balance (every bad input
// before is a 4xx that sends nothing); on chain that owner, and no one
// else, can request a withdrawal and withdraw after the notice, and a
// deposit naming any other owner reverts; `chain reconcile` is clean for
// the owner the API set, and reports one set by a raw setOwner outside the
// engine (owner_not_set_by_engine).

// signTypedData signs EIP-712 typed data as eth_signTypedData_v4 does (v
// as 27 or 28).
func signTypedData(t *testing.T, key *ecdsa.PrivateKey, raw json.RawMessage) string {
	t.Helper()
	var td apitypes.TypedData
	if err := json.Unmarshal(raw, &td); err != nil {
		t.Fatalf("typed data %s: %v", raw, err)
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(h, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// ownerGrant asks the API for a grant of key's address for customer and
// returns it with the wallet's signature.
func ownerGrant(t *testing.T, s *processServer, apiKey, customer string, key *ecdsa.PrivateKey) (map[string]any, string) {
	t.Helper()
	code, g := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/owner_grants",
		fmt.Sprintf(`{"address":%q,"origin":"https://portal.example"}`, crypto.PubkeyToAddress(key.PublicKey).Hex()), "")
	if code != http.StatusOK || g["object"] != "owner_grant" {
		t.Fatalf("owner grant: HTTP %d %v", code, g)
	}
	td, _ := json.Marshal(g["typedData"])
	return g, signTypedData(t, key, td)
}

// ownerBody is the body of POST /owner for grant g signed with sig.
func ownerBody(g map[string]any, sig string) string {
	return fmt.Sprintf(`{"address":%q,"nonce":%q,"origin":%q,"deadline":%d,"signature":%q}`, g["address"], g["nonce"], g["origin"], num(g["deadline"]), sig)
}

func TestOwnerOverHTTPS(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := cli(t, dir, "keys", "create", "--env", "test", "--name", "owners", "--plan", "enterprise", "--per-minute", "100000", "--per-day", "1000000")
	apiKey := regexp.MustCompile(`sk_test_[0-9A-Za-z]+`).FindString(out)
	s := startProcessServer(t, dir, "-test-faucet", "0")
	const customer = "cus_owner_e2e"
	wallet, _ := crypto.GenerateKey()
	walletAddr := crypto.PubkeyToAddress(wallet.PublicKey)

	// Funded before it has an owner (a deposit names the recorded one).
	if code, c := call(t, s, apiKey, "POST", "/v1/test_helpers/customers/"+customer+"/fund", `{"amount":5000}`, ""); code != http.StatusOK {
		t.Fatalf("fund: HTTP %d %v", code, c)
	}
	_, cus := call(t, s, apiKey, "GET", "/v1/customers/"+customer, "", "")
	dep, _ := cus["deposit"].(map[string]any)
	contract := common.HexToAddress(fmt.Sprint(dep["contract"]))
	ref := common.HexToHash(fmt.Sprint(dep["customerRef"]))

	g, sig := ownerGrant(t, s, apiKey, customer, wallet)
	if g["address"] != strings.ToLower(walletAddr.Hex()) || g["customerId"] != customer || g["origin"] != "https://portal.example" {
		t.Fatalf("grant %v", g)
	}
	// Each bad input: a 4xx naming the parameter; nothing is sent.
	otherG, otherSig := ownerGrant(t, s, apiKey, "cus_owner_e2e_other", wallet)
	var nonce [32]byte
	rand.Read(nonce[:])
	past := time.Now().Add(-time.Minute).Unix()
	expiredDigest := settlement.OwnerGrantDigest(big.NewInt(1337), contract, ref, walletAddr, nonce, "https://portal.example", uint64(past))
	expiredSig, _ := crypto.Sign(expiredDigest[:], wallet)
	expiredSig[64] += 27
	for _, c := range []struct {
		name, path, body string
		status           int
		code, param      string
	}{
		{"grant: an unknown field", "owner_grants", `{"address":"` + walletAddr.Hex() + `","owner":"x"}`, 400, "parameter_unknown", "owner"},
		{"grant: no address", "owner_grants", `{}`, 400, "parameter_missing", "address"},
		{"grant: a bad address", "owner_grants", `{"address":"0x1234"}`, 400, "parameter_invalid", "address"},
		{"grant: the zero address", "owner_grants", `{"address":"0x0000000000000000000000000000000000000000"}`, 400, "parameter_invalid", "address"},
		{"grant: a past deadline", "owner_grants", fmt.Sprintf(`{"address":%q,"deadline":%d}`, walletAddr.Hex(), past), 400, "parameter_invalid", "deadline"},
		{"grant: a deadline two days ahead", "owner_grants", fmt.Sprintf(`{"address":%q,"deadline":%d}`, walletAddr.Hex(), time.Now().Add(48*time.Hour).Unix()), 400, "parameter_invalid", "deadline"},
		{"grant: a control character in the origin", "owner_grants", fmt.Sprintf(`{"address":%q,"origin":"a\u0007b"}`, walletAddr.Hex()), 400, "parameter_invalid", "origin"},
		{"owner: an unknown field", "owner", strings.Replace(ownerBody(g, sig), `{`, `{"customerRef":"0x01",`, 1), 400, "parameter_unknown", "customerRef"},
		{"owner: no signature", "owner", strings.Replace(ownerBody(g, sig), `,"signature":"`+sig+`"`, "", 1), 400, "parameter_missing", "signature"},
		{"owner: a bad address", "owner", strings.Replace(ownerBody(g, sig), fmt.Sprint(g["address"]), "0xnope", 1), 400, "parameter_invalid", "address"},
		{"owner: a deadline as a string", "owner", strings.Replace(ownerBody(g, sig), fmt.Sprintf(`"deadline":%d`, num(g["deadline"])), `"deadline":"soon"`, 1), 400, "parameter_invalid", "deadline"},
		{"owner: signed for another customer", "owner", ownerBody(otherG, otherSig), 400, "parameter_invalid", "signature"},
		{"owner: another origin than signed", "owner", strings.Replace(ownerBody(g, sig), "https://portal.example", "https://evil.example", 1), 400, "parameter_invalid", "signature"},
		{"owner: expired", "owner", fmt.Sprintf(`{"address":%q,"nonce":%q,"origin":"https://portal.example","deadline":%d,"signature":%q}`,
			walletAddr.Hex(), hexutil.Encode(nonce[:]), past, hexutil.Encode(expiredSig)), 400, "parameter_invalid", "deadline"},
		{"owner: a short signature", "owner", strings.Replace(ownerBody(g, sig), sig, sig[:40], 1), 400, "parameter_invalid", "signature"},
	} {
		code, body := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/"+c.path, c.body, "")
		e, _ := body["error"].(map[string]any)
		if code != c.status || e["code"] != c.code || e["param"] != c.param {
			t.Errorf("%s: HTTP %d %v; want %d %s naming %s", c.name, code, body, c.status, c.code, c.param)
		}
	}

	// The signed grant: 202, effective now; a replay answers it again.
	code, ch := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/owner", ownerBody(g, sig), "owner-1")
	if code != http.StatusAccepted || ch["object"] != "owner_change" || ch["status"] != "sent" || ch["effective"] != "now" ||
		ch["address"] != strings.ToLower(walletAddr.Hex()) || len(fmt.Sprint(ch["txHash"])) != 66 {
		t.Fatalf("set owner: HTTP %d %v", code, ch)
	}
	if code, again := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/owner", ownerBody(g, sig), "owner-1"); code != http.StatusAccepted || again["txHash"] != ch["txHash"] {
		t.Fatalf("a replay: HTTP %d %v, want %v", code, again, ch)
	}
	if code, body := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/owner", ownerBody(otherG, otherSig), "owner-1"); code != http.StatusConflict ||
		body["error"].(map[string]any)["code"] != "idempotency_key_reused" {
		t.Fatalf("the key with another body: HTTP %d %v", code, body)
	}
	// Its nonce under another grant (another customer's, same wallet).
	_, oc := call(t, s, apiKey, "GET", "/v1/customers/cus_owner_e2e_other", "", "")
	otherRef := common.HexToHash(fmt.Sprint(oc["deposit"].(map[string]any)["customerRef"]))
	rd := settlement.OwnerGrantDigest(big.NewInt(1337), contract, otherRef, walletAddr, [32]byte(common.FromHex(fmt.Sprint(g["nonce"]))),
		"https://portal.example", uint64(num(g["deadline"])))
	reuseSig, _ := crypto.Sign(rd[:], wallet)
	reuseSig[64] += 27
	reuse := ownerBody(map[string]any{"address": g["address"], "nonce": g["nonce"], "origin": "https://portal.example", "deadline": g["deadline"]},
		hexutil.Encode(reuseSig))
	if code, body := call(t, s, apiKey, "POST", "/v1/customers/cus_owner_e2e_other/owner", reuse, ""); code != http.StatusBadRequest ||
		body["error"].(map[string]any)["param"] != "nonce" {
		t.Fatalf("a used nonce: HTTP %d %v", code, body)
	}
	// A workflow settled after it: the operator's setOwner (a lower nonce)
	// is mined and confirmed by then.
	code, wf := call(t, s, apiKey, "POST", "/v1/workflows", `{"product":"image-moderation","customerId":"`+customer+`","payload":`+moneyPayload+`}`, "owner-wf")
	if code != http.StatusCreated {
		t.Fatalf("create: HTTP %d %v", code, wf)
	}
	waitStatus(t, s, apiKey, "/v1/workflows/"+fmt.Sprint(wf["id"]), "Settled")
	// The same address again: it owns the balance already.
	g2, sig2 := ownerGrant(t, s, apiKey, customer, wallet)
	if code, body := call(t, s, apiKey, "POST", "/v1/customers/"+customer+"/owner", ownerBody(g2, sig2), ""); code != http.StatusBadRequest ||
		body["error"].(map[string]any)["param"] != "address" {
		t.Fatalf("the owner's address again: HTTP %d %v", code, body)
	}
	_, cus = call(t, s, apiKey, "GET", "/v1/customers/"+customer, "", "")
	held := balanceOf(cus)["onChain"]
	s.kill()

	// The owner the API set is explained.
	if out, errOut, code := runCmd(t, dir, "chain", "reconcile", "--env", "test"); code != 0 || !strings.Contains(out, "no discrepancy") {
		t.Fatalf("chain reconcile: exit %d\n%s%s", code, out, errOut)
	}

	// On chain: the owner withdraws after the notice; no one else can.
	chain, err := settlement.NewSimulated(ctx, settlement.SimulatedOptions{DataDir: filepath.Join(dir, "chain"), ManualCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			chain.Close()
		}
	}()
	b := chain.Backend.Client()
	abi, erc20 := bindings.NewSettleflowSettlement(), bindings.NewTestUSD()
	faucet := settlement.Transactor{Backend: b, Key: chain.FaucetKey, Mine: chain.Commit}
	account := func(key *ecdsa.PrivateKey, tokens int64) settlement.Transactor {
		t.Helper()
		who := crypto.PubkeyToAddress(key.PublicKey)
		if _, err := faucet.SendValue(ctx, &who, big.NewInt(1e18), nil); err != nil {
			t.Fatal(err)
		}
		if tokens > 0 {
			if _, err := faucet.Send(ctx, &chain.Addresses.Token, erc20.PackTransfer(who, big.NewInt(tokens*10_000))); err != nil {
				t.Fatal(err)
			}
		}
		tr := settlement.Transactor{Backend: b, Key: key, Mine: chain.Commit}
		if _, err := tr.Send(ctx, &chain.Addresses.Token, erc20.PackApprove(chain.Addresses.Contract, big.NewInt(tokens*10_000+1))); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tokens := func(who common.Address) int64 {
		t.Helper()
		out, err := b.CallContract(ctx, ethereum.CallMsg{To: &chain.Addresses.Token, Data: erc20.PackBalanceOf(who)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := erc20.UnpackBalanceOf(out)
		if err != nil {
			t.Fatal(err)
		}
		return new(big.Int).Quo(v, big.NewInt(10_000)).Int64()
	}
	out2, err := b.CallContract(ctx, ethereum.CallMsg{To: &chain.Addresses.Contract, Data: abi.PackAccount(ref)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := abi.UnpackAccount(out2)
	if err != nil || acct.Owner != walletAddr {
		t.Fatalf("owner on chain %v (%v), want the wallet %s", acct.Owner, err, walletAddr)
	}
	owner := account(wallet, 0)
	attackerKey, _ := crypto.GenerateKey()
	attacker := account(attackerKey, 100)
	attackerAddr := crypto.PubkeyToAddress(attackerKey.PublicKey)
	// A deposit naming any other owner (the attacker, none) reverts.
	for _, named := range []common.Address{attackerAddr, {}} {
		if _, err := attacker.Send(ctx, &chain.Addresses.Contract, abi.PackDeposit(ref, named, big.NewInt(10_000))); err == nil {
			t.Errorf("a deposit naming owner %s, not the recorded one, was accepted", named)
		}
	}
	if _, err := attacker.Send(ctx, &chain.Addresses.Contract, abi.PackRequestWithdrawal(ref, big.NewInt(held*10_000))); err == nil {
		t.Error("another account asked for a withdrawal of the customer's balance")
	}
	if _, err := owner.Send(ctx, &chain.Addresses.Contract, abi.PackRequestWithdrawal(ref, big.NewInt(held*10_000))); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Send(ctx, &chain.Addresses.Contract, abi.PackWithdraw(ref)); err == nil {
		t.Error("a withdrawal before the notice")
	}
	chain.Commit() // time moves only on an empty pending block
	if err := chain.Backend.AdjustTime(settlement.DefaultWithdrawalNotice + time.Minute); err != nil {
		t.Fatal(err)
	}
	chain.Commit()
	if _, err := attacker.Send(ctx, &chain.Addresses.Contract, abi.PackWithdraw(ref)); err == nil {
		t.Error("another account withdrew the customer's balance")
	}
	if _, err := owner.Send(ctx, &chain.Addresses.Contract, abi.PackWithdraw(ref)); err != nil {
		t.Fatal(err)
	}
	if got := tokens(walletAddr); got != held {
		t.Fatalf("the owner holds %d cents after withdrawing, want the balance %d", got, held)
	}

	// Outside the engine: the operator's key sets another customer's owner.
	rogueKey, _ := crypto.GenerateKey()
	rogueRef := settlement.CustomerRef(chain.CustomerRefSecret, settleflow.Test, "cus_owner_e2e_rogue")
	rand.Read(nonce[:])
	deadline := uint64(time.Now().Add(48 * time.Hour).Unix())
	d := settlement.OwnerGrantDigest(big.NewInt(1337), chain.Addresses.Contract, rogueRef, crypto.PubkeyToAddress(rogueKey.PublicKey), nonce, "x", deadline)
	rs, _ := crypto.Sign(d[:], rogueKey)
	op := settlement.Transactor{Backend: b, Key: chain.OperatorKey, Mine: chain.Commit}
	if _, err := op.Send(ctx, &chain.Addresses.Contract, abi.PackSetOwner(rogueRef, crypto.PubkeyToAddress(rogueKey.PublicKey), nonce, "x",
		new(big.Int).SetUint64(deadline), rs[64]+27, [32]byte(rs[:32]), [32]byte(rs[32:64]))); err != nil {
		t.Fatal(err)
	}
	chain.Close()
	closed = true
	out, errOut, code := runCmd(t, dir, "chain", "reconcile", "--env", "test")
	if code == 0 || !strings.Contains(out, "owner_not_set_by_engine") || !strings.Contains(out, crypto.PubkeyToAddress(rogueKey.PublicKey).Hex()) {
		t.Fatalf("chain reconcile after a setOwner outside the engine: exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out, "owner_not_set_by_engine"); n != 1 {
		t.Fatalf("%d owners reported, want the rogue one alone:\n%s", n, out)
	}
}
