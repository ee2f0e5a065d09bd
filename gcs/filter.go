package gcs

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// Filter is a Golomb-coded set. It is immutable after construction and safe
// for concurrent reads.
type Filter struct {
	n       uint32
	p       uint8
	m       uint64
	modulus uint64 // N*M: values lie in [0, modulus)
	enc     []byte // CompactSize(N) || bit stream
	off     int    // start of the bit stream in enc
	// ck indexes the stream: ck[b-1] is where block b of batchLen
	// values starts, so that matching can skip blocks it need not decode.
	ck []checkpoint
}

// maxP bounds P so that a remainder fits the 32-bit writes of the encoder.
const maxP = 32

func checkParams(n uint64, p uint8, m uint64) (modulus uint64, err error) {
	if p < 1 || p > maxP {
		return 0, fmt.Errorf("%w: %d (want 1..%d)", ErrBadP, p, maxP)
	}
	if m == 0 {
		return 0, fmt.Errorf("%w: M is zero", ErrBadM)
	}
	if n >= 1<<32 {
		return 0, fmt.Errorf("%w: %d", ErrNTooLarge, n)
	}
	hi, lo := bits.Mul64(n, m)
	if hi != 0 {
		return 0, fmt.Errorf("%w: N*M overflows 64 bits (N=%d, M=%d)", ErrBadM, n, m)
	}
	return lo, nil
}

// Build builds a filter holding elements, hashed with key, with
// Golomb-Rice parameter p (1..32) and false-positive rate 1/m. Elements are
// taken as given: duplicates are not removed (as btcutil's
// gcs.BuildGCSFilter); BuildBasic removes them as BIP 158 requires. The
// encoding takes about N*(p+1+m/2^p) bits, so m should be near 2^p: a far
// larger m makes every unary part long.
func Build(key [16]byte, p uint8, m uint64, elements [][]byte) (*Filter, error) {
	modulus, err := checkParams(uint64(len(elements)), p, m)
	if err != nil {
		return nil, err
	}
	buf := getBuffer(2 * len(elements))
	values, scratch := (*buf)[:len(elements)], (*buf)[len(elements):]
	hashInto(values, newSipKey(&key), modulus, elements)
	sortValues(values, modulus, scratch)
	f := encode(uint32(len(elements)), p, m, modulus, values)
	putBuffer(buf)
	return f, nil
}

// encode builds the filter from sorted values in [0, modulus).
func encode(n uint32, p uint8, m, modulus uint64, sorted []uint64) *Filter {
	// Size the output exactly: N*(P+1) bits plus the unary quotients.
	nbits := uint64(n) * uint64(p+1)
	var last uint64
	for _, v := range sorted {
		nbits += (v - last) >> p
		last = v
	}
	prefix := compactSizeLen(uint64(n))
	size := prefix + int((nbits+7)/8)
	// Eight spare bytes let the writer store a whole word after every code.
	out := make([]byte, size+8)
	appendCompactSize(out[:0], uint64(n))
	w := bitWriter{pos: prefix}
	pp := uint(p) & 63
	mask := uint64(1)<<pp - 1
	ck := make([]checkpoint, 0, numCheckpoints(n))
	last = 0
	for i, v := range sorted {
		if i%batchLen == 0 && i > 0 {
			ck = append(ck, checkpoint{bit: 8*uint64(w.pos-prefix) + uint64(w.nacc), last: last})
		}
		d := v - last
		last = v
		q := d >> pp
		if q+1+uint64(pp) <= 32 {
			// The whole code at once: q ones, a zero, the remainder.
			w = w.write(out, (1<<(q&31)-1)<<(pp+1)|d&mask, uint(q)+1+pp)
			continue
		}
		// Long unary parts, 32 bits at a time.
		for ; q >= 32; q -= 32 {
			w = w.write(out, 1<<32-1, 32)
		}
		w = w.write(out, (1<<q-1)<<1, uint(q)+1)
		w = w.write(out, d&mask, pp)
	}
	if w.nacc > 0 {
		w.pos++ // the last partial byte, zero-padded
	}
	if w.pos != size {
		panic("gcs: encoder size mismatch")
	}
	return &Filter{n: n, p: p, m: m, modulus: modulus, enc: out[:size:size], off: prefix, ck: ck}
}

