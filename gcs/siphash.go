package gcs

import (
	"encoding/binary"
	"math/bits"
)

// SipHash-2-4 initialisation constants ("somepseudorandomlygeneratedbytes").
const (
	sipC0 = 0x736f6d6570736575
	sipC1 = 0x646f72616e646f6d
	sipC2 = 0x6c7967656e657261
	sipC3 = 0x7465646279746573
)

// sipKey is a SipHash key split into its two little-endian words once per
// filter, rather than once per element as a generic implementation does.
type sipKey struct{ k0, k1 uint64 }

func newSipKey(key *[16]byte) sipKey {
	return sipKey{binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:])}
}

// sum64 is SipHash-2-4 of msg. It is a plain Go version specialised for a
// pre-split 16-byte key: for the short scripts filters hold, the call and
// key set-up overhead of a generic (assembly) implementation dominates.
// Tests prove it identical to github.com/aead/siphash on random inputs.
func (k sipKey) sum64(msg []byte) uint64 {
	v0 := k.k0 ^ sipC0
	v1 := k.k1 ^ sipC1
	v2 := k.k0 ^ sipC2
	v3 := k.k1 ^ sipC3
	n := len(msg)
	for len(msg) >= 8 {
		m := binary.LittleEndian.Uint64(msg)
		v3 ^= m
		// Two compression rounds.
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
		msg = msg[8:]
	}
	m := sipTail(msg, n)
	v3 ^= m
	for i := 0; i < 2; i++ {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	v0 ^= m
	v2 ^= 0xff
	// Four finalisation rounds.
	for i := 0; i < 4; i++ {
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	}
	return v0 ^ v1 ^ v2 ^ v3
}

// sipTail returns SipHash's last block: the remaining bytes of msg (fewer
// than 8) and the message length n mod 256.
func sipTail(msg []byte, n int) uint64 {
	m := uint64(n) << 56
	switch len(msg) {
	case 7:
		m |= uint64(msg[6]) << 48
		fallthrough
	case 6:
		m |= uint64(msg[5]) << 40
		fallthrough
	case 5:
		m |= uint64(msg[4]) << 32
		fallthrough
	case 4:
		m |= uint64(msg[3]) << 24
		fallthrough
	case 3:
		m |= uint64(msg[2]) << 16
		fallthrough
	case 2:
		m |= uint64(msg[1]) << 8
		fallthrough
	case 1:
		m |= uint64(msg[0])
	}
	return m
}

// sipRound is one SipRound; small enough to be inlined.
func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13) ^ v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16) ^ v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21) ^ v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17) ^ v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

// reduce maps a 64-bit hash uniformly into [0, modulus) with the high word
// of the 128-bit product, as BIP 158 specifies (no division).
func reduce(h, modulus uint64) uint64 {
	hi, _ := bits.Mul64(h, modulus)
	return hi
}

// sum64x2 is sum64 of two messages of the same length at once: the two
// computations are independent, so interleaving them lets the processor
// overlap their rounds, which one hash alone leaves mostly idle.
func (k sipKey) sum64x2(a, b []byte) (uint64, uint64) {
	if len(a) != len(b) {
		return k.sum64(a), k.sum64(b)
	}
	a0, a1, a2, a3 := k.k0^sipC0, k.k1^sipC1, k.k0^sipC2, k.k1^sipC3
	b0, b1, b2, b3 := a0, a1, a2, a3
	n := len(a)
	for len(a) >= 8 && len(b) >= 8 {
		ma := binary.LittleEndian.Uint64(a)
		mb := binary.LittleEndian.Uint64(b)
		a3 ^= ma
		b3 ^= mb
		a0, a1, a2, a3 = sipRound(a0, a1, a2, a3)
		b0, b1, b2, b3 = sipRound(b0, b1, b2, b3)
		a0, a1, a2, a3 = sipRound(a0, a1, a2, a3)
		b0, b1, b2, b3 = sipRound(b0, b1, b2, b3)
		a0 ^= ma
		b0 ^= mb
		a, b = a[8:], b[8:]
	}
	ma, mb := sipTail(a, n), sipTail(b, n)
	a3 ^= ma
	b3 ^= mb
	for i := 0; i < 2; i++ {
		a0, a1, a2, a3 = sipRound(a0, a1, a2, a3)
		b0, b1, b2, b3 = sipRound(b0, b1, b2, b3)
	}
	a0 ^= ma
	b0 ^= mb
	a2 ^= 0xff
	b2 ^= 0xff
	for i := 0; i < 4; i++ {
		a0, a1, a2, a3 = sipRound(a0, a1, a2, a3)
		b0, b1, b2, b3 = sipRound(b0, b1, b2, b3)
	}
	return a0 ^ a1 ^ a2 ^ a3, b0 ^ b1 ^ b2 ^ b3
}
