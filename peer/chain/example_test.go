package chain_test

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/chain"
)

func ExampleNew() {
	c := chain.New(&chaincfg.RegressionNetParams)
	fmt.Println(c.Height(), c.Hash(0))
	// Output: 0 0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206
}
