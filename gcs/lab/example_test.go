package lab_test

import (
	"fmt"
	"os"

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
