package cuckoo

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/gcs/lab"
)

// randomBlocks returns n blocks of perBlock random scripts.
func randomBlocks(seed uint64, n, perBlock int) []lab.Block {
	rng := rand.New(rand.NewPCG(seed, 3))
	blocks := make([]lab.Block, n)
	for i := range blocks {
		b := &blocks[i]
		b.Height = int32(i)
		for j := range b.Hash {
			b.Hash[j] = byte(rng.Uint32())
		}
		b.Size = 1_000_000
		for range perBlock {
			e := make([]byte, 22+rng.IntN(13))
			for j := range e {
				e[j] = byte(rng.Uint32())
			}
			b.Elements = append(b.Elements, e)
		}
	}
	return blocks
}

// TestFalsePositiveRate: on a million members, every one found (Measure
// fails otherwise) and the false positives of the probes inside the
// 99.9% interval of the rate the buckets imply.
func TestFalsePositiveRate(t *testing.T) {
	r, err := lab.Measure(randomBlocks(1, 200, 5000), Design(), lab.Options{Probes: 200_000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d members, %.2f bits per element (bound %.2f, %+.1f%%); %d false positives, %.1f expected [%d, %d]",
		r.Elements, r.BitsPerElement, r.BoundBitsPerElement, r.OverheadPercent, r.FalsePositives, r.ExpectedFalsePositives, r.Interval[0], r.Interval[1])
	if r.Elements != 1_000_000 {
		t.Fatalf("%d members", r.Elements)
	}
	if !r.WithinInterval() {
		t.Errorf("%d false positives outside [%d, %d]", r.FalsePositives, r.Interval[0], r.Interval[1])
	}
	// 5,000 elements at most 95% of 8,192 slots: a load of 61%, about
	// 8·0.61/255 = 1.9%, 13.1 bits per element.
	if r.ExpectedRate < 0.017 || r.ExpectedRate > 0.021 || math.Abs(r.BitsPerElement-13.1) > 0.1 {
		t.Errorf("rate %.4f, %.2f bits per element; want about 1.9%% and 13.1", r.ExpectedRate, r.BitsPerElement)
	}
}

// TestExpectedRate holds the counting formula to the direct average over
// every fingerprint and first bucket, on filters from one bucket up.
func TestExpectedRate(t *testing.T) {
	for _, n := range []int{1, 3, 4, 10, 100, 3000} {
		f, err := Design().Build([16]byte{byte(n)}, randomBlocks(uint64(n), 1, n)[0].Elements)
		if err != nil {
			t.Fatal(err)
		}
		buckets := f.(*filter).f.Encode()
		nb := uint(len(buckets) / bucketSize)
		in := func(b uint, fp byte) bool {
			for _, x := range buckets[b*bucketSize : (b+1)*bucketSize] {
				if x == fp {
					return true
				}
			}
			return false
		}
		hits := 0
		for i := range nb {
			for fp := 1; fp <= fingerprints; fp++ {
				if in(i, byte(fp)) || in(i^(altHash(byte(fp))&(nb-1)), byte(fp)) {
					hits++
				}
			}
		}
		want := float64(hits) / float64(fingerprints*int(nb))
		if got := f.ExpectedRate(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%d elements: ExpectedRate %v, direct %v", n, got, want)
		}
	}
}

// TestVectors runs the cuckoo filter on BIP 158's vectors' blocks.
func TestVectors(t *testing.T) {
	file, err := os.Open("../../../testvectors/bip158/testnet-19.json")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	blocks, err := lab.ReadVectors(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := lab.Measure(blocks, Design(), lab.Options{Probes: 100_000, Watched: []int{1, 100}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Elements != 40 || !r.WithinInterval() || len(r.Match) != 2 {
		t.Errorf("%d elements, %d false positives in [%d, %d], %d match times", r.Elements, r.FalsePositives, r.Interval[0], r.Interval[1], len(r.Match))
	}
	// The block without elements still has its one bucket.
	empty := lab.Block{Hash: chainhash.Hash{1}}
	f, err := Design().Build(empty.Key(), nil)
	if err != nil || f.Size() != 1+bucketSize || f.ExpectedRate() != 0 {
		t.Errorf("empty block: %v, size %d", err, f.Size())
	}
}
