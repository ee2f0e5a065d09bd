//go:build !amd64

package gcs

// haveSip8 is false where no vector SipHash is written: elements are
// hashed two at a time by sum64x2. (A variable, so that the tests may
// set it on every platform.)
var haveSip8 = false

func sip8(k0, k1 uint64, elems *[]byte, idx *[8]int, blocks int, out *[8]uint64) {
	panic("gcs: sip8 without a vector implementation")
}
