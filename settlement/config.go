package settlement

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"go.uber.org/zap"

	"github.com/settleflow/settleflow"
)

// Backend is the part of a JSON-RPC client the settler uses. Both
// *ethclient.Client and the simulated backend's client satisfy it.
type Backend interface {
	ethereum.ChainIDReader
	ethereum.BlockNumberReader
	ethereum.ChainReader
	ethereum.ChainStateReader
	ethereum.ContractCaller
	ethereum.GasEstimator
	ethereum.GasPricer1559
	ethereum.LogFilterer
	ethereum.PendingStateReader
	ethereum.TransactionReader
	ethereum.TransactionSender
}

// ChainConfig configures one environment's chain.
type ChainConfig struct {
	// RPCURL is the node's JSON-RPC endpoint (http, https, ws or ipc). Ignored
	// when Client is set.
	RPCURL string
	// Client, if set, is used instead of dialing RPCURL (embedding, tests).
	Client Backend
	// ChainID is the chain id the node must report. Required for live; for
	// test, 0 accepts any testnet id.
	ChainID int64
	// Network names the chain in each Settlement; default from ChainID
	// ("base-sepolia", "mainnet", ...).
	Network string
	// Contract is the deployed SettleflowSettlement. Required.
	Contract common.Address
	// Token, if set, must be the contract's token.
	Token common.Address
	// Payee, if set, must be the contract's payee.
	Payee common.Address

	// The operator's signing key: Key, else KeyFile (a hex private key, as
	// written by go-ethereum's crypto.SaveECDSA), else KeystoreFile (a
	// go-ethereum keystore JSON file) with KeystorePassword or
	// KeystorePasswordFile.
	Key                  *ecdsa.PrivateKey
	KeyFile              string
	KeystoreFile         string
	KeystorePassword     string
	KeystorePasswordFile string

	// CustomerRefSecret keys each customer's reference in the contract
	// (see [CustomerRef]): at least 16 bytes, 32 random bytes recommended.
	// Required. Keep it with the deployment: the balances on chain are
	// found by it, and a new secret finds none of them.
	CustomerRefSecret []byte

	// FaucetKey (or FaucetKeyFile, a hex private key) is the test faucet's
	// account, for test mode only: it holds test tokens, has approved the
	// contract, and deposits for test customers (settleflow.Funds.Faucet).
	// Nil: no faucet (a test customer is funded by depositing for it).
	FaucetKey     *ecdsa.PrivateKey
	FaucetKeyFile string

	// Confirmations is the depth at which a settlement is final: the block
	// holding it plus Confirmations-1 blocks on top. 0 (the default) waits
	// until the block is at or below the node's "finalized" block.
	Confirmations uint64
	// BatchSize is the most charges in one transaction (default 100; the
	// contract handles 500 in well under a block).
	BatchSize int
	// FlushInterval is the longest a queued charge waits for its batch to
	// fill (default 2s).
	FlushInterval time.Duration
	// PollInterval is how often receipts and the head are checked (default 2s).
	PollInterval time.Duration
	// BlockTime is the chain's expected time between blocks, from which
	// Status tells the engine when a pending charge is worth asking about
	// again (settleflow.SettlementStatus.CheckAfter). Default: measured at
	// start from the timestamps of the last 64 blocks (12 s on a chain too
	// young to tell).
	BlockTime time.Duration
	// BlocksOnDemand says the chain seals a block only when a transaction
	// waits (the simulated chain, which sets it; geth --dev without
	// --dev.period): its head's block time says nothing about whether the
	// node is current, so the funds view is judged current whenever the
	// node answers (see Settler.FundsChainTime). Test environment only: a
	// live chain with it set is refused. Default false: the funds view is
	// as old as the node's head block.
	BlocksOnDemand bool
	// Relays bounds the deposits the operator relays (and pays the gas
	// of) across customers: see RelayBudget.
	Relays RelayBudget
	// StuckAfter: a transaction not mined this long after it was (re)sent,
	// while blocks kept coming, is replaced with higher fees (default 60s).
	StuckAfter time.Duration
	// RebroadcastAfter: a transaction the node no longer knows is sent again
	// after this long (default 15s).
	RebroadcastAfter time.Duration
	// TipCap fixes the initial priority fee; nil asks the node.
	TipCap *big.Int
	// MaxFeeCap bounds the fee cap of any transaction, bumps included; nil is
	// no bound.
	MaxFeeCap *big.Int
	// Retain is how long a final charge stays in memory (default 1h); after
	// that Status finds it on chain.
	Retain time.Duration
	// LogRange is the most blocks one eth_getLogs query may span when Status
	// searches the chain for a charge it has no record of. 0 (the default)
	// asks for the contract's whole life at once and, if the node refuses,
	// searches windows of 10,000 blocks from the head down.
	LogRange uint64
}

