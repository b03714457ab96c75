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
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/settlement/contracts/bindings"
)

// Owners: a customer's balance is owned by the address the operator sets
// with that address's own EIP-712 signature of an OwnerGrant (contract
// version 3 and later; version 4 keeps each signer's grant nonces apart and
// restarts a pending withdrawal's notice on an owner change). The
// operator's setOwner goes out through the chain's worker, which owns the
// operator's nonces, one transaction per grant.

var _ settleflow.OwnerSetter = (*Settler)(nil)

// ContractVersion is the version of the settlement contract this package
// deploys and settles with (the contract's version()).
const ContractVersion = 4

// grantDomainVersion is the EIP-712 domain version of OwnerGrants: the
// contract's version.
var grantDomainVersion = fmt.Sprint(ContractVersion)

var (
	eip712DomainType = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	ownerGrantType   = crypto.Keccak256Hash([]byte("OwnerGrant(bytes32 customerRef,address owner,bytes32 nonce,string origin,uint256 deadline)"))
	// secp256k1n / 2: a signature with a higher s is refused (malleability).
	secp256k1HalfN = new(big.Int).Rsh(crypto.S256().Params().N, 1)
)

// MaxOriginLength bounds an OwnerGrant's origin.
const MaxOriginLength = 256

// contractVersion reads the settlement contract's version(); a contract
// without one (version 2 and older) is an error.
func contractVersion(ctx context.Context, b ethereum.ContractCaller, contract common.Address) (uint64, error) {
	out, err := b.CallContract(ctx, ethereum.CallMsg{To: &contract, Data: settlementABI.PackVersion()}, nil)
	if err != nil {
		return 0, err
	}
	v, err := settlementABI.UnpackVersion(out)
	if err != nil || !v.IsUint64() {
		return 0, fmt.Errorf("no version(): %v", err)
	}
	return v.Uint64(), nil
}

// versionName names a contract version as contractVersion read it.
func versionName(v uint64, err error) string {
	if err != nil {
		return "version 2 or older (it has no version())"
	}
	return fmt.Sprintf("version %d", v)
}

// OwnerGrantDigest is the EIP-712 digest the owner signs for a grant on the
// contract at contract on chain chainID.
func OwnerGrantDigest(chainID *big.Int, contract common.Address, ref [32]byte, owner common.Address, nonce [32]byte, origin string, deadline uint64) common.Hash {
	domain := crypto.Keccak256(eip712DomainType[:], crypto.Keccak256([]byte("SettleflowSettlement")), crypto.Keccak256([]byte(grantDomainVersion)),
		common.LeftPadBytes(chainID.Bytes(), 32), common.LeftPadBytes(contract[:], 32))
	structHash := crypto.Keccak256(ownerGrantType[:], ref[:], common.LeftPadBytes(owner[:], 32), nonce[:],
		crypto.Keccak256([]byte(origin)), common.LeftPadBytes(new(big.Int).SetUint64(deadline).Bytes(), 32))
	return crypto.Keccak256Hash([]byte("\x19\x01"), domain, structHash)
}

// grant is an OwnerGrant parsed.
type grant struct {
	owner    common.Address
	nonce    [32]byte
	origin   string
	deadline uint64
	sig      []byte // 65 bytes, v as 27/28; nil when not needed
}

func invalidGrant(param, format string, args ...any) error {
	return &settleflow.InvalidError{Code: settleflow.CodeParameterInvalid, Param: param, Message: fmt.Sprintf(format, args...)}
}

// parseGrant checks g's fields; with needSig, its signature's form too.
func parseGrant(g settleflow.OwnerGrant, needSig bool) (*grant, error) {
	var p grant
	if !common.IsHexAddress(g.Owner) || !strings.HasPrefix(g.Owner, "0x") {
		return nil, invalidGrant("address", "address must be a 0x-prefixed 20-byte hex address")
	}
	if p.owner = common.HexToAddress(g.Owner); p.owner == (common.Address{}) {
		return nil, invalidGrant("address", "address must not be the zero address")
	}
	n, err := hexutil.Decode(g.Nonce)
	if err != nil || len(n) != 32 {
		return nil, invalidGrant("nonce", "nonce must be 32 bytes, 0x-hex (64 hex digits)")
	}
	p.nonce = [32]byte(n)
	if len(g.Origin) == 0 || len(g.Origin) > MaxOriginLength {
		return nil, invalidGrant("origin", "origin must be 1 to %d characters", MaxOriginLength)
	}
	p.origin = g.Origin
	if g.Deadline.IsZero() || g.Deadline.Unix() <= 0 || g.Deadline.Nanosecond() != 0 {
		return nil, invalidGrant("deadline", "deadline must be a time in whole seconds")
	}
	p.deadline = uint64(g.Deadline.Unix())
	if !needSig {
		return &p, nil
	}
	sig, err := parseSignature(g.Signature)
	if err != nil {
		return nil, err
	}
	p.sig = sig
	return &p, nil
}

