package settlement

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/settleflow/settleflow"
)

// Deposits relayed for a customer's wallet (the customer portal): the
// wallet signs the token's EIP-3009 ReceiveWithAuthorization of an amount
// to the contract, whose nonce is keccak256(abi.encode(customerRef, owner,
// salt)); the operator sends depositWithAuthorization with it (and pays the
// gas) through the chain's worker, one transaction per deposit. Because the
// nonce names the customer and the owner the signer expects, a relayer
// cannot credit another balance or name another owner: the token would
// recover another signer. And the calls the owner's own wallet sends
// (requestWithdrawal, cancelWithdrawal, withdraw), built here for it.

// DepositAuthorization is a wallet's signed ReceiveWithAuthorization for a
// deposit, as the portal got it back.
type DepositAuthorization struct {
	// From is the signer, whose tokens are deposited, 0x-hex.
	From string
	// Owner is the owner the signer expects the balance to have, 0x-hex;
	// "" for none (the zero address).
	Owner string
	// Amount is the deposit in cents.
	Amount int64
	// ValidBefore is when the authorization expires, Unix seconds.
	ValidBefore int64
	// Salt is 32 bytes, 0x-hex, fresh per authorization.
	Salt string
	// Signature is the 65-byte signature (r, s, v), 0x-hex; empty when
	// the typed data is asked for.
	Signature string
}

// depositAuth is a DepositAuthorization parsed.
type depositAuth struct {
	from, owner common.Address
	value       *big.Int
	validBefore uint64
	salt        [32]byte
	sig         []byte
}

func (c *chain) parseDeposit(a DepositAuthorization, needSig bool) (*depositAuth, error) {
	var p depositAuth
	if !common.IsHexAddress(a.From) || !strings.HasPrefix(a.From, "0x") {
		return nil, invalidGrant("from", "from must be the wallet's 0x-prefixed 20-byte hex address")
	}
	p.from = common.HexToAddress(a.From)
	if a.Owner != "" {
		if !common.IsHexAddress(a.Owner) || !strings.HasPrefix(a.Owner, "0x") {
			return nil, invalidGrant("owner", "owner must be a 0x-prefixed 20-byte hex address, or empty for none")
		}
		p.owner = common.HexToAddress(a.Owner)
	}
	if a.Amount < 1 {
		return nil, invalidGrant("amount", "amount must be a whole number of cents, at least 1")
	}
	v, err := BaseUnits(a.Amount, c.decimals)
	if err != nil {
		return nil, invalidGrant("amount", "amount %d cents is out of range", a.Amount)
	}
	p.value = v
	if a.ValidBefore <= 0 {
		return nil, invalidGrant("validBefore", "validBefore must be Unix seconds")
	}
	p.validBefore = uint64(a.ValidBefore)
	s, err := hexutil.Decode(a.Salt)
	if err != nil || len(s) != 32 {
		return nil, invalidGrant("salt", "salt must be 32 bytes, 0x-hex")
	}
	p.salt = [32]byte(s)
	if !needSig {
		return &p, nil
	}
	sig, err := parseSignature(a.Signature)
	if err != nil {
		return nil, err
	}
	p.sig = sig
	return &p, nil
}

// DepositNonce is the EIP-3009 nonce a deposit's authorization carries:
// keccak256(abi.encode(ref, owner, salt)), binding it to one customer and
// the owner the signer expects.
func DepositNonce(ref [32]byte, owner common.Address, salt [32]byte) [32]byte {
	return crypto.Keccak256Hash(ref[:], common.LeftPadBytes(owner[:], 32), salt[:])
}

// tokenDomain is the token's EIP-712 domain (name and version), found by
// matching its DOMAIN_SEPARATOR: USDC answers version(), TestUSD signs as
// version "1".
type tokenDomain struct {
	name, version string
	separator     common.Hash
}

