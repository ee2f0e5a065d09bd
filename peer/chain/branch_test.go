package chain

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// minePath returns base (from the genesis block) followed by n headers
// mined on top of it, spacing apart; another spacing gives another
// branch.
func minePath(t *testing.T, params *chaincfg.Params, base []wire.BlockHeader, n int, spacing time.Duration) []wire.BlockHeader {
	t.Helper()
	c, err := Load(params, slices.Clone(base))
	if err != nil {
		t.Fatal(err)
	}
	grow(t, c, n, spacing)
	return c.headers
}

// pages cuts hs into headers messages of size headers.
func pages(hs []wire.BlockHeader, size int) [][]*wire.BlockHeader {
	var out [][]*wire.BlockHeader
	for len(hs) > 0 {
		n := min(size, len(hs))
		out = append(out, ptrs(hs[:n]))
		hs = hs[n:]
	}
	return out
}

func ptrs(hs []wire.BlockHeader) []*wire.BlockHeader {
	out := make([]*wire.BlockHeader, len(hs))
	for i := range hs {
		out[i] = &hs[i]
	}
	return out
}

// chainKind makes a chain under test of the headers path (from the
// genesis block): in memory, or backed by a memStore (nil otherwise)
// with the real window.
type chainKind struct {
	name string
	make func(t *testing.T, params *chaincfg.Params, path []wire.BlockHeader) (*Chain, *memStore)
}

var chainKinds = []chainKind{
	{"memory", func(t *testing.T, params *chaincfg.Params, path []wire.BlockHeader) (*Chain, *memStore) {
		c, err := Load(params, slices.Clone(path))
		if err != nil {
			t.Fatal(err)
		}
		return c, nil
	}},
	{"backed", func(t *testing.T, params *chaincfg.Params, path []wire.BlockHeader) (*Chain, *memStore) {
		st := storeOf(path...)
		c, err := Backed(params, st)
		if err != nil {
			t.Fatal(err)
		}
		return c, st
	}},
}

// hashesOf returns the hashes of hs.
func hashesOf(hs []wire.BlockHeader) []chainhash.Hash {
	out := make([]chainhash.Hash, len(hs))
	for i := range hs {
		out[i] = hs[i].BlockHash()
	}
	return out
}

