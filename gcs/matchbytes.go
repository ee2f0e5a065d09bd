package gcs

// MatchBytes reports whether any watched element may be in the BIP 158
// basic filter nbytes (a cfilter payload: CompactSize N, then the bit
// stream), keyed by key (BasicKey of the block hash). It decodes,
// validates and matches in a single pass over nbytes, without building a
// Filter and without allocating: use it for the one question a light
// client asks of each block's filter. Use DecodeBasic and then Match,
// MatchAny or Matcher.Match instead for a filter that will be queried
// again.
//
// MatchBytes validates the whole filter even after a match: it accepts
// and rejects exactly what DecodeBasic does, with the same errors, and
// answers only for a valid filter. When the filter is already known to be
// the committed one (its hash checked against a filter header), prefer
// MatchVerifiedBytes, which may stop early.
func (m *Matcher) MatchBytes(nbytes []byte, key [16]byte) (bool, error) {
	return m.MatchNBytes(BasicP, BasicM, nbytes, key, false)
}

// MatchVerifiedBytes is MatchBytes for a filter whose hash the caller has
// already checked against a trusted filter header, as a BIP 157 client
// does for every cfilter: it may stop at the first match, or as soon as
// the filter's values pass every watched element, so that a match costs
// only the part of the filter up to it. The rest of the filter is then
// not validated: it may return a result with no error for a malformed
// filter, where MatchBytes would return an error. It never panics or reads beyond
// nbytes, whatever the input. A BIP 157 client whose filter hashes are
// verified against its header chain should use it; one that is not should
// use MatchBytes.
func (m *Matcher) MatchVerifiedBytes(nbytes []byte, key [16]byte) (bool, error) {
	return m.MatchNBytes(BasicP, BasicM, nbytes, key, true)
}

// MatchNBytes is MatchBytes (verified false) or MatchVerifiedBytes
// (verified true) for a filter with Golomb-Rice parameter p and
// false-positive parameter mm, serialized as FromNBytes reads it. With
// verified false it accepts and rejects exactly what FromNBytes(p, mm,
// nbytes) does, with the same errors.
func (m *Matcher) MatchNBytes(p uint8, mm uint64, nbytes []byte, key [16]byte, verified bool) (bool, error) {
	n, size, modulus, err := readHeader(p, mm, nbytes)
	if err != nil {
		return false, err
	}
	data := nbytes[size:]
	if hashJoinMin(uint32(n), len(m.elems)) && n*uint64(p+1) <= 8*uint64(len(data)) {
		// n is bounded by the input's size: the buffers are too.
		m.vals = grow(m.vals, int(n))
		m.starts = grow(m.starts, numBuckets(uint32(n), modulus)+1)
		found, valid := matchLookup(data, uint32(n), uint(p), modulus, key, m.elems, m.vals, m.starts)
		if valid {
			return found, nil
		}
		return m.strictError(p, mm, nbytes, key, data, uint32(n), modulus)
	}
	var q []uint64
	if n > 0 && len(m.elems) > 0 {
		q = m.hashes(key, modulus)
	}
	var scratch []uint64
	if canSplit(uint32(n), uint(p), modulus, data) {
		if need := splitLen(data); cap(m.vals) < need {
			m.vals = make([]uint64, need) // bounded by len(nbytes)
		}
		scratch = m.vals[:cap(m.vals)]
	}
	found, valid := scanMatch(data, uint32(n), uint(p), modulus, q, verified, scratch)
	if valid {
		return found, nil
	}
	return m.strictError(p, mm, nbytes, key, data, uint32(n), modulus)
}

// strictError returns the strict validator's error for a stream the one
// pass found malformed. The two agree on every input (the tests and fuzz
// target hold them to it); should they ever not, the validator's verdict
// wins and the answer comes from a decoded filter.
func (m *Matcher) strictError(p uint8, mm uint64, nbytes []byte, key [16]byte, data []byte, n uint32, modulus uint64) (bool, error) {
	if _, err := validate(n, uint(p), modulus, data); err != nil {
		return false, err
	}
	f, err := FromNBytes(p, mm, nbytes)
	if err != nil {
		return false, err
	}
	return m.Match(f, key), nil
}
