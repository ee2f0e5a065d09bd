package gcs

import (
	"math/bits"
	"slices"
)

// scanner is the state of a one-pass match of sorted queries against an
// untrusted stream: the reader, the last value decoded, the values still
// to decode, and the position of the merge in the queries. limit is the
// next query, or the modulus once the queries are passed, so that one
// comparison per value checks both.
type scanner struct {
	r         bitReader
	v         uint64
	left      uint32
	p         uint
	modulus   uint64
	q         []uint64
	j         int
	limit     uint64
	found     bool
	stopEarly bool
	fast      bool // modulus <= scanLimitMax
}

// What a step of the scanner leaves to its caller.
type scanStatus int

const (
	scanMore    scanStatus = iota // go on
	scanDone                      // stopEarly: the answer is known
	scanInvalid                   // the stream is malformed
)

// scanMatch decodes the n values of an untrusted stream in one pass,
// merging them with the sorted queries q. It reports whether the stream
// is valid exactly as validate judges it and, if so, whether a value is
// one of q. With stopEarly it returns as soon as the answer is known (a
// query found, or every query passed), without validating the rest; valid
// then only means that no defect was seen before it stopped. scratch,
// when long enough (splitLen), lets a large basic filter be decoded by
// two interleaved decoders.
func scanMatch(data []byte, n uint32, p uint, modulus uint64, q []uint64, stopEarly bool, scratch []uint64) (found, valid bool) {
	if uint64(n)*uint64(p+1) > 8*uint64(len(data)) {
		return false, false
	}
	s := scanner{r: bitReader{data: data}, left: n, p: p, modulus: modulus, q: q,
		stopEarly: stopEarly, fast: modulus <= scanLimitMax}
	if s.setLimit() == scanDone {
		return false, true
	}
	// Splitting makes A about 1.5 times slower per code until the middle
	// and decodes the second half at no cost: worth it unless stopEarly
	// will likely stop before three quarters of the stream, which it does
	// when the queries all lie below that.
	if canSplit(n, p, modulus, data) && len(scratch) >= splitLen(data) &&
		(!stopEarly || q[len(q)-1] >= modulus/4*3) {
		switch s.split(scratch[:splitLen(data)]) {
		case scanDone:
			return s.found, true
		case scanInvalid:
			return false, false
		}
	}
	for s.left > 0 {
		switch s.advance(s.left) {
		case scanDone:
			return s.found, true
		case scanInvalid:
			return false, false
		}
	}
	left := s.r.remaining()
	if left >= 8 || left > 0 && s.r.buf>>(64-left) != 0 {
		return false, false
	}
	return s.found, true
}

// advance decodes up to max values, max <= s.left, checking each.
func (s *scanner) advance(max uint32) scanStatus {
	for max > 0 {
		var k uint32
		switch {
		case s.fast && s.p == BasicP:
			k, s.v = s.r.scanFastBasic(s.v, max, s.limit)
		case s.fast:
			k, s.v = s.r.scanFast(s.p, s.v, max, s.limit)
		}
		s.left -= k
		max -= k
		if k == 0 || s.v < s.limit {
			if max == 0 {
				return scanMore
			}
			// A code the fast loop cannot take, or the end of the data.
			d, err := s.r.nextSlow(s.p)
			if err != nil {
				return scanInvalid
			}
			var carry uint64
			if s.v, carry = bits.Add64(s.v, d, 0); carry != 0 {
				return scanInvalid
			}
			s.left--
			max--
			if s.v < s.limit {
				continue
			}
		}
		if st := s.reached(); st != scanMore {
			return st
		}
	}
	return scanMore
}

// reached handles a value at or above the limit: out of range, or at or
// past the next query.
func (s *scanner) reached() scanStatus {
	if s.v >= s.modulus {
		return scanInvalid
	}
	for s.j < len(s.q) && s.q[s.j] < s.v {
		s.j++
	}
	if s.j < len(s.q) && s.q[s.j] == s.v {
		s.found = true
		s.j = len(s.q)
	}
	return s.setLimit()
}

