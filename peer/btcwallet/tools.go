//go:build tools

package btcwallet

// The tests build the btcd node they run from the module version pinned
// in go.mod; this import keeps its packages in go.mod and go.sum.
import (
	_ "github.com/btcsuite/btcd"
)