// Config configures [New].
type Config struct {
	// Live is the mainnet chain; nil leaves live mode unconfigured: its
	// charges fail with "livemode_not_configured".
	Live *ChainConfig
	// Test is the testnet chain; nil leaves test mode unconfigured (use
	// [NewSimulated] for the in-process default).
	Test *ChainConfig
	// Logger receives the settler's logs; nil is a no-op logger.
	Logger *zap.Logger
	// Clock stamps settlements and ages what the settler remembers; nil is
	// settleflow.SystemClock. (How long a transaction has waited is measured
	// on the monotonic clock, whatever this says.)
	Clock settleflow.Clock
	// Lease, when several processes share the operator's account, keeps
	// its transactions to one sender at a time: the settler sends, bumps
	// and rebroadcasts only while Lease.Term() is not 0; each new term
	// reads the account's nonce back from the chain (another holder sent
	// meanwhile), and a term's end drops the charges queued and not yet
	// sent (the holder's engine submits them again). Give it the engine's
	// Options.SettlementLease. Nil: this process is the only sender.
	Lease settleflow.SettlementLease
}

var mainnetIDs = map[int64]string{
	1:     "mainnet",
	10:    "optimism",
	137:   "polygon",
	8453:  "base",
	42161: "arbitrum",
}

var testnetIDs = map[int64]string{
	11155111: "sepolia",
	84532:    "base-sepolia",
	1337:     "dev",
	17000:    "holesky",
	80002:    "polygon-amoy",
	421614:   "arbitrum-sepolia",
	11155420: "optimism-sepolia",
}

// CheckChainKind refuses a chain of the wrong kind for env: a known mainnet
// id for test, a known testnet id (the simulated backend's 1337 included) for
// live.
func CheckChainKind(env settleflow.Environment, chainID int64) error {
	switch env {
	case settleflow.Test:
		if name, ok := mainnetIDs[chainID]; ok {
			return fmt.Errorf("settlement: test mode refuses chain id %d (%s), a mainnet", chainID, name)
		}
	case settleflow.Live:
		if name, ok := testnetIDs[chainID]; ok {
			return fmt.Errorf("settlement: live mode refuses chain id %d (%s), a testnet", chainID, name)
		}
	default:
		return fmt.Errorf("settlement: unknown environment %q", env)
	}
	return nil
}

// NetworkName is the default name of a chain id, or "chain-<id>".
func NetworkName(chainID int64) string {
	if n, ok := mainnetIDs[chainID]; ok {
		return n
	}
	if n, ok := testnetIDs[chainID]; ok {
		return n
	}
	return fmt.Sprintf("chain-%d", chainID)
}

func (c ChainConfig) withDefaults() ChainConfig {
	if c.BatchSize <= 0 {
		c.BatchSize = 100
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 2 * time.Second
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 2 * time.Second
	}
	if c.StuckAfter <= 0 {
		c.StuckAfter = 60 * time.Second
	}
	if c.RebroadcastAfter <= 0 {
		c.RebroadcastAfter = 15 * time.Second
	}
	if c.Retain <= 0 {
		c.Retain = time.Hour
	}
	return c
}

// faucetKey loads the faucet's key, if one is configured.
func (c ChainConfig) faucetKey() (*ecdsa.PrivateKey, error) {
	switch {
	case c.FaucetKey != nil:
		return c.FaucetKey, nil
	case c.FaucetKeyFile != "":
		k, err := crypto.LoadECDSA(c.FaucetKeyFile)
		if err != nil {
			return nil, fmt.Errorf("settlement: faucet key file %s: %w", c.FaucetKeyFile, err)
		}
		return k, nil
	}
	return nil, nil
}

// signingKey loads the operator key from the first source configured.
func (c ChainConfig) signingKey() (*ecdsa.PrivateKey, error) {
	switch {
	case c.Key != nil:
		return c.Key, nil
	case c.KeyFile != "":
		k, err := crypto.LoadECDSA(c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("settlement: key file: %w", err)
		}
		return k, nil
	case c.KeystoreFile != "":
		blob, err := os.ReadFile(c.KeystoreFile)
		if err != nil {
			return nil, fmt.Errorf("settlement: keystore: %w", err)
		}
		pass := c.KeystorePassword
		if c.KeystorePasswordFile != "" {
			p, err := os.ReadFile(c.KeystorePasswordFile)
			if err != nil {
				return nil, fmt.Errorf("settlement: keystore password: %w", err)
			}
			pass = strings.TrimRight(string(p), "\r\n")
		}
		k, err := keystore.DecryptKey(blob, pass)
		if err != nil {
			return nil, fmt.Errorf("settlement: keystore: %w", err)
		}
		return k.PrivateKey, nil
	}
	return nil, fmt.Errorf("settlement: no signing key configured (Key, KeyFile or KeystoreFile)")
}

// fees prices an EIP-1559 transaction: the tip from the config or the node,
// and a fee cap of twice the head's base fee plus the tip.
func fees(ctx context.Context, b Backend, head *types.Header, tipCap, maxFee *big.Int) (tip, feeCap *big.Int, err error) {
	if tipCap != nil {
		tip = new(big.Int).Set(tipCap)
	} else if tip, err = b.SuggestGasTipCap(ctx); err != nil {
		return nil, nil, fmt.Errorf("settlement: suggest tip: %w", err)
	}
	base := head.BaseFee
	if base == nil {
		base = new(big.Int)
	}
	feeCap = new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
	if maxFee != nil && feeCap.Cmp(maxFee) > 0 {
		feeCap = new(big.Int).Set(maxFee)
		if tip.Cmp(feeCap) > 0 {
			tip = new(big.Int).Set(feeCap)
		}
	}
	return tip, feeCap, nil
}
