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

// scanMatch decodes the n values of an untrusted stream in one pass,
// merging them with the sorted queries q. It reports whether the stream
// is valid exactly as validate judges it and, if so, whether a value is
// one of q. With stopEarly it returns as soon as the answer is known (a
// query found, or every query passed), without validating the rest; valid
// then only means that no defect was seen before it stopped.
func scanMatch(data []byte, n uint32, p uint, modulus uint64, q []uint64, stopEarly bool) (found, valid bool) {
	if uint64(n)*uint64(p+1) > 8*uint64(len(data)) {
		return false, false
	}
	r := bitReader{data: data}
	j := 0
	// limit is the next query, or the modulus once the queries are
	// passed: one comparison per value checks both.
	limit := modulus
	if len(q) > 0 {
		limit = min(q[0], modulus)
	} else if stopEarly {
		return false, true
	}
	fast := modulus <= scanLimitMax
	var v uint64
	for left := n; left > 0; {
		var k uint32
		switch {
		case fast && p == BasicP:
			k, v = r.scanFastBasic(v, left, limit)
		case fast:
			k, v = r.scanFast(p, v, left, limit)
		}
		left -= k
		if k == 0 || v < limit {
			if left == 0 {
				break
			}
			// A code the fast loop cannot take, or the end of the data.
			d, err := r.nextSlow(p)
			if err != nil {
				return false, false
			}
			var carry uint64
			if v, carry = bits.Add64(v, d, 0); carry != 0 {
				return false, false
			}
			left--
			if v < limit {
				continue
			}
		}
		// v reached the limit: out of range, or at or past a query.
		if v >= modulus {
			return false, false
		}
		for j < len(q) && q[j] < v {
			j++
		}
		if j < len(q) && q[j] == v {
			found = true
			j = len(q)
		}
		if j == len(q) {
			if stopEarly {
				return found, true
			}
			limit = modulus
		} else {
			limit = min(q[j], modulus)
		}
	}
	left := r.remaining()
	if left >= 8 || left > 0 && r.buf>>(64-left) != 0 {
		return false, false
	}
	return found, true
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