var (
	receiveAuthType = crypto.Keccak256Hash([]byte("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
	selName         = crypto.Keccak256([]byte("name()"))[:4]
	selVersion      = crypto.Keccak256([]byte("version()"))[:4]
	selDomainSep    = crypto.Keccak256([]byte("DOMAIN_SEPARATOR()"))[:4]
)

func (c *chain) tokenDomain(ctx context.Context) (*tokenDomain, error) {
	c.mu.Lock()
	d := c.tdomain
	c.mu.Unlock()
	if d != nil {
		return d, nil
	}
	call := func(sel []byte) ([]byte, error) {
		return c.b.CallContract(ctx, ethereum.CallMsg{To: &c.token, Data: sel}, nil)
	}
	out, err := call(selDomainSep)
	if err != nil || len(out) != 32 {
		return nil, fmt.Errorf("settlement: %s: the token %s has no DOMAIN_SEPARATOR() (EIP-3009 deposits need one): %v", c.env, c.token, err)
	}
	sep := common.BytesToHash(out)
	str := func(out []byte) string {
		if len(out) < 64 {
			return ""
		}
		n := new(big.Int).SetBytes(out[32:64]).Uint64()
		if n > uint64(len(out)-64) {
			return ""
		}
		return string(out[64 : 64+n])
	}
	nameOut, err := call(selName)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: the token's name(): %w", c.env, err)
	}
	name := str(nameOut)
	versions := []string{"1", "2"}
	if vOut, err := call(selVersion); err == nil && str(vOut) != "" {
		versions = append([]string{str(vOut)}, versions...)
	}
	for _, v := range versions {
		got := crypto.Keccak256Hash(eip712DomainType[:], crypto.Keccak256([]byte(name)), crypto.Keccak256([]byte(v)),
			common.LeftPadBytes(c.chainID.Bytes(), 32), common.LeftPadBytes(c.token[:], 32))
		if got == sep {
			d = &tokenDomain{name: name, version: v, separator: sep}
			c.mu.Lock()
			c.tdomain = d
			c.mu.Unlock()
			return d, nil
		}
	}
	return nil, fmt.Errorf("settlement: %s: the token's EIP-712 domain is not (name %q, version %v, chain %d, the token): cannot build its typed data", c.env, name, versions, c.chainID.Int64())
}

func (c *chain) depositDigest(d *tokenDomain, nonce [32]byte, p *depositAuth) common.Hash {
	structHash := crypto.Keccak256(receiveAuthType[:], common.LeftPadBytes(p.from[:], 32), common.LeftPadBytes(c.contract[:], 32),
		common.LeftPadBytes(p.value.Bytes(), 32), make([]byte, 32), common.LeftPadBytes(new(big.Int).SetUint64(p.validBefore).Bytes(), 32), nonce[:])
	return crypto.Keccak256Hash([]byte("\x19\x01"), d.separator[:], structHash)
}

// DepositTypedData returns the EIP-712 typed data of the token's
// ReceiveWithAuthorization that a's wallet signs (eth_signTypedData_v4)
// to deposit a.Amount cents for customerID: to the contract, valid from
// now until a.ValidBefore, its nonce DepositNonce(the customer's ref,
// a.Owner, a.Salt).
func (s *Settler) DepositTypedData(ctx context.Context, env settleflow.Environment, customerID string, a DepositAuthorization) ([]byte, error) {
	c, ok := s.chains[env]
	if !ok {
		return nil, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	p, err := c.parseDeposit(a, false)
	if err != nil {
		return nil, err
	}
	d, err := c.tokenDomain(ctx)
	if err != nil {
		return nil, err
	}
	nonce := DepositNonce(c.ref(customerID), p.owner, p.salt)
	type field struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	return json.Marshal(map[string]any{
		"types": map[string][]field{
			"EIP712Domain": {{"name", "string"}, {"version", "string"}, {"chainId", "uint256"}, {"verifyingContract", "address"}},
			"ReceiveWithAuthorization": {{"from", "address"}, {"to", "address"}, {"value", "uint256"}, {"validAfter", "uint256"},
				{"validBefore", "uint256"}, {"nonce", "bytes32"}},
		},
		"primaryType": "ReceiveWithAuthorization",
		"domain":      map[string]any{"name": d.name, "version": d.version, "chainId": c.chainID.Int64(), "verifyingContract": c.token.Hex()},
		"message": map[string]any{"from": p.from.Hex(), "to": c.contract.Hex(), "value": p.value.String(), "validAfter": "0",
			"validBefore": fmt.Sprint(p.validBefore), "nonce": common.Hash(nonce).Hex()},
	})
}

// RelayDeposit checks a signed deposit authorization for customerID (the
// signature is a's signer's, over this customer, the owner the contract
// records, the amount, before its expiry; the signer holds the amount)
// and sends the operator's depositWithAuthorization through the chain's
// worker, returning its transaction. The operator pays the gas. Nothing
// is sent when a check fails: an *settleflow.InvalidError names the field.
func (s *Settler) RelayDeposit(ctx context.Context, env settleflow.Environment, customerID string, a DepositAuthorization) (string, error) {
	s.mu.RLock()
	c, ok := s.chains[env]
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return "", ErrClosed
	}
	if !ok {
		return "", fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	p, err := c.parseDeposit(a, true)
	if err != nil {
		return "", err
	}
	if now := c.now(); p.validBefore <= uint64(now.Unix()) {
		return "", invalidGrant("validBefore", "the authorization expired at %s", time.Unix(int64(p.validBefore), 0).UTC().Format(time.RFC3339))
	}
	d, err := c.tokenDomain(ctx)
	if err != nil {
		return "", err
	}
	ref := c.ref(customerID)
	nonce := DepositNonce(ref, p.owner, p.salt)
	digest := c.depositDigest(d, nonce, p)
	sig := bytes.Clone(p.sig)
	sig[64] -= 27
	pub, err := crypto.SigToPub(digest[:], sig)
	if err != nil || crypto.PubkeyToAddress(*pub) != p.from {
		return "", invalidGrant("signature", "the signature is not %s's authorization of this deposit (for customer %s and owner %s, of this amount, on chain %d, to contract %s)",
			p.from.Hex(), customerID, p.owner.Hex(), c.chainID.Int64(), c.contract.Hex())
	}
	recorded, err := c.ownerOf(ctx, ref)
	if err != nil {
		return "", err
	}
	if recorded != p.owner {
		return "", invalidGrant("owner", "the authorization names owner %s; the customer's balance is owned by %s: sign again", p.owner.Hex(), recorded.Hex())
	}
	holds, err := TokenBalance(ctx, c.b, c.token, p.from)
	if err != nil {
		return "", fmt.Errorf("settlement: %s: the wallet's balance: %w", c.env, err)
	}
	if holds.Cmp(p.value) < 0 {
		return "", invalidGrant("amount", "the wallet %s holds %s, less than the %s asked for", p.from.Hex(),
			FormatUnits(holds, int(c.decimals)), FormatUnits(p.value, int(c.decimals)))
	}
	data := settlementABI.PackDepositWithAuthorization(ref, p.owner, p.from, p.value, big.NewInt(0), new(big.Int).SetUint64(p.validBefore), p.salt,
		p.sig[64], [32]byte(p.sig[:32]), [32]byte(p.sig[32:64]))
	c.mu.Lock()
	it := c.owners[nonce]
	if it != nil && it.state != stFailed {
		same := bytes.Equal(it.call, data)
		c.mu.Unlock()
		if !same {
			return "", invalidGrant("salt", "this authorization's nonce was used already: sign a new one")
		}
	} else {
		c.mu.Unlock()
		// Ask the chain first, so an authorization it refuses (used,
		// expired) is the caller's error now, not a reverted transaction.
		if _, err := c.b.CallContract(ctx, ethereum.CallMsg{From: c.from, To: &c.contract, Data: data}, nil); err != nil {
			if e := relayRefusal(err); e != nil {
				return "", e
			}
			return "", fmt.Errorf("settlement: %s: checking the deposit: %w", c.env, err)
		}
		c.mu.Lock()
		if it = c.owners[nonce]; it == nil || it.state == stFailed {
			// A new relay: the operator's budget across customers, and
			// the wallet's, pay for it first (the same authorization
			// sent again costs nothing more).
			if err := c.relayBudget.take(c.cfg.Relays, c.env, p.from, c.now()); err != nil {
				c.mu.Unlock()
				return "", err
			}
			it = &oitem{customerID: customerID, ref: ref, call: data, payer: p.from, queuedAt: c.now(), sent: make(chan struct{})}
			c.owners[nonce] = it
			c.oqueue = append(c.oqueue, it)
		} else if !bytes.Equal(it.call, data) {
			c.mu.Unlock()
			return "", invalidGrant("salt", "this authorization's nonce was used already: sign a new one")
		}
		c.mu.Unlock()
	}
	c.poke()
	return c.awaitSent(ctx, it)
}

// awaitSent waits until a queued relay or owner grant is sent and returns
// its transaction. Queued, it is sent whether or not the caller still
// waits: a request canceled now must still learn the transaction, to
// record what the operator pays for. So the wait outlives ctx, by
// relaySendWait at most.
func (c *chain) awaitSent(ctx context.Context, it *oitem) (string, error) {
	select {
	case <-it.sent:
	case <-ctx.Done():
		select {
		case <-it.sent:
		case <-time.After(relaySendWait):
			return "", fmt.Errorf("settlement: %s: the transaction is queued and will be sent, but not within %s of the request's end: %w", c.env, relaySendWait, ctx.Err())
		}
	}
	if it.err != nil {
		return "", it.err
	}
	return it.hash.Hex(), nil
}

// relaySendWait is how long RelayDeposit and SetOwner still wait, after
// their ctx ended, for a queued transaction to be sent (the worker sends
// within a poll).
const relaySendWait = 30 * time.Second

// RelayBudget bounds the deposits the operator relays, and pays the gas
// of, across customers: a self-serve sign-up gives every new customer the
// portal's own hourly limit per customer, so only a budget over all of
// them bounds the operator's bill. It counts per clock hour (UTC), in this
// process: n processes sharing the operator relay at most n times the
// budget. A deposit over it is refused with a *RelayBudgetError and
// nothing is sent.
type RelayBudget struct {
	// PerHour is the most deposits relayed per hour in the environment,
	// all customers together. Default DefaultRelaysPerHour; negative: no
	// bound.
	PerHour int
	// PerWalletHour is the most relayed per hour from one signing wallet,
	// whichever customers it deposits for. Default
	// DefaultRelaysPerWalletHour; negative: no bound.
	PerWalletHour int
}

// The relay budget's defaults.
const (
	DefaultRelaysPerHour       = 500
	DefaultRelaysPerWalletHour = 20
)

func (b RelayBudget) limits() (perHour, perWallet int) {
	perHour, perWallet = b.PerHour, b.PerWalletHour
	if perHour == 0 {
		perHour = DefaultRelaysPerHour
	}
	if perWallet == 0 {
		perWallet = DefaultRelaysPerWalletHour
	}
	return perHour, perWallet
}

// Relay budget scopes (RelayBudgetError.Scope, RelayBudgetStatus.Refused).
const (
	RelayScopeOperator = "operator"
	RelayScopeWallet   = "wallet"
)

// RelayBudgetError is RelayDeposit's refusal of a deposit over the relay
// budget: nothing was sent.
type RelayBudgetError struct {
	Environment settleflow.Environment
	// Scope is RelayScopeOperator (all customers' relays this hour) or
	// RelayScopeWallet (this wallet's).
	Scope string
	// Wallet is the signer, for RelayScopeWallet.
	Wallet string
	// Limit is the budget spent; Until when the next hour begins.
	Limit int
	Until time.Time
}

func (e *RelayBudgetError) Error() string {
	if e.Scope == RelayScopeWallet {
		return fmt.Sprintf("settlement: %s: wallet %s has had %d deposits relayed this hour, the most one wallet gets; try again after %s",
			e.Environment, e.Wallet, e.Limit, e.Until.Format(time.RFC3339))
	}
	return fmt.Sprintf("settlement: %s: the operator has relayed %d deposits this hour, its budget across customers; try again after %s",
		e.Environment, e.Limit, e.Until.Format(time.RFC3339))
}

// relayBudget counts one environment's relays of the current hour. Its
// owner's mu guards it.
type relayBudget struct {
	hour     time.Time
	total    int
	byWallet map[common.Address]int
	refused  map[string]int64 // by scope, since start
}

// take counts one relay from wallet at now, or refuses it.
func (r *relayBudget) take(b RelayBudget, env settleflow.Environment, wallet common.Address, now time.Time) error {
	perHour, perWallet := b.limits()
	if hour := now.UTC().Truncate(time.Hour); !hour.Equal(r.hour) {
		r.hour, r.total, r.byWallet = hour, 0, map[common.Address]int{}
	}
	if r.refused == nil {
		r.refused = map[string]int64{}
	}
	until := r.hour.Add(time.Hour)
	if perHour >= 0 && r.total >= perHour {
		r.refused[RelayScopeOperator]++
		return &RelayBudgetError{Environment: env, Scope: RelayScopeOperator, Limit: perHour, Until: until}
	}
	if perWallet >= 0 && r.byWallet[wallet] >= perWallet {
		r.refused[RelayScopeWallet]++
		return &RelayBudgetError{Environment: env, Scope: RelayScopeWallet, Wallet: wallet.Hex(), Limit: perWallet, Until: until}
	}
	r.total++
	r.byWallet[wallet]++
	return nil
}

// RelayBudgetStatus is how much of an environment's relay budget this
// hour has used (metrics and readiness).
type RelayBudgetStatus struct {
	Environment settleflow.Environment
	// Hour is the clock hour counted; Used the deposits relayed in it,
	// Limit the budget (-1: none).
	Hour  time.Time
	Used  int
	Limit int
	// Spent: Used reached Limit; relays are refused until the next hour.
	Spent bool
	// WalletsSpent counts the wallets that used their own budget this
	// hour; WalletLimit is that budget (-1: none).
	WalletsSpent int
	WalletLimit  int
	// Refused counts the relays refused since start, by scope
	// (RelayScopeOperator, RelayScopeWallet).
	Refused map[string]int64
}

// Problem says in a sentence that the budget is spent; "" if it is not.
func (st RelayBudgetStatus) Problem() string {
	if !st.Spent {
		return ""
	}
	return fmt.Sprintf("%s relay budget spent: %d deposits relayed this hour, the most across customers; relays are refused until %s",
		st.Environment, st.Used, st.Hour.Add(time.Hour).Format(time.RFC3339))
}

// RelayBudgets reports each environment's relay budget of this hour.
func (s *Settler) RelayBudgets() []RelayBudgetStatus {
	var out []RelayBudgetStatus
	for _, env := range []settleflow.Environment{settleflow.Test, settleflow.Live} {
		c, ok := s.chains[env]
		if !ok {
			continue
		}
		perHour, perWallet := c.cfg.Relays.limits()
		now := c.now()
		c.mu.Lock()
		r := &c.relayBudget
		st := RelayBudgetStatus{Environment: env, Hour: now.UTC().Truncate(time.Hour), Limit: max(perHour, -1), WalletLimit: max(perWallet, -1), Refused: map[string]int64{}}
		if r.hour.Equal(st.Hour) {
			st.Used = r.total
			for _, n := range r.byWallet {
				if perWallet >= 0 && n >= perWallet {
					st.WalletsSpent++
				}
			}
		}
		for k, v := range r.refused {
			st.Refused[k] = v
		}
		c.mu.Unlock()
		st.Spent = perHour >= 0 && st.Used >= perHour
		out = append(out, st)
	}
	return out
}

// relayRefusal maps a revert of depositWithAuthorization to the caller's
// error, or nil if err is not a revert.
func relayRefusal(err error) error {
	var de rpc.DataError
	if !errors.As(err, &de) && !strings.Contains(strings.ToLower(err.Error()), "execution reverted") {
		return nil
	}
	var data []byte
	if de != nil {
		if s, ok := de.ErrorData().(string); ok {
			data, _ = hexutil.Decode(s)
		}
	}
	if len(data) >= 4 {
		if e, uerr := settlementABI.UnpackError(data); uerr == nil {
			return invalidGrant("", "the contract refuses the deposit: %T", e)
		}
		if e, uerr := erc20ABI.UnpackError(data); uerr == nil {
			return invalidGrant("signature", "the token refuses the authorization: %T", e)
		}
	}
	return invalidGrant("signature", "the chain refuses the deposit: %v", err)
}

// RelayReceipt is what became of a relayed transaction.
type RelayReceipt struct {
	// Mined: the transaction is in a block of the canonical chain.
	Mined bool
	// Succeeded: it did not revert (when Mined).
	Succeeded bool
	// Confirmations is how many blocks are on top of it, counting its
	// own; Final when they reach the environment's depth.
	Confirmations uint64
	Final         bool
	// GasUsed and Fee (wei: GasUsed × the effective gas price) are what
	// the operator paid for it.
	GasUsed uint64
	Fee     *big.Int
	// CreditedBy is set when the relay reverted because another
	// transaction used its authorization first (whoever saw the relay in
	// the mempool sent the same depositWithAuthorization): that
	// transaction, 0x-hex. The deposit was credited as signed (the
	// authorization's nonce binds the customer and owner, and the token
	// accepts it only from the contract, which credits it in the same
	// call): show it credited, not failed.
	CreditedBy string
}

// authorizationUsedEventID is the token's EIP-3009 AuthorizationUsed.
var authorizationUsedEventID = erc20ABI.GetABI().Events["AuthorizationUsed"].ID

// creditedBy finds, for a reverted relay, the transaction that used its
// authorization first; nil when none did (the relay failed).
func (c *chain) creditedBy(ctx context.Context, hash common.Hash, block uint64) (*common.Hash, error) {
	tx, _, err := c.b.TransactionByHash(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: transaction %s: %w", c.env, hash.Hex(), err)
	}
	data := tx.Data()
	m := settlementABI.GetABI().Methods["depositWithAuthorization"]
	if len(data) < 4 || !bytes.Equal(data[:4], m.ID) {
		return nil, nil
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil || len(args) < 7 {
		return nil, nil
	}
	ref, ok1 := args[0].([32]byte)
	owner, ok2 := args[1].(common.Address)
	from, ok3 := args[2].(common.Address)
	salt, ok4 := args[6].([32]byte)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, nil
	}
	nonce := DepositNonce(ref, owner, salt)
	// The authorization was used at or before the relay's block; look
	// back one log window (a front-runner is a block or two ahead).
	fromBlock := c.deployed
	if block >= FundsLogRange && block-FundsLogRange+1 > fromBlock {
		fromBlock = block - FundsLogRange + 1
	}
	logs, err := c.b.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(fromBlock), ToBlock: new(big.Int).SetUint64(block),
		Addresses: []common.Address{c.token}, Topics: [][]common.Hash{{authorizationUsedEventID}, {common.BytesToHash(from[:])}, {nonce}}})
	if err != nil {
		return nil, fmt.Errorf("settlement: %s: the authorization of %s: %w", c.env, hash.Hex(), err)
	}
	for _, l := range logs {
		if !l.Removed && l.TxHash != hash {
			h := l.TxHash
			return &h, nil
		}
	}
	return nil, nil
}

