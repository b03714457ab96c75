#!/usr/bin/env bash
# install-geth.sh DIR — builds geth (the version pinned below, the same as the
# go-ethereum module in go.mod) into DIR, for the settlement integration test:
#
#   settlement/scripts/install-geth.sh /tmp/geth-bin
#   SETTLEFLOW_GETH=/tmp/geth-bin/geth go test -run TestGethDev ./settlement
#
# It first runs exactly
#
#   GOBIN=DIR go install github.com/ethereum/go-ethereum/cmd/geth@v1.17.10
#
# Where the Go module proxy in use does not serve one of geth's dependencies
# (github.com/attestantio/go-eth2-client v0.30.1, used only by geth's beacon
# light client, is refused by some proxies, as are github.com/pk910/dynamic-ssz
# v1.4.0 and github.com/pk910/hashtree-bindings v0.2.6 that come with it), it
# falls back to building the same geth v1.17.10 sources in a throw-away module
# whose go-eth2-client is v0.29.0 (with the dynamic-ssz v1.3.2 and
# hashtree-bindings v0.2.2 it asks for) plus a stub of its "gloas"
# package (the only package v0.29.0 lacks). The stub
# makes a Gloas beacon block fail to decode; nothing that `geth --dev` or the
# JSON-RPC API runs touches it. The built binary is otherwise geth v1.17.10.
#
# It needs only the Go module proxy. Building takes several minutes on 2 cores;
# an existing binary of the right version is kept.
set -euo pipefail

GETH_VERSION=v1.17.10
ETH2_FALLBACK=v0.29.0
SSZ_FALLBACK=v1.3.2
HASHTREE_FALLBACK=v0.2.2

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)

# geth's output is read whole before it is searched or cut: a reader that
# stops early (grep -q, head) would kill geth with SIGPIPE, which pipefail
# turns into a failure of the whole script.
geth_version() { "$dir/geth" version 2>/dev/null || true; }

if [ -x "$dir/geth" ] && geth_version | grep "^Version: ${GETH_VERSION#v}" >/dev/null; then
	echo "geth ${GETH_VERSION} already in $dir"
	exit 0
fi

if GOBIN="$dir" go install "github.com/ethereum/go-ethereum/cmd/geth@${GETH_VERSION}"; then
	out=$(geth_version); printf "%s\n" "$out" | sed -n 1,2p
	echo "installed $dir/geth"
	exit 0
fi

echo "go install failed; building geth ${GETH_VERSION} with go-eth2-client ${ETH2_FALLBACK} + gloas stub" >&2
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
eth2src=$(go mod download -json "github.com/attestantio/go-eth2-client@${ETH2_FALLBACK}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$eth2src" "$work/eth2"
chmod -R u+w "$work/eth2"
mkdir -p "$work/eth2/spec/gloas"
cat >"$work/eth2/spec/gloas/gloas.go" <<'GO'
// Package gloas is a stub standing in for go-eth2-client's Gloas types in a
// geth build made by settleflow's install-geth.sh: decoding fails.
package gloas

import (
	"errors"

	"github.com/attestantio/go-eth2-client/spec/phase0"
)

var errUnsupported = errors.New("gloas beacon blocks are not supported by this geth build")

type ExecutionPayloadBid struct{ BlockHash phase0.Hash32 }

type SignedExecutionPayloadBid struct{ Message *ExecutionPayloadBid }

type ExecutionRequests struct{}

type BeaconBlockBody struct {
	SignedExecutionPayloadBid *SignedExecutionPayloadBid
	ParentExecutionRequests   *ExecutionRequests
}

func (*BeaconBlockBody) HashTreeRoot() ([32]byte, error) { return [32]byte{}, errUnsupported }

type BeaconBlock struct {
	Slot          phase0.Slot
	ProposerIndex phase0.ValidatorIndex
	ParentRoot    phase0.Root
	StateRoot     phase0.Root
	Body          *BeaconBlockBody
}

func (*BeaconBlock) HashTreeRoot() ([32]byte, error) { return [32]byte{}, errUnsupported }

func (*BeaconBlock) UnmarshalJSON([]byte) error { return errUnsupported }
GO
(
	cd "$work"
	go mod init settleflow.local/gethbuild >/dev/null 2>&1
	go mod edit -require "github.com/ethereum/go-ethereum@${GETH_VERSION}" \
		-replace "github.com/attestantio/go-eth2-client=./eth2" \
		-replace "github.com/pk910/dynamic-ssz=github.com/pk910/dynamic-ssz@${SSZ_FALLBACK}" \
		-replace "github.com/pk910/hashtree-bindings=github.com/pk910/hashtree-bindings@${HASHTREE_FALLBACK}"
	GOFLAGS=-mod=mod go build -trimpath -o "$dir/geth" github.com/ethereum/go-ethereum/cmd/geth
)
out=$(geth_version); printf "%s\n" "$out" | sed -n 1,2p
echo "installed $dir/geth (fallback build)"
