// Command signgrant signs EIP-712 typed data as a wallet's
// eth_signTypedData_v4 does: the owner grants of POST
// /v1/customers/{id}/owner_grants, for the Node.js and Python clients'
// tests, which have no secp256k1 of their own. Test use only: the key is
// given on the command line.
//
//	signgrant -key HEX -address        prints the key's address
//	signgrant -key HEX < typed.json    prints the signature (0x, 65 bytes, v 27/28)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "signgrant:", err)
		os.Exit(1)
	}
}

func run() error {
	keyHex := flag.String("key", "", "the private key, hex")
	address := flag.Bool("address", false, "print the key's address and exit")
	flag.Parse()
	key, err := crypto.HexToECDSA(*keyHex)
	if err != nil {
		return fmt.Errorf("-key: %w", err)
	}
	if *address {
		fmt.Println(crypto.PubkeyToAddress(key.PublicKey).Hex())
		return nil
	}
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var td apitypes.TypedData
	if err := json.Unmarshal(raw, &td); err != nil {
		return fmt.Errorf("typed data: %w", err)
	}
	h, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return err
	}
	sig, err := crypto.Sign(h, key)
	if err != nil {
		return err
	}
	sig[64] += 27
	fmt.Println(hexutil.Encode(sig))
	return nil
}