// RelayReceipt reads the receipt of a transaction the operator sent.
func (s *Settler) RelayReceipt(ctx context.Context, env settleflow.Environment, tx string) (RelayReceipt, error) {
	c, ok := s.chains[env]
	if !ok {
		return RelayReceipt{}, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	r, err := c.b.TransactionReceipt(ctx, common.HexToHash(tx))
	if errors.Is(err, ethereum.NotFound) || (err == nil && r == nil) {
		return RelayReceipt{}, nil
	}
	if err != nil {
		return RelayReceipt{}, fmt.Errorf("settlement: %s: receipt of %s: %w", env, tx, err)
	}
	head, err := c.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return RelayReceipt{}, fmt.Errorf("settlement: %s: head: %w", env, err)
	}
	out := RelayReceipt{Mined: true, Succeeded: r.Status == 1, GasUsed: r.GasUsed, Fee: new(big.Int)}
	if r.EffectiveGasPrice != nil {
		out.Fee.Mul(r.EffectiveGasPrice, new(big.Int).SetUint64(r.GasUsed))
	}
	if n := head.Number.Uint64(); n >= r.BlockNumber.Uint64() {
		out.Confirmations = n - r.BlockNumber.Uint64() + 1
	}
	out.Final = out.Confirmations >= max(c.cfg.Confirmations, 1)
	if !out.Succeeded {
		by, err := c.creditedBy(ctx, r.TxHash, r.BlockNumber.Uint64())
		if err != nil {
			return RelayReceipt{}, err
		}
		if by != nil {
			out.CreditedBy = by.Hex()
		}
	}
	return out, nil
}

