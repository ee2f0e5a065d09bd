package gcs

import (
	"encoding/binary"
	"math/bits"
)

// scanLimitMax is the largest modulus for which scanFast cannot overflow:
// it adds a delta below 2^62 to a value below the limit, itself at most
// the modulus.
const scanLimitMax = 1 << 63

// scanFast is the one-pass decoder's hot loop. It decodes up to n codes
// after v and stops early after a value that is at least limit (that value
// is decoded and counted), or before a code that does not fit the window,
// or when the window needs a refill within 8 bytes of the end of the data.
// It returns how many values it decoded and the last. limit must not
// exceed scanLimitMax. Like skipFast it keeps the window in locals; it
// differs in comparing every value with limit, which merges the watch
// list into the decoding at the cost of one predictable branch per value.
func (r *bitReader) scanFast(p uint, v uint64, n uint32, limit uint64) (uint32, uint64) {
	data, pos, buf, nb := r.data, r.pos, r.buf, r.nb
	p &= 63
	step := uint64(1) << p
	left := n
	for left > 0 {
		if nb < p+9 {
			if pos+8 > len(data) {
				break
			}
			buf |= binary.BigEndian.Uint64(data[pos:]) >> (nb & 63)
			pos += int(63-nb) >> 3
			nb |= 56
		}
		q := uint(bits.Len64(^buf|1)-1) ^ 63
		rest := buf << ((p + 1) & 63)
		need := q + 1 + p
		// nb is at most 63, so this also keeps every code within 63 bits.
		if need > nb {
			break
		}
		v += uint64(q)*step + (buf<<((q+1)&63))>>((64-p)&63)
		buf = rest << (q & 63)
		nb -= need
		left--
		if v >= limit {
			break
		}
	}
	r.pos, r.buf, r.nb = pos, buf, nb
	return n - left, v
}

// scanFastBasic is scanFast for P = 19, the basic filter's parameter.
// With P a constant every shift but two is by an immediate, which frees
// the registers that the general loop spills.
func (r *bitReader) scanFastBasic(v uint64, n uint32, limit uint64) (uint32, uint64) {
	const p = BasicP
	data, pos, buf, nb := r.data, r.pos, r.buf, r.nb
	left := n
	for left > 0 {
		if nb < p+9 {
			if pos+8 > len(data) {
				break
			}
			buf |= binary.BigEndian.Uint64(data[pos:pos+8]) >> (nb & 63)
			pos += int(63-nb) >> 3
			nb |= 56
		}
		q := uint(bits.Len64(^buf|1)-1) ^ 63
		rest := buf << (p + 1)
		need := q + 1 + p
		if need > nb {
			break
		}
		v += uint64(q)<<p + (buf<<(q&63))<<1>>(64-p)
		buf = rest << (q & 63)
		nb -= need
		left--
		if v >= limit {
			break
		}
	}
	r.pos, r.buf, r.nb = pos, buf, nb
	return n - left, v
}

// beUint64 reads the big-endian word at data[pos:pos+8].
func beUint64(data []byte, pos int) uint64 {
	return binary.BigEndian.Uint64(data[pos : pos+8])
}
