package client

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// hashes returns n distinct block hashes, from seed on.
func hashes(seed uint64, n int) []chainhash.Hash {
	out := make([]chainhash.Hash, n)
	for i := range out {
		binary.LittleEndian.PutUint64(out[i][:], seed+uint64(i))
	}
	return out
}

// TestUnservedRefund: a charged block the peer later serves takes its
// decayed share off the score, once; a block never charged, or charged
// and refunded already, takes nothing off, so a liar's score is the
// count of its fakes whatever else it serves; the charges kept per host
// stay within maxCharged, the oldest forgotten (no longer refundable).
func TestUnservedRefund(t *testing.T) {
	const addr = "127.0.0.1:18444"
	t0 := time.Unix(1_700_000_000, 0)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	var u unservedScores
	raced, fakes := hashes(1, 10), hashes(100, 9)
	u.charge(addr, raced, t0)
	u.charge(addr, fakes, t0.Add(unservedHalfLife))
	// 10 raced blocks at half weight, 9 fakes at full.
	if got := u.at(addr, t0.Add(unservedHalfLife)); !near(got, 14) {
		t.Fatalf("score %v, want 14", got)
	}
	now := t0.Add(unservedHalfLife)
	if got := u.refund(addr, raced, now); !near(got, 9) {
		t.Errorf("the raced blocks served: score %v, want 9 (the fakes)", got)
	}
	if got := u.refund(addr, raced, now); !near(got, 9) {
		t.Errorf("the raced blocks served again: score %v, want 9 (refunded once)", got)
	}
	if got := u.refund(addr, hashes(1000, 20), now); !near(got, 9) {
		t.Errorf("20 blocks never charged served: score %v, want 9", got)
	}
	if got := len(u.kept(addr)); got != len(fakes) {
		t.Errorf("%d charges kept, want %d (the fakes)", got, len(fakes))
	}

	var many unservedScores
	all := hashes(1, 3*maxCharged)
	for i := range all {
		many.charge(addr, all[i:i+1], t0)
	}
	kept := many.kept(addr)
	if len(kept) != maxCharged || kept[0] != all[len(all)-maxCharged] {
		t.Errorf("%d charges kept (first %v), want the newest %d", len(kept), kept[0], maxCharged)
	}
	if got := many.refund(addr, all[:maxCharged], t0); !near(got, float64(len(all))) {
		t.Errorf("blocks no longer kept served: score %v, want %d", got, len(all))
	}
}
