package chain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// knownPaths is a run of ever longer paths from the genesis block, each
// forking off the one before, and what a reader may see of them.
type knownPaths struct {
	paths  [][]wire.BlockHeader
	height map[chainhash.Hash]int32          // of every header of a path
	parent map[chainhash.Hash]chainhash.Hash // of every header of a path
}

// newKnownPaths mines n paths; each forks up to 60 blocks below the
// tip of the one before and ends above it.
func newKnownPaths(t *testing.T, params *chaincfg.Params, n int, rng *rand.Rand) *knownPaths {
	k := &knownPaths{height: map[chainhash.Hash]int32{}, parent: map[chainhash.Hash]chainhash.Hash{}}
	path := minePath(t, params, []wire.BlockHeader{params.GenesisBlock.Header}, 80, time.Minute)
	for i := range n {
		k.paths = append(k.paths, path)
		for h := range path {
			hash := path[h].BlockHash()
			k.height[hash], k.parent[hash] = int32(h), path[h].PrevBlock
		}
		fork := len(path) - 1 - rng.IntN(61)
		path = minePath(t, params, path[:fork+1], len(path)-fork+rng.IntN(30), time.Duration(i+2)*time.Minute)
	}
	return k
}

// checkAt reports an error unless hash is a known block at height.
func (k *knownPaths) checkAt(hash chainhash.Hash, height int32) error {
	if h, ok := k.height[hash]; !ok || h != height {
		return fmt.Errorf("hash %v at height %d: known at %d, %v", hash, height, h, ok)
	}
	return nil
}

// checkLinked reports an error unless hashes, from height from up, are
// known blocks each the parent of the next.
func (k *knownPaths) checkLinked(hashes []chainhash.Hash, from int32) error {
	for i, hash := range hashes {
		if err := k.checkAt(hash, from+int32(i)); err != nil {
			return err
		}
		if i > 0 && k.parent[hash] != hashes[i-1] {
			return fmt.Errorf("hashes %d and %d of a range from %d are of two chains", i-1, i, from)
		}
	}
	return nil
}

// checkLocator reports an error unless loc starts at a known block at
// height (or anywhere, for a height below 0), steps back along one chain
// for ten blocks and ends at the genesis block.
func (k *knownPaths) checkLocator(loc []*chainhash.Hash, height int32, genesis chainhash.Hash) error {
	if height < 0 {
		height = k.height[*loc[0]]
	}
	dense := derefHashes(loc[:min(10, len(loc)-1)])
	slices.Reverse(dense)
	if err := k.checkLinked(dense, height+1-int32(len(dense))); err != nil {
		return fmt.Errorf("locator at %d: %w", height, err)
	}
	if *loc[len(loc)-1] != genesis {
		return fmt.Errorf("locator at %d does not end at the genesis block", height)
	}
	return nil
}

// read makes one round of every reading method on c and reports what it
// saw that is not a state of the chain.
func (k *knownPaths) read(c *Chain, rng *rand.Rand) error {
	tip, hash := c.Tip()
	if err := k.checkAt(hash, tip); err != nil {
		return fmt.Errorf("Tip: %w", err)
	}
	// The tip never goes down in this test: below it, every height
	// is there.
	from := max(0, tip-rng.Int32N(80))
	hashes, err := c.Hashes(from, tip)
	if err != nil {
		return err
	}
	if err := k.checkLinked(hashes, from); err != nil {
		return fmt.Errorf("Hashes: %w", err)
	}
	h := rng.Int32N(tip + 1)
	if err := k.checkAt(c.Hash(h), h); err != nil {
		return fmt.Errorf("Hash: %w", err)
	}
	hdr := c.Header(h)
	if err := k.checkAt(hdr.BlockHash(), h); err != nil {
		return fmt.Errorf("Header: %w", err)
	}
	if got, ok := c.HeightOf(hashes[0]); ok && got != from {
		return fmt.Errorf("HeightOf: %d, want %d", got, from)
	}
	if mtp := c.MedianTime(h); mtp.Before(c.Params().GenesisBlock.Header.Timestamp) {
		return fmt.Errorf("MedianTime(%d) = %v", h, mtp)
	}
	genesis := *c.Params().GenesisHash
	if err := k.checkLocator(c.Locator(), -1, genesis); err != nil {
		return err
	}
	if err := k.checkLocator(c.LocatorAt(h), h, genesis); err != nil {
		return err
	}
	return nil
}

// TestConcurrentReaders: readers calling every reading method while a
// writer extends the chain and reorganizes it, by Extend and by branches,
// see only states of the chain (and the race detector sees no race).
func TestConcurrentReaders(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	k := newKnownPaths(t, params, 30, rand.New(rand.NewPCG(4, 4)))
	for _, kind := range []string{"memory", "backed"} {
		t.Run(kind, func(t *testing.T) {
			c, st := New(params), (*memStore)(nil)
			if kind == "backed" {
				st = newMemStore(params)
				var err error
				if c, err = backed(params, st, testWindow); err != nil {
					t.Fatal(err)
				}
			}
			var done atomic.Bool
			var reads atomic.Int64
			var wg sync.WaitGroup
			for r := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(5, uint64(r)))
					for !done.Load() {
						if err := k.read(c, rng); err != nil {
							t.Error(err)
							return
						}
						reads.Add(1)
					}
				}()
			}
			start := time.Now()
			k.write(t, c)
			done.Store(true)
			wg.Wait()
			t.Logf("%d rounds of reads while writing %d paths in %v", reads.Load(), len(k.paths), time.Since(start).Round(time.Millisecond))
			isPath(t, c, st, k.paths[len(k.paths)-1])
		})
	}
}

// write takes c along the paths: by one Extend for even paths, by a
// branch in messages of 10 headers for odd ones.
func (k *knownPaths) write(t *testing.T, c *Chain) {
	for i, path := range k.paths {
		tip, _ := c.Tip()
		fork := tip
		for fork > 0 && c.Hash(fork) != path[fork].BlockHash() {
			fork--
		}
		msgs := pages(path[fork+1:], 10)
		if i%2 == 0 || fork == tip {
			if err := extend(c, ptrs(path[fork+1:])); err != nil {
				t.Fatalf("path %d: %v", i, err)
			}
			continue
		}
		b := mustBranch(t, c, msgs[0])
		for _, m := range msgs[1:] {
			if err := b.Add(m); err != nil {
				t.Fatalf("path %d: %v", i, err)
			}
		}
		if _, err := c.Adopt(b); err != nil {
			t.Fatalf("path %d: %v", i, err)
		}
	}
}
