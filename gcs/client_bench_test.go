package gcs

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	btcgcs "github.com/btcsuite/btcd/btcutil/gcs"
)

// clientBlocks is how many distinct filters the per-block benchmarks cycle
// through, so that no single filter's branch pattern is learnt and the
// filters come from the L2 cache, not L1, as fresh network data would.
const clientBlocks = 8

// clientBench is the input of one per-block benchmark case: clientBlocks
// basic-parameter filters of benchN 25-byte scripts, each with its key,
// and a watch list that hits each filter once (hit) or none (miss).
type clientBench struct {
	keys    [clientBlocks][16]byte
	nbytes  [clientBlocks][]byte
	watches [clientBlocks][][]byte // the watch list for each block
}

// newClientBench builds the filters and watch lists. For a hit, block i's
// watch list holds one of its scripts, at a random position of the
// filter, among w-1 others; for a miss, w scripts that no filter matches
// even by a false positive (checked with btcutil). The rng seeds depend
// only on w, so both sides of a pair see the same inputs.
func newClientBench(b *testing.B, w int, hit bool) *clientBench {
	rng := rand.New(rand.NewPCG(41, uint64(w)))
	c := &clientBench{}
	watch := randElements(rng, w, 25)
	for i := range clientBlocks {
		for j := range c.keys[i] {
			c.keys[i][j] = byte(rng.Uint32())
		}
		elems := randElements(rng, benchN, 25)
		f, err := Build(c.keys[i], BasicP, BasicM, elems)
		if err != nil {
			b.Fatal(err)
		}
		c.nbytes[i] = f.NBytes()
		wl := append([][]byte(nil), watch...)
		if hit {
			wl[rng.IntN(w)] = elems[rng.IntN(benchN)]
		}
		c.watches[i] = wl
		bf, err := btcgcs.FromNBytes(BasicP, BasicM, c.nbytes[i])
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := bf.MatchAny(c.keys[i], wl); err != nil || ok != hit {
			// A false positive in a miss list: replace the list.
			if hit || err != nil {
				b.Fatalf("btcutil: %v, %v", ok, err)
			}
			return newClientBench(b, w+1_000_000, hit)
		}
	}
	return c
}

// BenchmarkClientBlock is the per-block cost of a light client: the
// cfilter payload as received, decoded, validated and matched against a
// watch list of W scripts. Ours is a reused Matcher's MatchBytes (strict:
// the whole filter is validated, hit or miss) and MatchVerifiedBytes (the
// filter hash already checked, so it may stop early); btcutil's is
// FromNBytes then MatchAny, which validates nothing and stops at the first
// match. ns/element is the time over the filter's N = 5,000.
func BenchmarkClientBlock(b *testing.B) {
	for _, verified := range []bool{false, true} {
		for _, hit := range []bool{false, true} {
			for _, w := range []int{1, 10, 100, 1000, 10000} {
				name := "strict"
				if verified {
					name = "verified"
				}
				if hit {
					name += "/hit"
				} else {
					name += "/miss"
				}
				name += "/W" + strconv.Itoa(w)
				c := newClientBench(b, w, hit)
				b.Run(name+"/spvfilter", func(b *testing.B) {
					var ms [clientBlocks]*Matcher
					for i := range ms {
						ms[i] = NewMatcher(c.watches[i])
						ms[i].MatchBytes(c.nbytes[i], c.keys[i]) // size the buffers
					}
					t := startCPU(b)
					i := 0
					for b.Loop() {
						k := i % clientBlocks
						var ok bool
						var err error
						if verified {
							ok, err = ms[k].MatchVerifiedBytes(c.nbytes[k], c.keys[k])
						} else {
							ok, err = ms[k].MatchBytes(c.nbytes[k], c.keys[k])
						}
						if ok != hit || err != nil {
							b.Fatal(ok, err)
						}
						i++
					}
					t.stopPerElement(i)
				})
				b.Run(name+"/btcutil", func(b *testing.B) {
					t := startCPU(b)
					i := 0
					for b.Loop() {
						k := i % clientBlocks
						f, err := btcgcs.FromNBytes(BasicP, BasicM, c.nbytes[k])
						if err != nil {
							b.Fatal(err)
						}
						if ok, err := f.MatchAny(c.keys[k], c.watches[k]); ok != hit || err != nil {
							b.Fatal(ok, err)
						}
						i++
					}
					t.stopPerElement(i)
				})
			}
		}
	}
}

// reportPerElement reports the time per filter element.
func reportPerElement(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/element")
}

// cpuTimer measures the thread CPU time of one benchmark loop, which a
// busy machine disturbs much less than wall time.
type cpuTimer struct {
	b     *testing.B
	start int64
	ok    bool
}

func startCPU(b *testing.B) cpuTimer {
	b.ReportAllocs()
	runtime.LockOSThread() // the thread clock must follow the loop
	start, ok := threadCPUTime()
	return cpuTimer{b, start, ok}
}

// stop reports cpu-ns/op for n operations, where the thread clock
// exists, and returns it (0 if not).
func (t cpuTimer) stop(n int) float64 {
	end, ok := threadCPUTime()
	runtime.UnlockOSThread()
	if !t.ok || !ok || n == 0 {
		return 0
	}
	cpu := float64(end-t.start) / float64(n)
	t.b.ReportMetric(cpu, "cpu-ns/op")
	return cpu
}

// stopPerElement is stop for operations on filters of benchN values: it
// also reports ns/element and cpu-ns/element.
func (t cpuTimer) stopPerElement(n int) {
	reportPerElement(t.b)
	if cpu := t.stop(n); cpu > 0 {
		t.b.ReportMetric(cpu/benchN, "cpu-ns/element")
	}
}
