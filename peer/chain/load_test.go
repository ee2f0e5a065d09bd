package chain

import (
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

func TestLoad(t *testing.T) {
	params := retargetParams()
	src := New(params)
	// Spacing that moves the difficulty at every retarget, so Load's
	// difficulty check has something to check.
	for i := 0; i < 35; i++ {
		h := mine(t, src, src.requiredBits(src.Height()+1, src.Header(src.Height()).Timestamp.Add(40*time.Second)), 40*time.Second)
		if err := extend(src, []*wire.BlockHeader{h}); err != nil {
			t.Fatalf("block %d: %v", i+1, err)
		}
	}
	all := make([]wire.BlockHeader, src.Height()+1)
	for h := range all {
		all[h] = src.Header(int32(h))
	}
	if all[10].Bits == all[9].Bits {
		t.Fatal("the test chain never retargets")
	}
	c, err := Load(params, all)
	if err != nil {
		t.Fatal(err)
	}
	if c.Height() != src.Height() || c.Hash(c.Height()) != src.Hash(src.Height()) {
		t.Fatalf("loaded tip %d %v, want %d %v", c.Height(), c.Hash(c.Height()), src.Height(), src.Hash(src.Height()))
	}
	if h, ok := c.HeightOf(src.Hash(17)); !ok || h != 17 {
		t.Fatalf("HeightOf(block 17) = %d, %v", h, ok)
	}
	// The loaded chain extends like the original.
	if err := extend(c, []*wire.BlockHeader{mine(t, c, c.requiredBits(c.Height()+1, c.Header(c.Height()).Timestamp.Add(time.Minute)), time.Minute)}); err != nil {
		t.Fatalf("extending the loaded chain: %v", err)
	}

	noPoW := func(h *wire.BlockHeader) { setNonce(h, false) }
	tests := []struct {
		name   string
		height int // the header spoilt
		spoil  func(h *wire.BlockHeader)
	}{
		{"broken link", 12, func(h *wire.BlockHeader) { h.PrevBlock[0] ^= 1 }},
		{"no proof of work", 20, noPoW},
		{"wrong difficulty", 10, func(h *wire.BlockHeader) { h.Bits = all[9].Bits; setNonce(h, true) }},
		{"target above the limit", 5, func(h *wire.BlockHeader) { h.Bits = 0x2100ffff }},
		{"last header", 35, noPoW},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := append([]wire.BlockHeader(nil), all...)
			tt.spoil(&hs[tt.height])
			c, err := Load(params, hs)
			if !errors.Is(err, ErrBadHeader) {
				t.Fatalf("error %v, want ErrBadHeader", err)
			}
			if c == nil || c.Height() != int32(tt.height-1) {
				t.Fatalf("chain %v, want the %d headers before the bad one", c, tt.height)
			}
		})
	}
	t.Run("wrong genesis", func(t *testing.T) {
		hs := append([]wire.BlockHeader(nil), all...)
		hs[0].Nonce++
		if c, err := Load(params, hs); c != nil || !errors.Is(err, ErrBadHeader) {
			t.Fatalf("Load = %v, %v; want nil and ErrBadHeader", c, err)
		}
	})
	t.Run("checkpoint", func(t *testing.T) {
		p := *params
		p.Checkpoints = []chaincfg.Checkpoint{{Height: 7, Hash: ptr(all[8].BlockHash())}}
		if c, err := Load(&p, all); !errors.Is(err, ErrBadHeader) || c.Height() != 6 {
			t.Fatalf("Load against a checkpoint it misses: height %d, %v", c.Height(), err)
		}
	})
}

// setNonce counts h's nonce up to the first whose hash meets h's target,
// or, with meets false, to the first whose hash misses it.
func setNonce(h *wire.BlockHeader, meets bool) {
	target := blockchain.CompactToBig(h.Bits)
	for {
		hash := h.BlockHash()
		if (blockchain.HashToBig(&hash).Cmp(target) <= 0) == meets {
			return
		}
		h.Nonce++
	}
}
