package store_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/store"
)

func Example() {
	dataDir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dataDir)
	params := &chaincfg.RegressionNetParams

	// A client opens the store and resumes its chain from it; the
	// chain writes what Extend adds to the store (see ExampleStore_Chain).
	// SaveChain writes a chain kept in memory, and nothing for this one.
	st, err := store.Open(dataDir, params)
	if err != nil {
		log.Fatal(err)
	}
	c, err := st.Chain()
	if err != nil {
		log.Fatal(err)
	}
	fork, err := st.SaveChain(c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resumed at height", c.Height(), "fork", fork)

	// Verified filter headers and filters are kept too.
	filter := []byte{0} // the basic filter of a block without scripts
	if err := st.AppendFilterHashes(0, []chainhash.Hash{chainhash.DoubleHashH(filter)}); err != nil {
		log.Fatal(err)
	}
	if err := st.CheckFilter(0, filter); err != nil {
		log.Fatal(err)
	}
	if err := st.PutFilter(c.Hash(0), filter); err != nil {
		log.Fatal(err)
	}
	cached, ok, err := st.Filter(c.Hash(0))
	fmt.Println("cached filter:", ok, cached, err)
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}

	// A restart finds everything again; a second process cannot open
	// the store meanwhile.
	st, err = store.Open(dataDir, params)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	_, err = store.Open(dataDir, params)
	fmt.Println(err != nil, st.Height(), st.FilterHeaderTip(), len(st.Recovered()))
	// Output:
	// resumed at height 0 fork 0
	// cached filter: true [0] <nil>
	// true 0 0 0
}

// The chain a store returns keeps only its last headers in memory and
// writes every header Extend accepts to the store before Extend returns:
// a restart resumes from it.
func ExampleStore_Chain() {
	dataDir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dataDir)
	params := &chaincfg.RegressionNetParams
	st, err := store.OpenWith(dataDir, params, store.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	c, err := st.Chain()
	if err != nil {
		log.Fatal(err)
	}
	// Three regtest headers, as a peer would send them.
	var headers []*wire.BlockHeader
	prev := params.GenesisBlock.Header
	for range 3 {
		h := &wire.BlockHeader{Version: 4, PrevBlock: prev.BlockHash(), Timestamp: prev.Timestamp.Add(10 * time.Minute), Bits: params.PowLimitBits}
		for hash := h.BlockHash(); blockchain.HashToBig(&hash).Cmp(params.PowLimit) > 0; hash = h.BlockHash() {
			h.Nonce++
		}
		headers = append(headers, h)
		prev = *h
	}
	up, err := c.Extend(headers)
	fmt.Println("connected", up.Connected, err, "stored tip", st.Height())
	st.Close()

	st, err = store.OpenWith(dataDir, params, store.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	c, err = st.Chain()
	fmt.Println("resumed at", c.Height(), err, c.Hash(3) == headers[2].BlockHash())
	// Output:
	// connected 3 <nil> stored tip 3
	// resumed at 3 <nil> true
}
