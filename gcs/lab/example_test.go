package lab_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/gcs/lab"
)

// Example measures three designs on the blocks of BIP 158's test vectors
// and prints what a client watching 1,000 scripts pays per block with
// each.
func Example() {
	f, err := os.Open("../../testvectors/bip158/testnet-19.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	blocks, err := lab.ReadVectors(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range []lab.Design{lab.BasicGCS(), lab.Bloom(lab.BasicRate), lab.BinaryFuse16()} {
		r, err := lab.Measure(blocks, d, lab.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %.1f bits per element (bound %.1f), %.1f bytes per block for 1,000 scripts\n",
			r.Name, r.BitsPerElement, r.BoundBitsPerElement, lab.BytesPerBlock(blocks, r, 1000))
	}
	// Output:
	// gcs: 23.6 bits per element (bound 19.6), 12.6 bytes per block for 1,000 scripts
	// bloom: 47.8 bits per element (bound 18.9), 30.4 bytes per block for 1,000 scripts
	// binary fuse 16: 107.6 bits per element (bound 16.0), 63.6 bytes per block for 1,000 scripts
}

// ExampleReadBlockFile writes regtest's genesis block to a block file
// and reads it back into a Chain, whose Blocks the lab measures.
func ExampleReadBlockFile() {
	var file bytes.Buffer
	w := lab.NewBlockFileWriter(&file, chaincfg.RegressionNetParams.Net)
	if err := w.Add(0, chaincfg.RegressionNetParams.GenesisBlock); err != nil {
		fmt.Println(err)
		return
	}
	chain := lab.NewChain(0)
	info, err := lab.ReadBlockFile(&file, chain.Add)
	if err != nil {
		fmt.Println(err)
		return
	}
	b := chain.Blocks()[0]
	fmt.Printf("heights %d..%d, block %v: %d bytes, %d element\n", info.First, info.Last(), b.Hash, b.Size, len(b.Elements))
	// Output:
	// heights 0..0, block 0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206: 285 bytes, 1 element
}
