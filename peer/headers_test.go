package peer

import (
	"math/big"
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
func mine(t *testing.T, c *HeaderChain, bits uint32, after time.Duration) *wire.BlockHeader {
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
	newChain := func(t *testing.T, n int, spacing time.Duration) *HeaderChain {
		c := NewHeaderChain(params)
		for i := 0; i < n; i++ {
			if err := c.extend([]*wire.BlockHeader{mine(t, c, base, spacing)}); err != nil {
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
			err := c.extend([]*wire.BlockHeader{h})
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
	c := NewHeaderChain(params)
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
	if err := c.extend([]*wire.BlockHeader{h}); err == nil || !strings.Contains(err.Error(), "no proof of work") {
		t.Fatalf("header without proof of work: %v", err)
	}
}

func TestHeaderCheckpointsAndReorg(t *testing.T) {
	params := chaincfg.RegressionNetParams
	c := NewHeaderChain(&params)
	var hs []*wire.BlockHeader
	for i := 0; i < 4; i++ {
		h := mine(t, c, params.PowLimitBits, time.Minute)
		if err := c.extend([]*wire.BlockHeader{h}); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	// A branch from height 2 replaces heights 3 and 4.
	fork := NewHeaderChain(&params)
	if err := fork.extend(hs[:2]); err != nil {
		t.Fatal(err)
	}
	alt := mine(t, fork, params.PowLimitBits, 2*time.Minute)
	if err := c.extend([]*wire.BlockHeader{alt}); err != nil {
		t.Fatal(err)
	}
	if c.Height() != 3 || c.Hash(3) != alt.BlockHash() {
		t.Fatalf("after the branch: height %d", c.Height())
	}
	if _, ok := c.HeightOf(hs[3].BlockHash()); ok {
		t.Fatal("a replaced header is still indexed")
	}
	// A header not connecting to anything.
	orphan := *alt
	orphan.PrevBlock = chainhash.Hash{1}
	if err := c.extend([]*wire.BlockHeader{&orphan}); err == nil || !strings.Contains(err.Error(), "does not connect") {
		t.Fatalf("orphan header: %v", err)
	}
	// A checkpoint the chain does not meet.
	params.Checkpoints = []chaincfg.Checkpoint{{Height: 1, Hash: &chainhash.Hash{2}}}
	c2 := NewHeaderChain(&params)
	if err := c2.extend(hs[:1]); err == nil || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("checkpoint mismatch: %v", err)
	}
	params.Checkpoints = []chaincfg.Checkpoint{{Height: 1, Hash: ptr(hs[0].BlockHash())}}
	if err := NewHeaderChain(&params).extend(hs[:2]); err != nil {
		t.Fatalf("matching checkpoint: %v", err)
	}
}
