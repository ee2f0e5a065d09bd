package bip37

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
)

// Each case runs as two sub-benchmarks, .../spvfilter and .../btcutil, on
// identical filters (explicit parameters, so that the two sizing rules do
// not make them differ) and identical inputs. Besides ns/op, each reports
// cpu-ns/op, the CPU time of the benchmarking thread per operation (on
// Linux), which a busy machine disturbs much less than wall time.

// cpuTimer measures the thread CPU time of one benchmark loop.
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

// stop reports cpu-ns/op for n operations.
func (t cpuTimer) stop(n int) {
	end, ok := threadCPUTime()
	runtime.UnlockOSThread()
	if t.ok && ok && n > 0 {
		t.b.ReportMetric(float64(end-t.start)/float64(n), "cpu-ns/op")
	}
}

const (
	benchElements = 1000
	benchFPRate   = 0.0001
	benchPool     = 1024
)

// benchFilters returns an empty filter sized for 1,000 elements at 1e-4
// (2,396 bytes, 13 hash functions) and btcutil's copy of it.
func benchFilters(flags wire.BloomUpdateType) (*Filter, *bloom.Filter) {
	f := NewFilter(benchElements, benchFPRate, 0x5eed, flags)
	return f, btcutilFilter(f)
}

// benchElems returns n 20-byte elements (HASH160s, the usual BIP 37
// element).
func benchElems(seed uint64, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed))
	out := make([][]byte, n)
	for i := range out {
		out[i] = randBytes(r, 20)
	}
	return out
}

func BenchmarkAdd(b *testing.B) {
	elems := benchElems(1, benchPool)
	ours, theirs := benchFilters(wire.BloomUpdateNone)
	b.Run("20B/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		i := 0
		for ; b.Loop(); i++ {
			ours.Add(elems[i%benchPool])
		}
		t.stop(i)
	})
	b.Run("20B/btcutil", func(b *testing.B) {
		t := startCPU(b)
		i := 0
		for ; b.Loop(); i++ {
			theirs.Add(elems[i%benchPool])
		}
		t.stop(i)
	})
}

func BenchmarkContains(b *testing.B) {
	elems := benchElems(1, benchPool)
	misses := benchElems(2, benchPool)
	ours, theirs := benchFilters(wire.BloomUpdateNone)
	for _, e := range elems {
		ours.Add(e)
		theirs.Add(e)
	}
	// The filter holds the 1,024 hit elements (sized for 1,000, it is
	// near its design density). Both pools hold benchPool elements so that
	// picking one costs a mask, not a division, in the loop.
	for _, c := range []struct {
		name  string
		elems [][]byte
	}{{"hit", elems}, {"miss", misses}} {
		b.Run(c.name+"/spvfilter", func(b *testing.B) {
			t := startCPU(b)
			i := 0
			for ; b.Loop(); i++ {
				ours.Contains(c.elems[i%benchPool])
			}
			t.stop(i)
		})
		b.Run(c.name+"/btcutil", func(b *testing.B) {
			t := startCPU(b)
			i := 0
			for ; b.Loop(); i++ {
				theirs.Matches(c.elems[i%benchPool])
			}
			t.stop(i)
		})
	}
}

// benchBlock returns a deterministic block-sized batch of 2,000 P2PKH and
// P2WPKH transactions (1-3 inputs, 1-3 outputs) and a wallet filter of 100
// elements, 10 of which are output hashes in the block.
func benchBlock() ([]*wire.MsgTx, [][]byte) {
	r := rand.New(rand.NewPCG(21, 22))
	txs := make([]*wire.MsgTx, 2000)
	for i := range txs {
		txs[i] = genTx(r, false)
	}
	wallet := benchElems(3, 90)
	for i := 0; i < 10; i++ {
		pushes := pushesOf(txs[r.IntN(len(txs))])
		wallet = append(wallet, pushes[0])
	}
	return txs, wallet
}

func BenchmarkMatchTxAndUpdate(b *testing.B) {
	txs, wallet := benchBlock()
	ours, theirs := benchFilters(wire.BloomUpdateAll)
	for _, e := range wallet {
		ours.Add(e)
		theirs.Add(e)
	}
	// Each iteration scans the whole block, as a node serving a
	// merkleblock does. btcutil needs a btcutil.Tx per transaction, which
	// computes and caches the txid; a fresh one per block is what a
	// scanner pays.
	b.Run("block2000/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			for _, tx := range txs {
				ours.MatchTxAndUpdate(tx)
			}
		}
		t.stop(n)
	})
	b.Run("block2000/btcutil", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			for _, tx := range txs {
				theirs.MatchTxAndUpdate(btcutil.NewTx(tx))
			}
		}
		t.stop(n)
	})
}