// bitWriter is the state of a big-endian bit stream being written into a
// buffer with 8 spare bytes past the end of the stream. Fewer than 8
// pending bits stay in the left-aligned accumulator between writes, and
// every write stores a whole word and advances by the whole bytes in it:
// no branch decides when to flush, since code lengths follow no pattern
// the processor could predict. It is passed by value so that it lives in
// registers.
type bitWriter struct {
	pos  int    // next byte of the buffer to complete
	acc  uint64 // pending bits, left-aligned
	nacc uint   // number of pending bits, below 8 between writes
}

// write appends the low n bits of code, n <= 32, to out.
func (w bitWriter) write(out []byte, code uint64, n uint) bitWriter {
	w.nacc += n
	w.acc |= code << ((64 - w.nacc) & 63)
	binary.BigEndian.PutUint64(out[w.pos:], w.acc)
	k := w.nacc >> 3
	w.pos += int(k)
	w.acc <<= (k * 8) & 63
	w.nacc &= 7
	return w
}

// FromBytes decodes a filter from its bit stream alone (N, P and M known
// from elsewhere). The stream is validated strictly: it must hold exactly N
// values, each below N*M, padded with zero bits to a whole byte. data is
// copied.
func FromBytes(n uint32, p uint8, m uint64, data []byte) (*Filter, error) {
	modulus, err := checkParams(uint64(n), p, m)
	if err != nil {
		return nil, err
	}
	ck, err := validate(n, uint(p), modulus, data)
	if err != nil {
		return nil, err
	}
	prefix := compactSizeLen(uint64(n))
	enc := make([]byte, 0, prefix+len(data))
	enc = appendCompactSize(enc, uint64(n))
	enc = append(enc, data...)
	return &Filter{n: n, p: p, m: m, modulus: modulus, enc: enc, off: prefix, ck: ck}, nil
}

// FromNBytes decodes a filter serialized as in BIP 157 cfilter messages: N
// as a canonical CompactSize, then the bit stream. It validates as FromBytes
// does; what it allocates is proportional to len(b), never to the claimed
// N. b is copied.
func FromNBytes(p uint8, m uint64, b []byte) (*Filter, error) {
	n, size, modulus, err := readHeader(p, m, b)
	if err != nil {
		return nil, err
	}
	ck, err := validate(uint32(n), uint(p), modulus, b[size:])
	if err != nil {
		return nil, err
	}
	enc := make([]byte, len(b))
	copy(enc, b)
	return &Filter{n: uint32(n), p: p, m: m, modulus: modulus, enc: enc, off: size, ck: ck}, nil
}

// readHeader reads N from the start of a serialized filter and checks it
// with the parameters; it returns N, the length of its encoding and N*M.
func readHeader(p uint8, m uint64, b []byte) (n uint64, size int, modulus uint64, err error) {
	if n, size, err = readCompactSize(b); err != nil {
		return 0, 0, 0, err
	}
	if modulus, err = checkParams(n, p, m); err != nil {
		return 0, 0, 0, err
	}
	return n, size, modulus, nil
}

// batchLen is how many values the decoder produces per call: large enough
// to amortise the call, small enough for a stack buffer.
const batchLen = 64

