#!/usr/bin/env bash
# Regenerates everything derived from src/*.sol: build/*.abi, build/*.bin (solc
# pinned in package.json/package-lock.json) and the abigen v2 bindings in
# bindings/ (abigen at the go-ethereum version in go.mod). Run from anywhere:
#
#   go generate ./settlement      (or: bash settlement/contracts/gen.sh)
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x node_modules/.bin/solcjs ]; then
	npm ci --no-audit --no-fund
fi
node compile.mjs

mkdir -p bindings
for c in SettleflowSettlement:settlement_contract.go TestUSD:test_usd.go UptoPermit2Proxy:upto_permit2_proxy.go; do
	name=${c%%:*}
	out=${c#*:}
	go run github.com/ethereum/go-ethereum/cmd/abigen --v2 \
		--abi "build/$name.abi" --bin "build/$name.bin" \
		--pkg bindings --type "$name" --out "bindings/$out"
done
gofmt -l bindings
echo "regenerated build/ and bindings/"
