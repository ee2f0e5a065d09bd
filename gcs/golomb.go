package gcs

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// bitReader reads a big-endian bit stream through a 64-bit window: buf
// holds the next nb unread bits left-aligned. Bits of buf below the top nb
// are either zero or already the stream's next bits, so refilling by OR is
// idempotent. Past the end of the data the stream reads as zeros.
type bitReader struct {
	data []byte
	pos  int    // next byte of data not yet counted in nb
	buf  uint64 // window, left-aligned
	nb   uint   // valid bits in buf
}

// refill tops the window up to at least 56 valid bits while data remain.
// It must only be called with nb <= 56.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.data) {
		// Load 8 bytes at once and count only the whole bytes that fit.
		r.buf |= binary.BigEndian.Uint64(r.data[r.pos:]) >> r.nb
		r.pos += int(63-r.nb) >> 3
		r.nb |= 56
		return
	}
	r.refillTail()
}

// refillTail refills byte by byte near the end of the data.
func (r *bitReader) refillTail() {
	for r.nb <= 56 && r.pos < len(r.data) {
		r.buf |= uint64(r.data[r.pos]) << (56 - r.nb)
		r.pos++
		r.nb += 8
	}
}

// decodeBatch decodes len(dst) values, each the sum of v and the deltas
// so far, into dst and returns the last. The common codes are decoded by
// decodeFast; the rare ones that do not fit its window by nextSlow.
func (r *bitReader) decodeBatch(p uint, v uint64, dst []uint64) (uint64, error) {
	for i := 0; i < len(dst); {
		var k int
		k, v = r.decodeFast(p, v, dst[i:])
		i += k
		if i == len(dst) {
			break
		}
		d, err := r.nextSlow(p)
		if err != nil {
			return v, err
		}
		v += d
		dst[i] = v
		i++
	}
	return v, nil
}

// decodeFast is the decoder's hot loop. It decodes values into dst until
// dst is full or the next code does not fit the window, and returns how
// many it decoded and the last value. The window lives in locals and the
// loop makes no calls, so it stays in registers; a whole unary part is
// read with one count-leading-zeros, and the window is refilled only when
// it may not hold a typical code, so usually once per two codes.
func (r *bitReader) decodeFast(p uint, v uint64, dst []uint64) (int, uint64) {
	data, pos, buf, nb := r.data, r.pos, r.buf, r.nb
	p &= 63 // p is 1..32; the mask spares the compiler's shift checks
	i := 0
	for ; i < len(dst); i++ {
		if nb < p+9 { // codes with a quotient below 8 fit in p+9 bits
			if pos+8 <= len(data) {
				buf |= binary.BigEndian.Uint64(data[pos:pos+8]) >> (nb & 63)
				pos += int(63-nb) >> 3
				nb |= 56
			} else {
				for nb <= 56 && pos < len(data) {
					buf |= uint64(data[pos]) << ((56 - nb) & 63)
					pos++
					nb += 8
				}
			}
		}
		// The code takes need = q+1+p bits, q being the count of leading
		// ones. The chain from one window to the next is the decoder's
		// latency, so it is kept short: bit length, subtract, shift. The
		// |1 caps q at 63 (a window of ones is left to nextSlow) and
		// spares the compiler's zero-input fix-up.
		q := uint(64 - bits.Len64(^buf|1))
		need := q + 1 + p
		if need > nb || need > 63 {
			break
		}
		v += uint64(q)<<p | (buf<<((q+1)&63))>>((64-p)&63)
		buf <<= need & 63
		nb -= need
		dst[i] = v
	}
	r.pos, r.buf, r.nb = pos, buf, nb
	return i, v
}

// skipBatch decodes k values after v without storing them, as validation
// needs only where each block ends and its last value. It returns the last
// value and a non-zero carry if any sum overflowed 64 bits.
func (r *bitReader) skipBatch(p uint, v uint64, k int) (last, carry uint64, err error) {
	for i := 0; i < k; {
		if v <= skipFastMaxStart {
			j := 0
			j, v = r.skipFast(p, v, k-i)
			if i += j; i == k {
				break
			}
		}
		// A code skipFast cannot take, or a sum near 2^64.
		d, err := r.nextSlow(p)
		if err != nil {
			return v, carry, err
		}
		var c uint64
		v, c = bits.Add64(v, d, 0)
		carry |= c
		i++
	}
	return v, carry, nil
}

// skipFastMaxStart is the largest start value from which skipFast cannot
// overflow 64 bits: it takes codes of at most 63 bits, so each delta is
// below 31<<32 (q+1+p <= 63, p <= 32), and at most batchLen of them.
const skipFastMaxStart = ^uint64(0) - 1<<44

