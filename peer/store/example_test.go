package store_test

import (
	"fmt"
	"log"
	"os"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/store"
)

func Example() {
	dataDir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dataDir)
	params := &chaincfg.RegressionNetParams

	// A client opens the store, resumes its chain from it, syncs the
	// new headers from its peers into the chain and saves the change.
	st, err := store.Open(dataDir, params)
	if err != nil {
		log.Fatal(err)
	}
	c, err := st.Chain()
	if err != nil {
		log.Fatal(err)
	}
	// ... c.Extend(headers from peers) ...
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
