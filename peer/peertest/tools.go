//go:build tools

package peertest

// The integration tests build the btcd node from the pinned module; this
// import keeps its packages in go.mod and go.sum.
import (
	_ "github.com/btcsuite/btcd"
)