// setLimit sets the limit from the next query.
func (s *scanner) setLimit() scanStatus {
	if s.j == len(s.q) {
		if s.stopEarly {
			return scanDone
		}
		s.limit = s.modulus
	} else {
		s.limit = min(s.q[s.j], s.modulus)
	}
	return scanMore
}

// Splitting. A Golomb-Rice stream must be decoded from its start, so one
// decoder is one long chain of dependent operations, bound by its latency.
// A second decoder started at an arbitrary bit in the middle of the stream
// reads garbage at first, but its code boundaries soon fall on the true
// ones (within about 10 codes typically, 100 rarely, for the basic
// filter), and from a shared boundary on the two read identically. So the
// first decoder (A) runs from the start, checked and merged as usual, while
// the second (B) runs from the middle, interleaved with it, keeping its
// values relative to its unknown start in scratch. When A reaches the
// middle, it decodes on until one of its boundaries is one of B's: from
// there B's values, offset by A's value, are the stream's, and A takes over
// B's position. If no boundary is shared, A decodes the rest itself: the
// result never depends on the guess.

// splitMinBytes is the smallest stream worth splitting.
const splitMinBytes = 1024

// canSplit reports whether the stream may be split: the basic parameter P
// (whose codes of at least 20 bits cannot hide in the padding, so that B
// never decodes values past the N-th unnoticed), and a modulus small
// enough for B's relative values plus A's to stay below 2^64.
func canSplit(n uint32, p uint, modulus uint64, data []byte) bool {
	return p == BasicP && modulus <= 1<<62 && len(data) >= splitMinBytes && n > 0
}

// splitLen is how many values B can decode at most: the codes in the
// second half, of at least P+1 bits each.
func splitLen(data []byte) int {
	return 8*(len(data)-len(data)/2)/(BasicP+1) + 1
}

// split runs A and B interleaved, then joins them (see above). bvals
// receives B's relative values.
func (s *scanner) split(bvals []uint64) scanStatus {
	data := s.r.data
	mid := len(data) / 2
	b := bitReader{data: data, pos: mid}
	startBit := 8 * uint64(mid)
	var vb uint64
	bn := 0
	for s.left > 0 && bn < len(bvals) {
		// A may not pass the middle by much: at most one code of 63 bits
		// per iteration.
		pa := s.r.bitPos()
		if pa >= startBit {
			break
		}
		if b.pos+16 > len(data) {
			break // B is near the end: A finishes alone
		}
		iter := min(uint64(s.left), uint64(len(bvals)-bn), (startBit-pa)/63+1, uint64(len(data)-16-b.pos)/8+1)
		var k int
		k, s.v, vb = scanFast2Basic(&s.r, &b, s.v, vb, s.limit, bvals[bn:bn+int(iter)])
		bn += k
		s.left -= uint32(k)
		if k > 0 && s.v >= s.limit {
			if st := s.reached(); st != scanMore {
				return st
			}
			continue
		}
		if uint64(k) == iter {
			continue
		}
		// One decoder met a code the fast loop cannot take: both decode
		// one code alone.
		c := b
		d, err := c.nextSlow(BasicP)
		next, carry := bits.Add64(vb, d, 0)
		if err != nil || carry != 0 || next >= s.modulus {
			break
		}
		if st := s.advance(1); st != scanMore {
			return st
		}
		b, vb = c, next
		bvals[bn] = vb
		bn++
		if bn == len(bvals) || s.left == 0 {
			break
		}
	}
	if bn == 0 {
		return scanMore
	}
	return s.join(&b, bvals[:bn], startBit)
}

