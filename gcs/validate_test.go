package gcs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// validateRef is the plain form of validate: it decodes each block of
// values into a buffer with decodeBatch and checks every value. validate
// must agree with it exactly, index and error text included.
func validateRef(n uint32, p uint, modulus uint64, data []byte) ([]checkpoint, error) {
	if need := uint64(n) * uint64(p+1); need > 8*uint64(len(data)) {
		return nil, fmt.Errorf("%w: N=%d needs at least %d bits, the stream has %d",
			ErrNTooLarge, n, need, 8*uint64(len(data)))
	}
	var ck []checkpoint
	r := bitReader{data: data}
	var batch [batchLen]uint64
	var v uint64
	for done := uint32(0); done < n; {
		if done > 0 {
			ck = append(ck, checkpoint{bit: r.bitPos(), last: v})
		}
		k := min(n-done, batchLen)
		vals := batch[:k]
		last, err := r.decodeBatch(p, v, vals)
		if err != nil {
			return nil, decodingErr(done, k, n, err)
		}
		prev := v
		for i, x := range vals {
			if x >= modulus || x < prev {
				return nil, fmt.Errorf("%w: value %d of %d is not below N*M=%d",
					ErrValueOutOfRange, done+uint32(i), n, modulus)
			}
			prev = x
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

// checkValidate compares validate with validateRef on one stream.
func checkValidate(t *testing.T, n uint32, p uint, modulus uint64, data []byte) {
	t.Helper()
	ck, err := validate(n, p, modulus, data)
	ckRef, errRef := validateRef(n, p, modulus, data)
	if (err == nil) != (errRef == nil) || (err != nil && err.Error() != errRef.Error()) {
		t.Fatalf("n=%d p=%d modulus=%d stream %x:\nvalidate:    %v\nvalidateRef: %v", n, p, modulus, data, err, errRef)
	}
	if err == nil && !slices.Equal(ck, ckRef) {
		t.Fatalf("n=%d p=%d modulus=%d: index differs from validateRef", n, p, modulus)
	}
}

// TestValidateMatchesReference runs validate and validateRef on built
// filters, damaged copies of them (bits flipped, bytes cut or added, N
// off by a few) and random bytes.
func TestValidateMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for i := 0; i < 3000; i++ {
		p := uint8(1 + rng.IntN(32))
		m := 1 + rng.Uint64N(1<<(p+2))
		if i%3 == 0 {
			p, m = BasicP, BasicM
		}
		f, err := Build(randKey(rng), p, m, randSet(rng, rng.IntN(700), 20))
		if err != nil {
			t.Fatal(err)
		}
		n, data := f.N(), f.Bytes()
		checkValidate(t, n, uint(p), f.modulus, data)
		switch i % 5 {
		case 0:
			if len(data) > 0 {
				for range 1 + rng.IntN(4) {
					data[rng.IntN(len(data))] ^= 1 << rng.IntN(8)
				}
			}
		case 1:
			data = data[:rng.IntN(len(data)+1)]
		case 2:
			data = append(data, byte(rng.IntN(3)))
		case 3:
			n = uint32(max(0, int(n)+rng.IntN(5)-2))
		default:
			data = randBytes(rng, rng.IntN(200))
			n = uint32(rng.IntN(len(data)*8/int(p+1) + 2))
		}
		modulus := uint64(n) * m
		if modulus == 0 || modulus/m != uint64(n) {
			continue
		}
		checkValidate(t, n, uint(p), modulus, data)
	}
}

// TestSkipBatchMatchesDecodeBatch compares skipBatch with decodeBatch
// from start values anywhere up to 2^64-1, so that sums near 2^64 take
// skipBatch's checked path: the same last value, the same position,
// the same error, and a carry exactly when a sum wrapped.
func TestSkipBatchMatchesDecodeBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	starts := []uint64{0, 1 << 40, skipFastMaxStart - 1<<30, skipFastMaxStart, skipFastMaxStart + 1, ^uint64(0) - 1<<36, ^uint64(0) - 3, ^uint64(0)}
	wraps := 0
	for i := 0; i < 500; i++ {
		p := uint8(1 + rng.IntN(32))
		m := 1 + rng.Uint64N(1<<(p+2))
		f, err := Build(randKey(rng), p, m, randSet(rng, 1+rng.IntN(300), 20))
		if err != nil {
			t.Fatal(err)
		}
		data := f.Bytes()
		if i%4 == 0 {
			data = data[:rng.IntN(len(data)+1)] // truncated
		}
		for _, v := range starts {
			k := min(int(f.N()), batchLen)
			r1 := bitReader{data: data}
			r2 := r1
			vals := make([]uint64, k)
			want, errWant := r1.decodeBatch(uint(p), v, vals)
			got, carry, err := r2.skipBatch(uint(p), v, k)
			if (err == nil) != (errWant == nil) || (err != nil && err.Error() != errWant.Error()) {
				t.Fatalf("p=%d start %#x: error %v, decodeBatch %v", p, v, err, errWant)
			}
			if err != nil {
				continue
			}
			wrapped := false
			prev := v
			for _, x := range vals {
				wrapped = wrapped || x < prev
				prev = x
			}
			// The slow path refills differently: compare positions.
			same := r1.bitPos() == r2.bitPos()
			if got != want || (carry != 0) != wrapped || !same {
				t.Fatalf("p=%d start %#x: last %#x carry %d, decodeBatch last %#x wrapped %v (same position: %v)",
					p, v, got, carry, want, wrapped, same)
			}
			if wrapped {
				wraps++
			}
		}
	}
	if wraps == 0 {
		t.Fatal("no batch wrapped around 2^64: the carry went untested")
	}
}
