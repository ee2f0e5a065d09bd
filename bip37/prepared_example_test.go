package bip37_test

import (
	"fmt"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// Prepare each candidate once, then ask every filter about the whole batch.
func ExampleFilter_ContainsBatch() {
	alice := bip37.NewFilter(2, 0.0001, 1, wire.BloomUpdateNone)
	alice.Add([]byte("alice's key"))
	bob := bip37.NewFilter(2, 0.0001, 2, wire.BloomUpdateNone)
	bob.Add([]byte("bob's key"))

	candidates := []string{"carol's key", "bob's key", "alice's key"}
	ps := make([]bip37.Prepared, len(candidates))
	for i, c := range candidates {
		ps[i].Set([]byte(c))
	}
	matched := make([]int32, 0, len(ps))
	for _, j := range alice.ContainsBatch(ps, matched[:0]) {
		fmt.Println("alice may hold", candidates[j])
	}
	fmt.Println("bob may hold bob's key:", bob.ContainsPrepared(&ps[1]))
	// Output:
	// alice may hold alice's key
	// bob may hold bob's key: true
}