// join finds the first boundary of A at or after B's start that is one of
// B's and, if there is one, takes B's values and position from there.
func (s *scanner) join(b *bitReader, bvals []uint64, startBit uint64) scanStatus {
	// Replay B's codes from its start, to learn its boundaries.
	replay := bitReader{data: s.r.data, pos: int(startBit / 8)}
	var rv uint64 // B's relative value before code ri
	ri := 0
	for {
		pa, pr := s.r.bitPos(), replay.bitPos()
		if pa == pr {
			break
		}
		if pa < pr {
			if s.left == 0 {
				return scanMore
			}
			if st := s.advance(1); st != scanMore {
				return st
			}
			continue
		}
		if ri == len(bvals) {
			return scanMore // no shared boundary: A decodes on alone
		}
		d, _ := replay.nextSlow(BasicP) // B decoded this code already
		rv += d
		ri++
	}
	// B's codes ri.. are the stream's next values.
	rest := bvals[ri:]
	if len(rest) == 0 {
		return scanMore
	}
	if uint64(len(rest)) > uint64(s.left) {
		// More than N codes: data after the N-th value.
		return scanInvalid
	}
	base := s.v - rv // the value before B's first code
	last := base + rest[len(rest)-1]
	if last >= s.modulus {
		return scanInvalid
	}
	// The queries up to the last value, searched in B's values.
	g := 0
	for s.j < len(s.q) && s.q[s.j] <= last {
		t := s.q[s.j] - base
		// Gallop from the previous query's position, then bisect.
		hi, step := g, 1
		for hi < len(rest) && rest[hi] < t {
			g = hi + 1
			hi += step
			step *= 2
		}
		i, ok := slices.BinarySearch(rest[g:min(hi+1, len(rest))], t)
		g += i
		if ok {
			s.found = true
			s.j = len(s.q)
			break
		}
		s.j++
	}
	s.v = last
	s.left -= uint32(len(rest))
	s.r = *b
	return s.setLimit()
}

// scanFast2Basic decodes two basic-parameter streams at once, A (a, after
// va) and B (b, after vb), one code of each per iteration, so that their
// dependency chains overlap. It stores B's values in bv and stops when bv
// is full, after a value of A at or above limit, or before a code either
// cannot take in its window. It returns how many codes each decoded and
// their last values. Each reader must have at least 8 bytes of data after
// its position plus 8 bytes per element of bv (a code takes at most 63
// bits). B's deltas are below 2^25 here (codes of at most 63 bits), so its
// values cannot overflow.
func scanFast2Basic(a, b *bitReader, va, vb uint64, limit uint64, bv []uint64) (int, uint64, uint64) {
	const p = BasicP
	data := a.data
	posA, bufA, nbA := a.pos, a.buf, a.nb
	posB, bufB, nbB := b.pos, b.buf, b.nb
	i := 0
	for ; i < len(bv); i++ {
		if nbA < p+9 {
			bufA |= beUint64(data, posA) >> (nbA & 63)
			posA += int(63-nbA) >> 3
			nbA |= 56
		}
		if nbB < p+9 {
			bufB |= beUint64(data, posB) >> (nbB & 63)
			posB += int(63-nbB) >> 3
			nbB |= 56
		}
		qA := uint(bits.Len64(^bufA|1)-1) ^ 63
		qB := uint(bits.Len64(^bufB|1)-1) ^ 63
		// Both codes must fit their windows: nb - need >= 0 for each.
		if int(nbA-qA-(1+p))|int(nbB-qB-(1+p)) < 0 {
			break
		}
		va += uint64(qA)<<p + (bufA<<(qA&63))<<1>>(64-p)
		vb += uint64(qB)<<p + (bufB<<(qB&63))<<1>>(64-p)
		bufA = bufA << (p + 1) << (qA & 63)
		bufB = bufB << (p + 1) << (qB & 63)
		nbA -= qA + 1 + p
		nbB -= qB + 1 + p
		bv[i] = vb
		if va >= limit {
			i++
			break
		}
	}
	a.pos, a.buf, a.nb = posA, bufA, nbA
	b.pos, b.buf, b.nb = posB, bufB, nbB
	return i, va, vb
}