// Call is a transaction for a wallet to send (eth_sendTransaction): to
// the contract, with this data, no value.
type Call struct {
	To   string `json:"to"`
	Data string `json:"data"`
}

// The calls an owner's wallet sends.
const (
	CallRequestWithdrawal = "requestWithdrawal"
	CallCancelWithdrawal  = "cancelWithdrawal"
	CallWithdraw          = "withdraw"
	// CallCancelOwnerChange cancels an owner change the operator proposed
	// (the owner's answer to a change it did not ask for).
	CallCancelOwnerChange = "cancelOwnerChange"
)

// OwnerCall builds the owner's call method (CallRequestWithdrawal with
// cents, CallCancelWithdrawal, CallWithdraw or CallCancelOwnerChange) on customerID's balance in
// env's contract.
func (s *Settler) OwnerCall(env settleflow.Environment, customerID, method string, cents int64) (Call, error) {
	c, ok := s.chains[env]
	if !ok {
		return Call{}, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	ref := c.ref(customerID)
	var data []byte
	switch method {
	case CallRequestWithdrawal:
		v, err := BaseUnits(cents, c.decimals)
		if err != nil || cents < 1 {
			return Call{}, invalidGrant("amount", "amount must be a whole number of cents, at least 1")
		}
		data = settlementABI.PackRequestWithdrawal(ref, v)
	case CallCancelWithdrawal:
		data = settlementABI.PackCancelWithdrawal(ref)
	case CallWithdraw:
		data = settlementABI.PackWithdraw(ref)
	case CallCancelOwnerChange:
		data = settlementABI.PackCancelOwnerChange(ref)
	default:
		return Call{}, fmt.Errorf("settlement: no owner call %q", method)
	}
	return Call{To: c.contract.Hex(), Data: hexutil.Encode(data)}, nil
}

// Withdrawal is a customer's withdrawal under notice, as the contract
// records it at the latest block.
type Withdrawal struct {
	// Pending is the amount under notice, in cents; 0 none.
	Pending int64
	// AvailableAt is when it can be withdrawn.
	AvailableAt time.Time
	// Notice is the contract's withdrawal notice.
	Notice time.Duration
}

// Withdrawal reads customerID's withdrawal under notice in env's contract.
func (s *Settler) Withdrawal(ctx context.Context, env settleflow.Environment, customerID string) (Withdrawal, error) {
	c, ok := s.chains[env]
	if !ok {
		return Withdrawal{}, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackAccount(c.ref(customerID))}, nil)
	if err != nil {
		return Withdrawal{}, fmt.Errorf("settlement: %s: account: %w", env, err)
	}
	a, err := settlementABI.UnpackAccount(out)
	if err != nil {
		return Withdrawal{}, fmt.Errorf("settlement: %s: account: %w", env, err)
	}
	w := Withdrawal{Notice: c.notice}
	if a.Pending.Sign() > 0 {
		w.Pending = new(big.Int).Quo(a.Pending, c.unit).Int64()
		w.AvailableAt = time.Unix(a.AvailableAt.Int64(), 0).UTC()
	}
	return w, nil
}

// WalletBalance is what address holds of env's token, in cents (rounded
// down).
func (s *Settler) WalletBalance(ctx context.Context, env settleflow.Environment, address string) (int64, error) {
	c, ok := s.chains[env]
	if !ok {
		return 0, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	if !common.IsHexAddress(address) {
		return 0, invalidGrant("address", "not an address")
	}
	v, err := TokenBalance(ctx, c.b, c.token, common.HexToAddress(address))
	if err != nil {
		return 0, err
	}
	q := new(big.Int).Quo(v, c.unit)
	if !q.IsInt64() {
		return 1<<63 - 1, nil
	}
	return q.Int64(), nil
}