// validate decodes every value of an untrusted stream once, without
// storing them, so that matching can later trust it, and returns the
// stream's block index. It agrees exactly with decoding each block with
// decodeBatch and checking every value (validateRef in the tests).
// Nothing is allocated before the claimed N is checked against the bytes
// present, so the index is bounded by the input size.
func validate(n uint32, p uint, modulus uint64, data []byte) ([]checkpoint, error) {
	if need := uint64(n) * uint64(p+1); need > 8*uint64(len(data)) {
		return nil, fmt.Errorf("%w: N=%d needs at least %d bits, the stream has %d",
			ErrNTooLarge, n, need, 8*uint64(len(data)))
	}
	ck := make([]checkpoint, 0, numCheckpoints(n))
	r := bitReader{data: data}
	var v uint64
	for done := uint32(0); done < n; {
		if done > 0 {
			ck = append(ck, checkpoint{bit: r.bitPos(), last: v})
		}
		k := min(n-done, batchLen)
		start := r
		last, carry, err := r.skipBatch(p, v, int(k))
		if err != nil {
			return nil, decodingErr(done, k, n, err)
		}
		// Without a carry the values rise, so the last is the largest.
		if carry != 0 || last >= modulus {
			return nil, rangeError(&start, p, v, done, k, n, modulus)
		}
		v = last
		done += k
	}
	left := r.remaining()
	if left >= 8 {
		return nil, fmt.Errorf("%w: %s after the last value", ErrTrailingData, byteCount(left/8))
	}
	if left > 0 && r.buf>>(64-left) != 0 {
		return nil, fmt.Errorf("%w: non-zero padding bits", ErrTrailingData)
	}
	return ck, nil
}

// decodingErr is err met decoding the k values from value done (counted
// from 0) of n.
func decodingErr(done, k, n uint32, err error) error {
	if k == 1 {
		return fmt.Errorf("decoding value %d of %d: %w", done, n, err)
	}
	return fmt.Errorf("decoding values %d to %d of %d: %w", done, done+k-1, n, err)
}

// rangeError decodes again the block of k values that starts at r, after
// v, to name the first value that is not below modulus or that wrapped
// around 2^64 (shows as a decrease).
func rangeError(r *bitReader, p uint, v uint64, done, k, n uint32, modulus uint64) error {
	var batch [batchLen]uint64
	vals := batch[:k]
	r.decodeBatch(p, v, vals) // decoded once already: no error
	prev := v
	for i, x := range vals {
		if x >= modulus || x < prev {
			return fmt.Errorf("%w: value %d of %d is not below N*M=%d",
				ErrValueOutOfRange, done+uint32(i), n, modulus)
		}
		prev = x
	}
	// Unreachable: validate saw a carry or a last value out of range.
	return decodingErr(done, k, n, ErrValueOutOfRange)
}

// N returns the number of items in the filter.
func (f *Filter) N() uint32 { return f.n }

// P returns the Golomb-Rice parameter.
func (f *Filter) P() uint8 { return f.p }

// M returns the inverse false-positive rate per query item.
func (f *Filter) M() uint64 { return f.m }

// Bytes returns a copy of the bit stream, without N.
func (f *Filter) Bytes() []byte {
	return append([]byte(nil), f.enc[f.off:]...)
}

// NBytes returns a copy of the filter serialized as in cfilter messages:
// N as a CompactSize, then the bit stream. The empty filter is the single
// byte 00.
func (f *Filter) NBytes() []byte {
	return append([]byte(nil), f.enc...)
}

// Values appends the filter's sorted values, each in [0, N*M), to dst.
func (f *Filter) Values(dst []uint64) []uint64 {
	r := bitReader{data: f.enc[f.off:]}
	var v uint64
	for done := uint32(0); done < f.n; {
		k := min(f.n-done, batchLen)
		dst = slices.Grow(dst, int(k))
		vals := dst[len(dst) : len(dst)+int(k)]
		v, _ = r.decodeBatch(uint(f.p), v, vals) // validated at construction
		dst = dst[:len(dst)+int(k)]
		done += k
	}
	return dst
}

// byteCount says n bytes, in the singular when n is one.
func byteCount(n uint64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
