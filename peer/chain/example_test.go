package chain_test

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/chain"
)

func ExampleNew() {
	c := chain.New(&chaincfg.RegressionNetParams)
	fmt.Println(c.Height(), c.Hash(0))
	// Output: 0 0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206
}

func ExampleNew_testnet4() {
	c := chain.New(&chain.TestNet4Params)
	fmt.Println(c.Params().Name, c.Hash(0), chain.BIP94(c.Params()))
	// Output: testnet4 00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043 true
}

func ExampleCheckFilterHeader() {
	params := &chaincfg.MainNetParams
	cp := chain.FilterCheckpoints(params)[0]
	fmt.Println(cp.Height, cp.Header)
	fmt.Println(chain.CheckFilterHeader(params, cp.Height, cp.Header))
	err := chain.CheckFilterHeader(params, cp.Height, chainhash.Hash{})
	fmt.Println(errors.Is(err, chain.ErrFilterCheckpoint))
	// Output:
	// 100000 f28cbc1ab369eb01b7b5fe8bf59763abb73a31471fe404a26a06be4153aa7fa5
	// <nil>
	// true
}
