package peertest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDrawShape: MainnetShapes' weights sum to one, payment with change
// (one input, two outputs) the most common; shapes drawn follow the
// weights (each share within 0.02 of its weight in 20,000 draws, about
// six standard errors); a single shape is always drawn.
func TestDrawShape(t *testing.T) {
	total, top := 0.0, MainnetShapes[0]
	for _, s := range MainnetShapes {
		total += s.Weight
		if s.Weight > top.Weight {
			top = s
		}
		if s.Inputs < 1 || s.Outputs < 1 {
			t.Errorf("shape %+v spends or pays nothing", s)
		}
	}
	if math.Abs(total-1) > 1e-9 || top.Inputs != 1 || top.Outputs != 2 {
		t.Errorf("weights sum to %g, most common %+v; want 1 and one input, two outputs", total, top)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	got := map[TxShape]int{}
	for range n {
		got[DrawShape(rng, MainnetShapes)]++
	}
	for _, s := range MainnetShapes {
		if share := float64(got[s]) / n; math.Abs(share-s.Weight) > 0.02 {
			t.Errorf("shape %d in, %d out drawn %.3f of the time, weight %g", s.Inputs, s.Outputs, share, s.Weight)
		}
	}
	one := []TxShape{{Inputs: 2, Outputs: 3, Weight: 0.1}}
	for range 10 {
		if s := DrawShape(rng, one); s != one[0] {
			t.Fatalf("drew %+v of a single shape %+v", s, one[0])
		}
	}
}
