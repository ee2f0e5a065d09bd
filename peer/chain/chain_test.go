package chain

import (
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// retargetParams is a network with mainnet's difficulty rules, a retarget
// every 10 blocks and regtest's easy limit, so headers can be mined here.
func retargetParams() *chaincfg.Params {
	p := chaincfg.RegressionNetParams
	p.PoWNoRetargeting = false
	p.ReduceMinDifficulty = false
	p.TargetTimePerBlock = time.Minute
	p.TargetTimespan = 10 * time.Minute
	p.RetargetAdjustmentFactor = 4
	p.Checkpoints = nil
	// Start below the limit so the target can move both ways.
	p.GenesisBlock = &wire.MsgBlock{Header: chaincfg.RegressionNetParams.GenesisBlock.Header}
	p.GenesisBlock.Header.Bits = 0x201fffff
	return &p
}

// mine returns a header on top of c's tip with the given bits and time
// offset from the parent, with a nonce meeting its target.
func mine(t testing.TB, c *Chain, bits uint32, after time.Duration) *wire.BlockHeader {
	t.Helper()
	prev := c.Header(c.Height())
	h := &wire.BlockHeader{
		Version:   4,
		PrevBlock: c.Hash(c.Height()),
		Timestamp: prev.Timestamp.Add(after),
		Bits:      bits,
	}
	target := blockchain.CompactToBig(bits)
	for {
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) <= 0 {
			return h
		}
		h.Nonce++
	}
}