// isPath checks that c (and st, if not nil) holds exactly path.
func isPath(t *testing.T, c *Chain, st *memStore, path []wire.BlockHeader) {
	t.Helper()
	tip := int32(len(path) - 1)
	if h, hash := c.Tip(); h != tip || hash != path[tip].BlockHash() {
		t.Fatalf("tip %d %v, want %d %v", h, hash, tip, path[tip].BlockHash())
	}
	got, err := c.Hashes(0, tip)
	if err != nil || !slices.Equal(got, hashesOf(path)) {
		t.Fatalf("the chain's hashes are not the path's (%v)", err)
	}
	if st == nil {
		return
	}
	stored, err := st.ReadHeaders(0, st.Height())
	if err != nil || !slices.Equal(hashesOf(stored), hashesOf(path)) {
		t.Fatalf("the store's headers are not the path's (%v)", err)
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestBranchInPages: a branch longer than one headers message is received
// a message at a time and adopted once, and only if, the whole of it has
// more work than the chain above the fork; Extend of its first message
// alone turns it away without claiming it has less work in all.
func TestBranchInPages(t *testing.T) {
	params := &chaincfg.RegressionNetParams // every block the same work
	tests := []struct {
		name         string
		chain, fork  int // the chain's tip and the fork's height
		branch       int // headers above the fork
		wantAdoption bool
	}{
		{"2,500 headers against 2,400", 3000, 600, 2500, true},
		{"5,000 headers against 4,900", 6000, 1100, 5000, true},
		{"2,500 headers against 2,500", 3000, 500, 2500, false},
		{"5,000 headers against 5,100", 6000, 900, 5000, false},
	}
	for _, tt := range tests {
		main := minePath(t, params, []wire.BlockHeader{params.GenesisBlock.Header}, tt.chain, time.Minute)
		alt := minePath(t, params, main[:tt.fork+1], tt.branch, 2*time.Minute)
		msgs := pages(alt[tt.fork+1:], wire.MaxBlockHeadersPerMsg)
		for _, kind := range chainKinds {
			t.Run(tt.name+"/"+kind.name, func(t *testing.T) {
				c, st := kind.make(t, params, main)
				if st != nil && tt.chain-tt.fork > 2*WindowHeaders && int32(tt.fork) >= c.base {
					t.Fatalf("the fork at %d is not below the window from %d", tt.fork, c.base)
				}
				// One message alone has less work: Extend says so of
				// the headers it was given.
				up, err := c.Extend(msgs[0])
				if !errors.Is(err, ErrLessWork) || !strings.Contains(err.Error(), "so far") || up.Reorganized() || up.Connected != 0 {
					t.Fatalf("Extend of the first message: %+v, %v", up, err)
				}
				isPath(t, c, st, main)
				b, err := c.NewBranch(msgs[0])
				if err != nil {
					t.Fatal(err)
				}
				if b.Fork() != int32(tt.fork) {
					t.Fatalf("fork %d, want %d", b.Fork(), tt.fork)
				}
				for i, msg := range msgs[1:] {
					h, hash := b.Tip()
					if want := tt.fork + (i+1)*wire.MaxBlockHeadersPerMsg; h != int32(want) || hash != alt[want].BlockHash() {
						t.Fatalf("branch tip %d, want %d", h, want)
					}
					if loc := b.Locator(); *loc[0] != hash {
						t.Fatal("the branch's locator does not start at its tip")
					}
					// Not yet: the chain is unchanged and the branch
					// goes on.
					if b.MoreWork() {
						t.Fatalf("more work after %d messages", i+1)
					}
					if _, err := c.Adopt(b); !errors.Is(err, ErrLessWork) {
						t.Fatalf("Adopt after %d messages: %v", i+1, err)
					}
					isPath(t, c, st, main)
					if err := b.Add(msg); err != nil {
						t.Fatalf("message %d: %v", i+2, err)
					}
				}
				if b.MoreWork() != tt.wantAdoption {
					t.Fatalf("MoreWork %v with the whole branch", !tt.wantAdoption)
				}
				up, err = c.Adopt(b)
				if !tt.wantAdoption {
					if !errors.Is(err, ErrLessWork) || up.Reorganized() || up.Fork != int32(tt.chain) {
						t.Fatalf("Adopt: %+v, %v", up, err)
					}
					isPath(t, c, st, main)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if up.Fork != int32(tt.fork) || up.Connected != tt.branch || !slices.Equal(up.Disconnected, hashesOf(main[tt.fork+1:])) {
					t.Fatalf("update: fork %d, %d connected, %d disconnected", up.Fork, up.Connected, len(up.Disconnected))
				}
				isPath(t, c, st, alt)
				if _, ok := c.HeightOf(main[tt.fork+1].BlockHash()); ok {
					t.Fatal("a disconnected block is still found")
				}
				if h, ok := c.HeightOf(alt[tt.fork+1].BlockHash()); !ok || h != int32(tt.fork+1) {
					t.Fatalf("HeightOf(the branch's first block) = %d, %v", h, ok)
				}
				if st != nil && len(c.headers) > 2*WindowHeaders {
					t.Fatalf("%d headers in memory", len(c.headers))
				}
				// The branch is spent.
				if _, err := c.Adopt(b); err == nil || b.Add(nil) == nil || b.MoreWork() {
					t.Fatalf("a branch adopted twice: %v", err)
				}
				if h, hash := b.Tip(); h != int32(len(alt)-1) || hash != alt[h].BlockHash() {
					t.Fatal("the adopted branch's tip changed")
				}
			})
		}
	}
}

// TestBranchRefused: branches that break a rule, fork too low, grow too
// long, do not connect, or lose their fork leave the chain (and a branch
// its headers) as they were.
func TestBranchRefused(t *testing.T) {
	params := chaincfg.RegressionNetParams
	main := minePath(t, &params, []wire.BlockHeader{params.GenesisBlock.Header}, 300, time.Minute)
	const fork = 200
	alt := minePath(t, &params, main[:fork+1], 250, 2*time.Minute)
	msgs := pages(alt[fork+1:], 100)
	tests := []struct {
		name    string
		params  *chaincfg.Params
		run     func(t *testing.T, c *Chain) error
		wantErr error
	}{
		{"bad header in the second message", &params, func(t *testing.T, c *Chain) error {
			b := mustBranch(t, c, msgs[0])
			bad := slices.Clone(msgs[1])
			spoilt := *bad[50]
			setNonce(&spoilt, false)
			bad[50] = &spoilt
			err := b.Add(bad)
			// The branch is as it was: the good message still fits.
			if h, _ := b.Tip(); h != fork+100 {
				t.Errorf("branch tip %d after a bad message", h)
			}
			if aerr := b.Add(msgs[1]); aerr != nil {
				t.Errorf("the good second message after the bad one: %v", aerr)
			}
			return err
		}, ErrBadHeader},
		{"second message not continuing the tip", &params, func(t *testing.T, c *Chain) error {
			return mustBranch(t, c, msgs[0]).Add(msgs[1][1:])
		}, ErrNotConnected},
		{"first message not connecting", &params, func(t *testing.T, c *Chain) error {
			_, err := c.NewBranch(msgs[1][1:])
			return err
		}, ErrNotConnected},
		{"no headers", &params, func(t *testing.T, c *Chain) error {
			_, err := c.NewBranch(nil)
			return err
		}, ErrNotConnected},
		{"fork below a checkpoint", withCheckpoint(params, fork+1, main), func(t *testing.T, c *Chain) error {
			_, err := c.NewBranch(msgs[0])
			return err
		}, ErrBelowCheckpoint},
		{"checkpoint passed before Adopt", withCheckpoint(params, 301, minePath(t, &params, main, 1, time.Minute)), func(t *testing.T, c *Chain) error {
			// The branch stays below the checkpoint, which the
			// chain then passes.
			b := mustBranch(t, c, msgs[0])
			next := mine(t, c, params.PowLimitBits, time.Minute)
			if err := extend(c, []*wire.BlockHeader{next}); err != nil {
				t.Fatal(err)
			}
			if c.lastCheckpointHeight() != 301 {
				t.Fatal("the chain did not pass the checkpoint")
			}
			_, err := c.Adopt(b)
			return err
		}, ErrBelowCheckpoint},
		{"too long at once", &params, func(t *testing.T, c *Chain) error {
			_, err := c.NewBranch(junk(main[fork].BlockHash(), MaxBranchHeaders+1))
			return err
		}, ErrBranchTooLong},
		{"too long in two", &params, func(t *testing.T, c *Chain) error {
			b := mustBranch(t, c, msgs[0])
			tip := alt[fork+100].BlockHash()
			// One more than the bound: refused before any check.
			err := b.Add(junk(tip, MaxBranchHeaders-100+1))
			// Exactly the bound: checked, and the junk refused.
			if aerr := b.Add(junk(tip, MaxBranchHeaders-100)); !errors.Is(aerr, ErrBadHeader) {
				t.Errorf("a message up to the bound: %v, want ErrBadHeader", aerr)
			}
			return err
		}, ErrBranchTooLong},
		{"fork left the chain", &params, func(t *testing.T, c *Chain) error {
			b := mustBranch(t, c, msgs[0])
			// Another branch, forking lower, wins meanwhile.
			other := minePath(t, &params, main[:fork-10+1], 300, 3*time.Minute)
			if err := extend(c, ptrs(other[fork-10+1:])); err != nil {
				t.Fatal(err)
			}
			if err := b.Add(msgs[1]); err != nil {
				t.Fatal(err)
			}
			if b.MoreWork() {
				t.Error("MoreWork of a branch whose fork left the chain")
			}
			_, err := c.Adopt(b)
			if c.Hash(c.Height()) != other[len(other)-1].BlockHash() {
				t.Error("the winning branch was replaced")
			}
			return err
		}, ErrNotConnected},
		{"chain grew past the branch", &params, func(t *testing.T, c *Chain) error {
			b := mustBranch(t, c, msgs[0])
			for _, m := range msgs[1:] {
				if err := b.Add(m); err != nil {
					t.Fatal(err)
				}
			}
			if !b.MoreWork() {
				t.Fatal("the whole branch has no more work")
			}
			grow(t, c, 200, time.Minute)
			if b.MoreWork() {
				t.Error("MoreWork against the chain as it was")
			}
			_, err := c.Adopt(b)
			return err
		}, ErrLessWork},
		{"branch of another chain", &params, func(t *testing.T, c *Chain) error {
			other, err := Load(&params, slices.Clone(main))
			if err != nil {
				t.Fatal(err)
			}
			b := mustBranch(t, other, msgs[0])
			for _, m := range msgs[1:] {
				if err := b.Add(m); err != nil {
					t.Fatal(err)
				}
			}
			_, err = c.Adopt(b)
			return err
		}, nil},
	}
	for _, tt := range tests {
		for _, kind := range chainKinds {
			t.Run(tt.name+"/"+kind.name, func(t *testing.T) {
				c, st := kind.make(t, tt.params, main)
				tip, hash := c.Tip()
				stored := int32(-1)
				if st != nil {
					stored = st.Height()
				}
				err := tt.run(t, c)
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				// The test may have changed the chain itself, but
				// never to the refused branch.
				if h, ok := c.HeightOf(alt[fork+1].BlockHash()); ok {
					t.Fatalf("the refused branch is in the chain at %d", h)
				}
				if h, hh := c.Tip(); h == tip && hh != hash {
					t.Fatal("the tip changed")
				}
				if st != nil && st.Height() < stored {
					t.Fatalf("the store was cut to %d", st.Height())
				}
			})
		}
	}
}

// mustBranch starts a branch of c with msg.
func mustBranch(t *testing.T, c *Chain, msg []*wire.BlockHeader) *Branch {
	t.Helper()
	b, err := c.NewBranch(msg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withCheckpoint returns params with a checkpoint at height of path.
func withCheckpoint(params chaincfg.Params, height int32, path []wire.BlockHeader) *chaincfg.Params {
	params.Checkpoints = []chaincfg.Checkpoint{{Height: height, Hash: ptr(path[height].BlockHash())}}
	return &params
}

// junk returns n headers, the first with parent prev, none of them valid.
func junk(prev chainhash.Hash, n int) []*wire.BlockHeader {
	h := &wire.BlockHeader{PrevBlock: prev}
	out := make([]*wire.BlockHeader, n)
	for i := range out {
		out[i] = h
	}
	return out
}

// TestBranchDifficultyAcrossMessages: the difficulty rules read a header's
// ancestors from the message before it and from the chain below the fork
// exactly as they do in one message: a branch with retargets and
// minimum-difficulty blocks, in messages of 7 headers (cut at every
// offset of a 10-block period), is adopted, and a first header of a
// message with the other bits is refused.
func TestBranchDifficultyAcrossMessages(t *testing.T) {
	networks := map[string]*chaincfg.Params{
		"testnet3 rules": easyParams(&chaincfg.TestNet3Params),
		"testnet4 rules": easyParams(&TestNet4Params),
		"mainnet rules":  easyParams(&chaincfg.MainNetParams),
	}
	const fork, size = 33, 7
	for name, params := range networks {
		rng := rand.New(rand.NewPCG(3, uint64(len(name))))
		main := build(t, params, steps(60, fast)).headers
		scratch, err := Load(params, slices.Clone(main[:fork+1]))
		if err != nil {
			t.Fatal(err)
		}
		var others []*wire.BlockHeader // each header with other bits
		for range 100 {
			gap := []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 21 * time.Minute}[rng.IntN(5)]
			ts := scratch.Header(scratch.Height()).Timestamp.Add(gap)
			want := scratch.requiredBits(scratch.Height()+1, ts)
			// The limit, or the bits before a run of blocks at the
			// limit, or else a harder target.
			other := params.PowLimitBits
			if want == other {
				other = scratch.lastNormalBits(scratch.Height())
			}
			if want == other {
				other = scaledBits(want, 1, 2)
			}
			others = append(others, mine(t, scratch, other, gap))
			if err := extend(scratch, []*wire.BlockHeader{mine(t, scratch, want, gap)}); err != nil {
				t.Fatal(err)
			}
		}
		branch := scratch.headers
		msgs := pages(branch[fork+1:], size)
		for _, kind := range chainKinds {
			t.Run(name+"/"+kind.name, func(t *testing.T) {
				c, st := kind.make(t, params, main)
				b := mustBranch(t, c, msgs[0])
				for i, msg := range msgs[1:] {
					alt := others[(i+1)*size]
					bad := append([]*wire.BlockHeader{alt}, msg[1:]...)
					if err := b.Add(bad); !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "network rules require") {
						t.Fatalf("message %d with bits %08x first: %v", i+2, alt.Bits, err)
					}
					if err := b.Add(msg); err != nil {
						t.Fatalf("message %d: %v", i+2, err)
					}
				}
				if _, err := c.Adopt(b); err != nil {
					t.Fatal(err)
				}
				isPath(t, c, st, branch)
			})
		}
		// The branch must cross retargets and minimum-difficulty
		// blocks.
		limits, distinct := 0, map[uint32]bool{}
		for _, h := range branch[fork+1:] {
			distinct[h.Bits] = true
			if h.Bits == params.PowLimitBits {
				limits++
			}
		}
		if len(distinct) < 3 || (params.ReduceMinDifficulty && limits == 0) {
			t.Fatalf("%s: %d difficulties, %d blocks at the limit", name, len(distinct), limits)
		}
		t.Logf("%s: %d difficulties, %d blocks at the limit", name, len(distinct), limits)
	}
}

// TestLocatorAt: locators from any height, and a branch's, step back as
// getheaders expects.
func TestLocatorAt(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	main := minePath(t, params, []wire.BlockHeader{params.GenesisBlock.Header}, 100, time.Minute)
	c, err := Load(params, slices.Clone(main))
	if err != nil {
		t.Fatal(err)
	}
	dense := func(from, to int32) []int32 {
		var hs []int32
		for h := from; h >= to; h-- {
			hs = append(hs, h)
		}
		return hs
	}
	tests := []struct {
		height int32
		want   []int32
	}{
		{100, append(dense(100, 91), 89, 85, 77, 61, 29, 0)},
		{150, append(dense(100, 91), 89, 85, 77, 61, 29, 0)},
		{50, append(dense(50, 41), 39, 35, 27, 11, 0)},
		{10, dense(10, 0)},
		{11, append(dense(11, 2), 0)},
		{5, dense(5, 0)},
		{0, []int32{0}},
		{-3, []int32{0}},
	}
	for _, tt := range tests {
		var want []chainhash.Hash
		for _, h := range tt.want {
			want = append(want, main[h].BlockHash())
		}
		if got := derefHashes(c.LocatorAt(tt.height)); !slices.Equal(got, want) {
			t.Errorf("LocatorAt(%d): %d hashes, want those of %v", tt.height, len(got), tt.want)
		}
	}
	if !slices.Equal(derefHashes(c.Locator()), derefHashes(c.LocatorAt(100))) {
		t.Error("Locator is not LocatorAt the tip")
	}
	// A branch of 25 forking at 60: its own hashes above the fork, the
	// chain's below.
	alt := minePath(t, params, main[:61], 25, 2*time.Minute)
	b := mustBranch(t, c, ptrs(alt[61:]))
	var want []chainhash.Hash
	for _, h := range append(dense(85, 76), 74, 70, 62, 46, 14, 0) {
		want = append(want, alt[h].BlockHash())
	}
	if got := derefHashes(b.Locator()); !slices.Equal(got, want) {
		t.Errorf("branch locator: %d hashes, not the branch's", len(got))
	}
}

func derefHashes(hs []*chainhash.Hash) []chainhash.Hash {
	out := make([]chainhash.Hash, len(hs))
	for i, h := range hs {
		out[i] = *h
	}
	return out
}
