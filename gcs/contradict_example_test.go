package gcs_test

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// Two peers serve different filters of one block; the block decides
// between them when it proves one false.
func ExampleCheckBasic() {
	// Testnet3 block 2, from the BIP 158 test vectors: a coinbase paying
	// one P2PK script.
	raw, _ := hex.DecodeString("0100000006128e87be8b1b4dea47a7247d5528d2702c96826c7a648497e773b800000000e241352e3bec0a95a6217e10c3abb54adfa05abb12c126695595580fb92e222032e7494dffff001d00d235340101000000010000000000000000000000000000000000000000000000000000000000000000ffffffff0e0432e7494d010e062f503253482fffffffff0100f2052a010000002321038a7f6ef1c8ca0c588aa53fa860128077c9e6c11e6830f4d7ee4e763a56b7718fac00000000")
	var block wire.MsgBlock
	if err := block.Deserialize(bytes.NewReader(raw)); err != nil {
		fmt.Println(err)
		return
	}
	honest, _ := hex.DecodeString("0174a170")
	empty := []byte{0} // a filter of nothing, hiding the payment
	for _, filter := range [][]byte{honest, empty} {
		res := gcs.CheckBasicBytes(&block, filter)
		if res.Contradiction != nil {
			fmt.Println("proven false:", res.Contradiction)
			continue
		}
		fmt.Printf("not contradicted (%d inputs undecided)\n", res.Undecided())
	}
	// Output:
	// not contradicted (0 inputs undecided)
	// proven false: gcs: filter leaves out output script 21038a7f6ef1c8ca0c588aa53fa860128077c9e6c11e6830f4d7ee4e763a56b7718fac (transaction 0, output 0)
}
