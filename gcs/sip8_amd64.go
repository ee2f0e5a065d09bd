package gcs

import "golang.org/x/sys/cpu"

// sip8AVX512 computes SipHash-2-4, keyed by (k0, k1), of the eight
// elements elems[idx[0]], ..., elems[idx[7]], each of 8 to 63 bytes and
// blocks SipHash blocks long (len/8+1), into out. It reads the elements
// in place, each only within its own bytes.
//
//go:noescape
func sip8AVX512(k0, k1 uint64, elems *[]byte, idx *[8]int, blocks int, out *[8]uint64)

// haveSip8 reports whether the processor and the operating system support
// the AVX-512 instructions sip8AVX512 uses. (A variable, so that the tests
// may turn the lanes off.)
var haveSip8 = cpu.X86.HasAVX512F

func sip8(k0, k1 uint64, elems *[]byte, idx *[8]int, blocks int, out *[8]uint64) {
	sip8AVX512(k0, k1, elems, idx, blocks, out)
}
