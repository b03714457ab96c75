package settlement

import (
	_ "embed"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// The contracts the x402 `upto` scheme pays through, at the addresses its
// clients sign for on every chain: Uniswap's Permit2, and the scheme's
// Permit2 proxy (the spender the buyer's permit names, which only the
// facilitator the witness names may call).
var (
	Permit2Address   = common.HexToAddress("0x000000000022D473030F116dDEE9F6B43aC78BA3")
	UptoProxyAddress = common.HexToAddress("0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002")
)

// Permit2's runtime code as deployed on Ethereum (solc 0.8.17; see
// contracts/compile.mjs), and this repository's build of the upto proxy
// (contracts/src/UptoPermit2Proxy.sol).
var (
	//go:embed contracts/build/Permit2.runtime
	permit2Runtime string
	//go:embed contracts/build/UptoPermit2Proxy.runtime
	uptoProxyRuntime string
)

// PaymentContractsAlloc is the genesis allocation that places Permit2 and
// the upto proxy at their addresses on a test chain: go-ethereum's
// simulated chain (NewSimulated does) or a geth --dev node initialized with
// a genesis that includes it (GethDevGenesis). On public chains both are
// deployed already. Permit2's code computes its EIP-712 domain from the
// chain id and its own address, so it serves any chain but Ethereum's
// (chain id 1) from this code.
func PaymentContractsAlloc() types.GenesisAlloc {
	return types.GenesisAlloc{
		Permit2Address:   {Code: common.FromHex(strings.TrimSpace(permit2Runtime)), Balance: common.Big0},
		UptoProxyAddress: {Code: common.FromHex(strings.TrimSpace(uptoProxyRuntime)), Balance: common.Big0},
	}
}