// skipFast is decodeFast without the stores, for validation. It decodes
// up to k values after v, stopping where decodeFast would, and returns
// how many it decoded and the last. v must not exceed skipFastMaxStart.
// Fewer live values than in decodeFast let the loop stay in registers.
func (r *bitReader) skipFast(p uint, v uint64, k int) (int, uint64) {
	data, pos, buf, nb := r.data, r.pos, r.buf, r.nb
	p &= 63
	n := k
	for ; n > 0; n-- {
		if nb < p+9 {
			if pos+8 <= len(data) {
				buf |= binary.BigEndian.Uint64(data[pos:]) >> (nb & 63)
				pos += int(63-nb) >> 3
				nb |= 56
			} else {
				for nb <= 56 && pos < len(data) {
					buf |= uint64(data[pos]) << ((56 - nb) & 63)
					pos++
					nb += 8
				}
			}
		}
		// As in decodeFast, but the next window is computed as
		// (buf << (p+1)) << q: the first shift overlaps the count of
		// ones, which shortens the chain from one code to the next.
		q := uint(bits.Len64(^buf|1)-1) ^ 63
		rest := buf << ((p + 1) & 63)
		need := q + 1 + p
		if need > nb || need > 63 {
			break
		}
		v += uint64(q)<<p | (buf<<((q+1)&63))>>((64-p)&63)
		buf = rest << (q & 63)
		nb -= need
	}
	r.pos, r.buf, r.nb = pos, buf, nb
	return k - n, v
}

// decodeFast2 runs two decodeFast loops interleaved, on two independent
// readers, so that the processor overlaps their dependency chains. It
// stops when either reader needs the slow path or either dst is full, and
// returns how many values it decoded into each (the same count).
func decodeFast2(r1, r2 *bitReader, p uint, v1, v2 uint64, dst1, dst2 []uint64) (int, uint64, uint64) {
	data := r1.data
	pos1, buf1, nb1 := r1.pos, r1.buf, r1.nb
	pos2, buf2, nb2 := r2.pos, r2.buf, r2.nb
	p &= 63
	n := min(len(dst1), len(dst2))
	dst1, dst2 = dst1[:n], dst2[:n]
	i := 0
	for ; i < n; i++ {
		if nb1 < p+9 {
			if pos1+8 <= len(data) {
				buf1 |= binary.BigEndian.Uint64(data[pos1:pos1+8]) >> (nb1 & 63)
				pos1 += int(63-nb1) >> 3
				nb1 |= 56
			} else {
				break
			}
		}
		if nb2 < p+9 {
			if pos2+8 <= len(data) {
				buf2 |= binary.BigEndian.Uint64(data[pos2:pos2+8]) >> (nb2 & 63)
				pos2 += int(63-nb2) >> 3
				nb2 |= 56
			} else {
				break
			}
		}
		q1 := uint(64 - bits.Len64(^buf1|1))
		q2 := uint(64 - bits.Len64(^buf2|1))
		need1 := q1 + 1 + p
		need2 := q2 + 1 + p
		if need1 > nb1 || need1 > 63 || need2 > nb2 || need2 > 63 {
			break
		}
		v1 += uint64(q1)<<p | (buf1<<((q1+1)&63))>>((64-p)&63)
		v2 += uint64(q2)<<p | (buf2<<((q2+1)&63))>>((64-p)&63)
		buf1 <<= need1 & 63
		buf2 <<= need2 & 63
		nb1 -= need1
		nb2 -= need2
		dst1[i] = v1
		dst2[i] = v2
	}
	r1.pos, r1.buf, r1.nb = pos1, buf1, nb1
	r2.pos, r2.buf, r2.nb = pos2, buf2, nb2
	return i, v1, v2
}

// nextSlow decodes a code whose unary part or remainder crosses the window
// (a long run of ones, or the end of the data).
func (r *bitReader) nextSlow(p uint) (uint64, error) {
	var q uint64
	for {
		if r.nb <= 56 {
			r.refill()
		}
		if r.nb == 0 {
			return 0, fmt.Errorf("%w: stream ends inside a unary code", ErrTruncated)
		}
		z := uint(bits.LeadingZeros64(^r.buf))
		if z < r.nb {
			q += uint64(z)
			r.buf <<= z + 1
			r.nb -= z + 1
			break
		}
		q += uint64(r.nb)
		r.buf, r.nb = 0, 0
	}
	if r.nb < p {
		r.refill()
		if r.nb < p {
			return 0, fmt.Errorf("%w: stream ends inside a remainder", ErrTruncated)
		}
	}
	if q > (^uint64(0))>>p {
		return 0, fmt.Errorf("%w: quotient %d overflows", ErrValueOutOfRange, q)
	}
	v := q<<p | r.buf>>(64-p)
	r.buf <<= p
	r.nb -= p
	return v, nil
}

// bitPos returns the offset in bits of the next unread bit.
func (r *bitReader) bitPos() uint64 {
	return 8*uint64(r.pos) - uint64(r.nb)
}

// seek positions the reader at bit offset bit, which lies within the data.
func (r *bitReader) seek(bit uint64) {
	r.pos, r.buf, r.nb = int(bit>>3), 0, 0
	r.refill()
	skip := uint(bit & 7)
	r.buf <<= skip
	r.nb -= skip
}

// remaining reports the unread bits left in the stream.
func (r *bitReader) remaining() uint64 {
	return uint64(r.nb) + 8*uint64(len(r.data)-r.pos)
}