func TestHeaderRules(t *testing.T) {
	params := retargetParams()
	base := params.GenesisBlock.Header.Bits
	newChain := func(t *testing.T, n int, spacing time.Duration) *Chain {
		c := New(params)
		for i := 0; i < n; i++ {
			if err := extend(c, []*wire.BlockHeader{mine(t, c, base, spacing)}); err != nil {
				t.Fatalf("block %d: %v", i+1, err)
			}
		}
		return c
	}
	scaled := func(num, den int64) uint32 {
		v := new(big.Int).Mul(blockchain.CompactToBig(base), big.NewInt(num))
		return blockchain.BigToCompact(v.Div(v, big.NewInt(den)))
	}
	tests := []struct {
		name    string
		blocks  int           // blocks before the tested header
		spacing time.Duration // between those blocks
		bits    uint32
		after   time.Duration
		wantErr string
	}{
		{"same bits between retargets", 5, time.Minute, base, time.Minute, ""},
		{"changed bits between retargets", 5, time.Minute, scaled(1, 2), time.Minute, "network rules require"},
		// As in Bitcoin, the timespan is measured from the block at
		// height-interval to the parent: 9 gaps for an interval of 10.
		{"retarget on schedule", 9, time.Minute, scaled(9, 10), time.Minute, ""},
		{"retarget measured over 10 gaps", 9, time.Minute, base, time.Minute, "network rules require"},
		{"retarget after fast blocks", 9, 30 * time.Second, scaled(9*30, 600), time.Minute, ""},
		{"retarget ignored", 9, 30 * time.Second, base, time.Minute, "network rules require"},
		// Ten times slower is clamped to four times.
		{"retarget clamped", 9, 10 * time.Minute, scaled(4, 1), time.Minute, ""},
		{"retarget clamped the other way", 9, time.Second, scaled(1, 4), time.Minute, ""},
		{"target above the limit", 5, time.Minute, 0x2100ffff, time.Minute, "outside the network's range"},
		{"timestamp not after median", 5, time.Minute, base, -10 * time.Minute, "median time past"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChain(t, tt.blocks, tt.spacing)
			h := mine(t, c, tt.bits, tt.after)
			err := extend(c, []*wire.BlockHeader{h})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Height() != int32(tt.blocks)+1 {
					t.Fatalf("height %d after extend", c.Height())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestHeaderProofOfWork(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	c := New(params)
	h := mine(t, c, params.PowLimitBits, time.Minute)
	// Find a nonce whose hash misses the target.
	target := blockchain.CompactToBig(h.Bits)
	for {
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) > 0 {
			break
		}
		h.Nonce++
	}
	if err := extend(c, []*wire.BlockHeader{h}); err == nil || !strings.Contains(err.Error(), "no proof of work") {
		t.Fatalf("header without proof of work: %v", err)
	}
}

// extend is Extend without the update, for tests that only check errors.
func extend(c *Chain, hs []*wire.BlockHeader) error {
	_, err := c.Extend(hs)
	return err
}

func ptr[T any](v T) *T { return &v }

// grow mines n headers on top of c and returns them.
func grow(t testing.TB, c *Chain, n int, spacing time.Duration) []*wire.BlockHeader {
	t.Helper()
	var hs []*wire.BlockHeader
	for i := 0; i < n; i++ {
		h := mine(t, c, c.Params().PowLimitBits, spacing)
		if err := extend(c, []*wire.BlockHeader{h}); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

func TestHeaderCheckpointsAndReorg(t *testing.T) {
	params := chaincfg.RegressionNetParams
	c := New(&params)
	hs := grow(t, c, 4, time.Minute)
	// A branch from height 2 with less work than heights 3 and 4 never
	// replaces them.
	fork := New(&params)
	if err := extend(fork, hs[:2]); err != nil {
		t.Fatal(err)
	}
	alt := grow(t, fork, 3, 2*time.Minute)
	up, err := c.Extend(alt[:1])
	if !errors.Is(err, ErrLessWork) || up.Reorganized() || c.Height() != 4 || c.Hash(4) != hs[3].BlockHash() {
		t.Fatalf("1-header branch against 2 headers: %v, %+v, height %d", err, up, c.Height())
	}
	if _, err := c.Extend(alt[:2]); !errors.Is(err, ErrLessWork) {
		t.Fatalf("equal-work branch: %v, want ErrLessWork (first seen wins)", err)
	}
	// With more work it does, and says what left.
	up, err = c.Extend(alt)
	if err != nil {
		t.Fatal(err)
	}
	if c.Height() != 5 || c.Hash(5) != alt[2].BlockHash() || up.Fork != 2 || up.Connected != 3 ||
		!slices.Equal(up.Disconnected, []chainhash.Hash{hs[2].BlockHash(), hs[3].BlockHash()}) {
		t.Fatalf("after the branch: height %d, update %+v", c.Height(), up)
	}
	if _, ok := c.HeightOf(hs[3].BlockHash()); ok {
		t.Fatal("a replaced header is still indexed")
	}
	// Headers the chain already has change nothing.
	if up, err := c.Extend(append(hs[:2:2], alt...)); err != nil || up.Reorganized() || up.Connected != 0 || c.Height() != 5 {
		t.Fatalf("known headers again: %v, %+v", err, up)
	}
	// A header not connecting to anything.
	orphan := *alt[0]
	orphan.PrevBlock = chainhash.Hash{1}
	if err := extend(c, []*wire.BlockHeader{&orphan}); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("orphan header: %v", err)
	}
	// A checkpoint the chain does not meet.
	params.Checkpoints = []chaincfg.Checkpoint{{Height: 1, Hash: &chainhash.Hash{2}}}
	c2 := New(&params)
	if err := extend(c2, hs[:1]); !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("checkpoint mismatch: %v", err)
	}
	// No branch may fork below a checkpoint the chain holds, whatever its
	// work.
	params.Checkpoints = []chaincfg.Checkpoint{{Height: 3, Hash: ptr(hs[2].BlockHash())}}
	c3 := New(&params)
	if err := extend(c3, hs); err != nil {
		t.Fatalf("matching checkpoint: %v", err)
	}
	if _, err := c3.Extend(alt); !errors.Is(err, ErrBelowCheckpoint) || c3.Height() != 4 {
		t.Fatalf("branch below the checkpoint: %v, height %d", err, c3.Height())
	}
}

// TestBadBranchChangesNothing: a branch with more work that breaks a rule
// half-way leaves the chain as it was.
func TestBadBranchChangesNothing(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	c := New(params)
	hs := grow(t, c, 3, time.Minute)
	fork := New(params)
	if err := extend(fork, hs[:1]); err != nil {
		t.Fatal(err)
	}
	alt := grow(t, fork, 4, 2*time.Minute)
	bad := *alt[3]
	bad.Bits = 0x1d00ffff // no proof of work for that target
	_, err := c.Extend(append(alt[:3:3], &bad))
	if !errors.Is(err, ErrBadHeader) || c.Height() != 3 || c.Hash(3) != hs[2].BlockHash() {
		t.Fatalf("bad branch: %v, height %d", err, c.Height())
	}
	if h, ok := c.HeightOf(hs[2].BlockHash()); !ok || h != 3 {
		t.Fatal("the chain's own headers were lost from the index")
	}
}

func TestFutureTimestamp(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	now := params.GenesisBlock.Header.Timestamp.Add(24 * time.Hour)
	c := New(params)
	c.Now = func() time.Time { return now }
	ok := mine(t, c, params.PowLimitBits, 24*time.Hour+MaxFutureDrift)
	if err := extend(c, []*wire.BlockHeader{ok}); err != nil {
		t.Fatalf("header exactly at the limit: %v", err)
	}
	late := mine(t, c, params.PowLimitBits, time.Second)
	if err := extend(c, []*wire.BlockHeader{late}); !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "in the future") {
		t.Fatalf("header past the limit: %v", err)
	}
	// Far in the future with the real clock: 2300-01-01.
	c = New(params)
	h := mine(t, c, params.PowLimitBits, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC).Sub(params.GenesisBlock.Header.Timestamp))
	if err := extend(c, []*wire.BlockHeader{h}); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("header dated 2300: %v", err)
	}
}
