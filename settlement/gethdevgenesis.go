package settlement

import (
	"encoding/json"
	"maps"
	"math/big"

	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
)

// GethDevKey is the key of the account `geth --dev` signs with when its
// keystore is empty (go-ethereum's developer key, public by design): the
// account GethDevGenesis funds.
var GethDevKey, _ = crypto.HexToECDSA("b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291")

// GethDevGenesis is a genesis for `geth --dev`: geth's own developer genesis
// (its developer account funded) with Permit2 and the x402 upto proxy at
// their addresses (PaymentContractsAlloc). Write it to a file, run
// `geth --datadir DIR init FILE`, then `geth --dev --datadir DIR ...`: geth
// keeps a chain it finds in its data directory, so the node starts on this
// genesis.
func GethDevGenesis() ([]byte, error) {
	dev := crypto.PubkeyToAddress(GethDevKey.PublicKey)
	g := core.DeveloperGenesisBlock(60_000_000, &dev)
	alloc := maps.Clone(g.Alloc)
	maps.Copy(alloc, PaymentContractsAlloc())
	a := alloc[dev]
	a.Balance = new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(params.Ether))
	alloc[dev] = a
	g.Alloc = alloc
	return json.Marshal(g)
}