// key is the grant's key in the chain's queue of owner grants and relayed
// deposits: its nonce is one-time per signer (the owner it names), as the
// contract keeps it, so a grant of another signer under the same nonce is
// another grant (a relayed deposit's key is its EIP-3009 nonce).
func (p *grant) key() [32]byte {
	return crypto.Keccak256Hash([]byte("OwnerGrant"), p.owner[:], p.nonce[:])
}

// digest is the grant's EIP-712 digest for customerID's balance in c.
func (c *chain) grantDigest(ref [32]byte, p *grant) common.Hash {
	return OwnerGrantDigest(c.chainID, c.contract, ref, p.owner, p.nonce, p.origin, p.deadline)
}

// OwnerGrantTypedData implements settleflow.OwnerSetter.
func (s *Settler) OwnerGrantTypedData(env settleflow.Environment, customerID string, g settleflow.OwnerGrant) ([]byte, error) {
	c, ok := s.chains[env]
	if !ok {
		return nil, fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	p, err := parseGrant(g, false)
	if err != nil {
		return nil, err
	}
	ref := c.ref(customerID)
	type field struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	td := map[string]any{
		"types": map[string][]field{
			"EIP712Domain": {{"name", "string"}, {"version", "string"}, {"chainId", "uint256"}, {"verifyingContract", "address"}},
			"OwnerGrant":   {{"customerRef", "bytes32"}, {"owner", "address"}, {"nonce", "bytes32"}, {"origin", "string"}, {"deadline", "uint256"}},
		},
		"primaryType": "OwnerGrant",
		"domain": map[string]any{"name": "SettleflowSettlement", "version": grantDomainVersion, "chainId": c.chainID.Int64(),
			"verifyingContract": c.contract.Hex()},
		"message": map[string]any{"customerRef": common.Hash(ref).Hex(), "owner": p.owner.Hex(), "nonce": common.Hash(p.nonce).Hex(),
			"origin": p.origin, "deadline": fmt.Sprint(p.deadline)},
	}
	return json.Marshal(td)
}

// oitem is one setOwner the chain's worker sends, or one deposit it
// relays (call set, g nil).
type oitem struct {
	customerID string
	ref        [32]byte
	g          *grant
	// call is a relayed deposit's depositWithAuthorization; payer its
	// signer.
	call     []byte
	payer    common.Address
	state    itemState
	tx       *sentTx
	queuedAt time.Time
	doneAt   time.Time
	// sent is closed once the transaction is sent, or the item failed.
	sent chan struct{}
	hash common.Hash
	err  error
}

// same reports whether it was queued for the same grant of the same
// customer (a grant sent again answers its first transaction; another
// grant under its nonce is refused).
func (it *oitem) same(customerID string, p *grant) bool {
	return it.g != nil && it.customerID == customerID && it.g.owner == p.owner && it.g.origin == p.origin && it.g.deadline == p.deadline &&
		bytes.Equal(it.g.sig, p.sig)
}

// SetOwner implements settleflow.OwnerSetter.
func (s *Settler) SetOwner(ctx context.Context, env settleflow.Environment, customerID string, g settleflow.OwnerGrant) (string, error) {
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
	p, err := parseGrant(g, true)
	if err != nil {
		return "", err
	}
	ref := c.ref(customerID)
	if now := c.now(); p.deadline < uint64(now.Unix()) {
		return "", invalidGrant("deadline", "the grant expired at %s", time.Unix(int64(p.deadline), 0).UTC().Format(time.RFC3339))
	}
	d := c.grantDigest(ref, p)
	sig := bytes.Clone(p.sig)
	sig[64] -= 27
	pub, err := crypto.SigToPub(d[:], sig)
	if err != nil || crypto.PubkeyToAddress(*pub) != p.owner {
		return "", invalidGrant("signature", "the signature is not %s's signature of this grant (for customer %s, on chain %d, contract %s, with this nonce, origin and deadline)",
			p.owner.Hex(), customerID, c.chainID.Int64(), c.contract.Hex())
	}
	key := p.key()
	c.mu.Lock()
	it := c.owners[key]
	if it != nil && it.state == stFailed {
		it = nil
	}
	if it != nil && !it.same(customerID, p) {
		c.mu.Unlock()
		return "", invalidGrant("nonce", "this grant's nonce was used already by another grant: a grant sets an owner once; sign a new one")
	}
	if it == nil {
		c.mu.Unlock()
		// Ask the contract first, so a grant it refuses is the caller's
		// error now, not a reverted transaction later.
		if err := c.checkSetOwner(ctx, ref, p); err != nil {
			return "", err
		}
		c.mu.Lock()
		if it = c.owners[key]; it == nil || it.state == stFailed {
			it = &oitem{customerID: customerID, ref: ref, g: p, queuedAt: c.now(), sent: make(chan struct{})}
			c.owners[key] = it
			c.oqueue = append(c.oqueue, it)
		} else if !it.same(customerID, p) {
			c.mu.Unlock()
			return "", invalidGrant("nonce", "this grant's nonce was used already by another grant: a grant sets an owner once; sign a new one")
		}
	}
	c.mu.Unlock()
	c.poke()
	return c.awaitSent(ctx, it) // sent once queued, though ctx ends (relay.go)
}

// checkSetOwner runs setOwner as a call from the operator and turns the
// contract's refusal into the caller's error.
func (c *chain) checkSetOwner(ctx context.Context, ref [32]byte, p *grant) error {
	_, err := c.b.CallContract(ctx, ethereum.CallMsg{From: c.from, To: &c.contract, Data: c.packSetOwner(ref, p)}, nil)
	if err == nil {
		return nil
	}
	if e := grantRefusal(err); e != nil {
		return e
	}
	return fmt.Errorf("settlement: %s: checking the owner grant: %w", c.env, err)
}

// pack is the call data of it.
func (c *chain) pack(it *oitem) []byte {
	if it.call != nil {
		return it.call
	}
	return c.packSetOwner(it.ref, it.g)
}

// who names it in the log: the owner granted, or the relayed deposit's
// payer.
func (it *oitem) who() zap.Field {
	if it.g == nil {
		return zap.Stringer("payer", it.payer)
	}
	return zap.Stringer("owner", it.g.owner)
}

func (c *chain) packSetOwner(ref [32]byte, p *grant) []byte {
	return settlementABI.PackSetOwner(ref, p.owner, p.nonce, p.origin, new(big.Int).SetUint64(p.deadline), p.sig[64], [32]byte(p.sig[:32]), [32]byte(p.sig[32:64]))
}

// grantRefusal maps the contract's refusal of a setOwner to the caller's
// error, or nil if err is not a refusal the contract explains.
func grantRefusal(err error) error {
	var de rpc.DataError
	if !errors.As(err, &de) {
		return nil
	}
	s, ok := de.ErrorData().(string)
	if !ok {
		return nil
	}
	data, _ := hexutil.Decode(s)
	if len(data) < 4 {
		return nil
	}
	e, uerr := settlementABI.UnpackError(data)
	if uerr != nil {
		return nil
	}
	switch e.(type) {
	case *bindings.SettleflowSettlementGrantUsed:
		return invalidGrant("nonce", "this grant's nonce was used already: a grant sets an owner once; sign a new one")
	case *bindings.SettleflowSettlementGrantExpired:
		return invalidGrant("deadline", "the grant expired on chain")
	case *bindings.SettleflowSettlementBadSignature:
		return invalidGrant("signature", "the contract refuses the signature")
	case *bindings.SettleflowSettlementOwnerUnchanged:
		return invalidGrant("address", "this address already owns the customer's balance")
	case *bindings.SettleflowSettlementNotOperator:
		return fmt.Errorf("settlement: the signer is not the contract's operator")
	}
	return invalidGrant("", "the contract refuses the grant: %T", e)
}

// flushOwners sends each queued setOwner, one transaction each.
func (c *chain) flushOwners(ctx context.Context, head *types.Header) error {
	for {
		c.mu.Lock()
		if len(c.oqueue) == 0 {
			c.mu.Unlock()
			return nil
		}
		it := c.oqueue[0]
		c.mu.Unlock()
		data := c.pack(it)
		gas, err := c.estimate(ctx, head, data, 0)
		if err != nil {
			refusal := grantRefusal(err)
			if it.call != nil {
				refusal = relayRefusal(err)
			}
			if refusal != nil {
				c.failOwner(it, refusal)
				continue
			}
			return fmt.Errorf("estimate setOwner or a relayed deposit: %w", err)
		}
		t := &sentTx{owners: []*oitem{it}}
		// An operator that cannot pay for gas leaves it queued (errGasShort).
		if err := c.dispatch(ctx, head, data, gas, t); err != nil {
			return err
		}
		c.mu.Lock()
		it.state, it.tx, it.hash = stSent, t, t.latest().Hash()
		c.oqueue = c.oqueue[1:]
		c.mu.Unlock()
		closeOnce(it.sent)
		c.log.Info("owner grant or relayed deposit sent", zap.String("customer", it.customerID), it.who(), zap.Stringer("tx", it.hash))
	}
}

// failOwner ends a queued setOwner with err.
func (c *chain) failOwner(it *oitem, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it.state, it.err, it.doneAt = stFailed, err, c.now()
	for i, q := range c.oqueue {
		if q == it {
			c.oqueue = append(c.oqueue[:i], c.oqueue[i+1:]...)
			break
		}
	}
	closeOnce(it.sent)
}

// closeOnce closes ch unless it is closed already (callers hold no lock
// that a reader of ch takes; the worker goroutine is the only closer).
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// finishOwners ends a final setOwner transaction.
func (c *chain) finishOwners(_ context.Context, t *sentTx) error {
	ok := t.receipt.Status == types.ReceiptStatusSuccessful
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeTxLocked(t)
	now := c.now()
	for _, it := range t.owners {
		it.tx, it.doneAt = nil, now
		if ok {
			it.state = stConfirmed
			continue
		}
		it.state = stFailed
		c.log.Error("owner grant or relayed deposit transaction reverted", zap.String("customer", it.customerID), it.who(),
			zap.Stringer("tx", t.receipt.TxHash))
	}
	return nil
}

// Owner implements settleflow.OwnerSetter: the owner the contract records
// for the customer at the latest block.
func (s *Settler) Owner(ctx context.Context, env settleflow.Environment, customerID string) (string, error) {
	c, ok := s.chains[env]
	if !ok {
		return "", fmt.Errorf("settlement: no chain is configured for %s mode", env)
	}
	out, err := c.b.CallContract(ctx, ethereum.CallMsg{To: &c.contract, Data: settlementABI.PackAccount(c.ref(customerID))}, nil)
	if err != nil {
		return "", fmt.Errorf("settlement: %s: reading the owner of %s: %w", env, customerID, err)
	}
	a, err := settlementABI.UnpackAccount(out)
	if err != nil {
		return "", fmt.Errorf("settlement: %s: reading the owner of %s: %w", env, customerID, err)
	}
	if a.Owner == (common.Address{}) {
		return "", nil
	}
	return a.Owner.Hex(), nil
}

// parseSignature decodes a 65-byte (r, s, v) EIP-712 signature, v as 27 or
// 28 (0 and 1 are taken as 27 and 28), refusing a malleable one (s in the
// upper half of the curve order): the owner grants' and the relayed
// deposits' one check.
func parseSignature(hexSig string) ([]byte, error) {
	sig, err := hexutil.Decode(hexSig)
	if err != nil || len(sig) != 65 {
		return nil, invalidGrant("signature", "signature must be 65 bytes (r, s, v), 0x-hex")
	}
	if sig[64] < 27 {
		sig[64] += 27
	}
	if sig[64] != 27 && sig[64] != 28 {
		return nil, invalidGrant("signature", "signature's v must be 27 or 28")
	}
	if new(big.Int).SetBytes(sig[32:64]).Cmp(secp256k1HalfN) > 0 {
		return nil, invalidGrant("signature", "signature's s is in the upper half of the curve order (a malleable signature)")
	}
	return sig, nil
}
