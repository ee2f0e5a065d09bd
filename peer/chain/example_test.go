package chain_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
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

// nextHeader returns a regtest header on top of prev, dated after its
// parent by after, with a nonce that meets the target.
func nextHeader(prev *wire.BlockHeader, after time.Duration) *wire.BlockHeader {
	h := &wire.BlockHeader{Version: 4, PrevBlock: prev.BlockHash(), Timestamp: prev.Timestamp.Add(after), Bits: prev.Bits}
	for ; ; h.Nonce++ {
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(blockchain.CompactToBig(h.Bits)) <= 0 {
			return h
		}
	}
}

// path returns n headers on top of from, each after the one before.
func path(from *wire.BlockHeader, n int, after time.Duration) []*wire.BlockHeader {
	var hs []*wire.BlockHeader
	for range n {
		from = nextHeader(from, after)
		hs = append(hs, from)
	}
	return hs
}

// A competing branch longer than one headers message: Extend of its first
// message turns it away, a Branch collects the rest and Adopt takes it
// once it has more work. Here a message holds 2 headers, not 2,000.
func ExampleChain_NewBranch() {
	c := chain.New(&chaincfg.RegressionNetParams)
	genesis := c.Header(0)
	own := path(&genesis, 5, time.Minute)
	if _, err := c.Extend(own); err != nil {
		panic(err)
	}
	// A branch from block 2: its 4 blocks beat the chain's 3.
	branch := path(own[1], 4, 2*time.Minute)
	_, err := c.Extend(branch[:2])
	fmt.Println(errors.Is(err, chain.ErrLessWork))

	b, err := c.NewBranch(branch[:2])
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Fork(), b.MoreWork())
	if err := b.Add(branch[2:]); err != nil {
		panic(err)
	}
	fmt.Println(b.MoreWork())
	up, err := c.Adopt(b)
	fmt.Println(up.Fork, len(up.Disconnected), up.Connected, c.Height(), err)
	// Output:
	// true
	// 2 false
	// true
	// 2 3 4 6 <nil>
}
