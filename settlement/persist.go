package settlement

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// A simulated chain with SimulatedOptions.DataDir keeps everything it needs
// to continue after a restart in that directory: go-ethereum's chain
// database (geth/), and simulated-chain.json (mode 0600) with the operator's
// and payee's keys, whose funded accounts make the genesis block, and the
// addresses of the deployment. A restart opens the same chain, finds the
// contract where it left it and deploys nothing; every transaction hash of
// an earlier settlement stays valid.

// chainStateFile names the file in DataDir.
const chainStateFile = "simulated-chain.json"

type chainState struct {
	OperatorKey string `json:"operatorKey"`
	PayeeKey    string `json:"payeeKey"`
	FaucetKey   string `json:"faucetKey"`
	// CustomerRefSecret is hex: the secret the customers' references are
	// keyed with (their balances are found by it).
	CustomerRefSecret string    `json:"customerRefSecret"`
	Addresses         Addresses `json:"addresses"`
	// Deployed is false until the deployment finished: a chain whose first
	// start died in the middle of it is deployed again.
	Deployed bool `json:"deployed"`
	// PaymentContracts is true for a chain whose genesis holds Permit2 and
	// the x402 upto proxy (PaymentContractsAlloc); a chain kept by an
	// earlier settleflow has neither, and its genesis cannot change.
	PaymentContracts bool `json:"paymentContracts"`
}

// simKeys are a simulated chain's keys and secret.
type simKeys struct {
	operator, payee, faucet *ecdsa.PrivateKey
	secret                  []byte
}

func newSimKeys() (k simKeys, err error) {
	for _, p := range []**ecdsa.PrivateKey{&k.operator, &k.payee, &k.faucet} {
		if *p, err = crypto.GenerateKey(); err != nil {
			return k, err
		}
	}
	k.secret = make([]byte, 32)
	_, err = rand.Read(k.secret)
	return k, err
}

// loadChainState reads dir's state, or makes new keys if there is none.
func loadChainState(dir string) (st chainState, k simKeys, err error) {
	file := filepath.Join(dir, chainStateFile)
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if k, err = newSimKeys(); err != nil {
			return st, k, err
		}
		st = chainState{OperatorKey: common.Bytes2Hex(crypto.FromECDSA(k.operator)), PayeeKey: common.Bytes2Hex(crypto.FromECDSA(k.payee)),
			FaucetKey: common.Bytes2Hex(crypto.FromECDSA(k.faucet)), CustomerRefSecret: common.Bytes2Hex(k.secret), PaymentContracts: true}
		return st, k, saveChainState(dir, st)
	case err != nil:
		return st, k, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, k, fmt.Errorf("settlement: %s is damaged: %w", file, err)
	}
	if st.FaucetKey == "" || st.CustomerRefSecret == "" {
		return st, k, fmt.Errorf("settlement: %s holds a chain of an earlier settleflow, whose contract the operator paid every charge from; this one charges customers' balances: remove %s to start a new test chain (its earlier test settlements are then lost)", file, dir)
	}
	if k.operator, err = crypto.HexToECDSA(st.OperatorKey); err != nil {
		return st, k, fmt.Errorf("settlement: %s: operator key: unusable", file)
	}
	if k.payee, err = crypto.HexToECDSA(st.PayeeKey); err != nil {
		return st, k, fmt.Errorf("settlement: %s: payee key: unusable", file)
	}
	if k.faucet, err = crypto.HexToECDSA(st.FaucetKey); err != nil {
		return st, k, fmt.Errorf("settlement: %s: faucet key: unusable", file)
	}
	if k.secret = common.FromHex(st.CustomerRefSecret); len(k.secret) < MinCustomerRefSecret {
		return st, k, fmt.Errorf("settlement: %s: customer reference secret: unusable", file)
	}
	return st, k, nil
}

// saveChainState writes st to dir atomically (a temporary file renamed).
func saveChainState(dir string, st chainState) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, chainStateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, chainStateFile))
}

// checkDeployment reports whether the contract of a saved deployment is on
// the chain: it is not if the chain's database was removed and the state
// file kept.
func (s *Simulated) checkDeployment(ctx context.Context, dir string) error {
	code, err := s.Backend.Client().CodeAt(ctx, s.Addresses.Contract, nil)
	if err != nil {
		return err
	}
	if len(code) == 0 {
		return fmt.Errorf("settlement: the simulated chain in %s has no contract at %s: its chain database is gone or from elsewhere; remove %s to start a new chain (earlier test settlements are then lost)",
			dir, s.Addresses.Contract, dir)
	}
	if v, err := contractVersion(ctx, s.Backend.Client(), s.Addresses.Contract); err != nil || v != ContractVersion {
		return fmt.Errorf("settlement: the simulated chain in %s holds settlement contract %s at %s; this build settles with version %d "+
			"(version 4: a balance's owner is set only by the operator with the owner's signed grant, never by a deposit; grant nonces are kept per signer). "+
			"Nothing on a simulated chain is live: move %s aside (or delete it) and start again to deploy version %d on a new test chain",
			dir, versionName(v, err), s.Addresses.Contract, ContractVersion, dir, ContractVersion)
	}
	return nil
}
