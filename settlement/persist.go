package settlement

import (
	"context"
	"crypto/ecdsa"
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
	OperatorKey string    `json:"operatorKey"`
	PayeeKey    string    `json:"payeeKey"`
	Addresses   Addresses `json:"addresses"`
	// Deployed is false until the deployment finished: a chain whose first
	// start died in the middle of it is deployed again.
	Deployed bool `json:"deployed"`
}

// loadChainState reads dir's state, or makes new keys if there is none.
func loadChainState(dir string) (st chainState, op, payee *ecdsa.PrivateKey, err error) {
	b, err := os.ReadFile(filepath.Join(dir, chainStateFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		if op, err = crypto.GenerateKey(); err != nil {
			return st, nil, nil, err
		}
		if payee, err = crypto.GenerateKey(); err != nil {
			return st, nil, nil, err
		}
		st = chainState{OperatorKey: common.Bytes2Hex(crypto.FromECDSA(op)), PayeeKey: common.Bytes2Hex(crypto.FromECDSA(payee))}
		return st, op, payee, saveChainState(dir, st)
	case err != nil:
		return st, nil, nil, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, nil, nil, fmt.Errorf("settlement: %s is damaged: %w", filepath.Join(dir, chainStateFile), err)
	}
	if op, err = crypto.HexToECDSA(st.OperatorKey); err != nil {
		return st, nil, nil, fmt.Errorf("settlement: %s: operator key: unusable", filepath.Join(dir, chainStateFile))
	}
	if payee, err = crypto.HexToECDSA(st.PayeeKey); err != nil {
		return st, nil, nil, fmt.Errorf("settlement: %s: payee key: unusable", filepath.Join(dir, chainStateFile))
	}
	return st, op, payee, nil
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
	return nil
}
