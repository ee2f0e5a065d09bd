package gcs

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/aead/siphash"
)

// TestSumAllMatchesReference holds sumAll, with the vector lanes where the
// processor has them and without, to github.com/aead/siphash on sets of
// every size around the lanes' thresholds and of one length or many (0 to
// 80 bytes: shorter than a block, within the lanes, and beyond them).
func TestSumAllMatchesReference(t *testing.T) {
	vector := haveSip8
	t.Cleanup(func() { haveSip8 = vector })
	rng := rand.New(rand.NewPCG(3, 5))
	for _, lanes := range []bool{false, vector} {
		haveSip8 = lanes
		for _, n := range []int{0, 1, 7, 15, 16, 17, 31, 100, 1000} {
			for _, maxLen := range []int{-25, -8, -63, -64, 80} {
				t.Run("lanes="+strconv.FormatBool(lanes)+"/n="+strconv.Itoa(n)+"/len="+strconv.Itoa(maxLen), func(t *testing.T) {
					key := randKey(rng)
					elems := make([][]byte, n)
					for i := range elems {
						size := -maxLen // negative: every element that long
						if maxLen > 0 {
							size = rng.IntN(maxLen + 1)
						}
						elems[i] = randBytes(rng, size)
					}
					dst := make([]uint64, n+1)
					dst[n] = 42 // beyond the elements: never written
					newSipKey(&key).sumAll(dst, elems)
					for i, e := range elems {
						if want := siphash.Sum64(e, &key); dst[i] != want {
							t.Fatalf("element %d (%d bytes) %x: %#x, want %#x", i, len(e), e, dst[i], want)
						}
					}
					if dst[n] != 42 {
						t.Fatal("sumAll wrote beyond the elements")
					}
				})
			}
		}
	}
	if !vector {
		t.Log("no AVX-512 here: only the two-at-a-time path was tested")
	}
}
