package client

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pooledAUC is the AUC of the wallet's values against the covers'
// (aucOf), pooled over clients (a client's wallet[i] beside its
// covers[i]), with a 95% bootstrap interval that draws whole clients
// with replacement (draws times; a client's values are not independent
// of each other, its covers being drawn against its own wallet), from
// a fixed seed so that a run's interval is the same for the same values.
func pooledAUC(wallet, covers [][]float64, draws int) (auc, lo, hi float64) {
	all := func(pick []int) (w, c []float64) {
		for _, i := range pick {
			w, c = append(w, wallet[i]...), append(c, covers[i]...)
		}
		return w, c
	}
	n := min(len(wallet), len(covers))
	every := make([]int, n)
	for i := range every {
		every[i] = i
	}
	w, c := all(every)
	if len(w) == 0 || len(c) == 0 {
		return 0.5, 0, 1
	}
	auc = aucRanked(w, c)
	rng := rand.New(rand.NewPCG(1, 2))
	var got []float64
	pick := make([]int, n)
	for range draws {
		for i := range pick {
			pick[i] = rng.IntN(n)
		}
		if w, c := all(pick); len(w) > 0 && len(c) > 0 {
			got = append(got, aucRanked(w, c))
		}
	}
	if len(got) == 0 {
		return auc, 0, 1
	}
	slices.Sort(got)
	return auc, got[len(got)*25/1000], got[min(len(got)*975/1000, len(got)-1)]
}

// aucRanked is aucOf by ranks: the chance that a value of a is above
// one of b, ties half, in O((n+m) log(n+m)).
func aucRanked(a, b []float64) float64 {
	type v struct {
		x   float64
		inA bool
	}
	vs := make([]v, 0, len(a)+len(b))
	for _, x := range a {
		vs = append(vs, v{x: x, inA: true})
	}
	for _, x := range b {
		vs = append(vs, v{x: x})
	}
	slices.SortFunc(vs, func(p, q v) int {
		switch {
		case p.x < q.x:
			return -1
		case p.x > q.x:
			return 1
		}
		return 0
	})
	sum := 0.0
	for i := 0; i < len(vs); {
		j := i
		for j < len(vs) && vs[j].x == vs[i].x {
			j++
		}
		mid := float64(i+j+1) / 2 // the mean of ranks i+1..j
		for k := i; k < j; k++ {
			if vs[k].inA {
				sum += mid
			}
		}
		i = j
	}
	na, nb := float64(len(a)), float64(len(b))
	return (sum - na*(na+1)/2) / (na * nb)
}

// TestPooledAUC: the ranked AUC is aucOf's; clients drawn alike give an
// interval holding a half, clients whose covers all lie above their
// wallet's one far below it.
func TestPooledAUC(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		a, b := make([]float64, 1+rng.IntN(30)), make([]float64, 1+rng.IntN(30))
		for i := range a {
			a[i] = float64(rng.IntN(6))
		}
		for i := range b {
			b[i] = float64(rng.IntN(6))
		}
		if x, y := aucRanked(a, b), aucOf(a, b); x-y > 1e-9 || y-x > 1e-9 {
			t.Fatalf("ranked AUC %.6f, aucOf %.6f for %v, %v", x, y, a, b)
		}
	}
	var alike, apartW, apartC [][]float64
	for range 16 {
		w, c := make([]float64, 20), make([]float64, 20)
		for i := range w {
			w[i], c[i] = float64(4+rng.IntN(2)), float64(4+rng.IntN(2))
		}
		alike = append(alike, w)
		apartW, apartC = append(apartW, w), append(apartC, slices.Repeat([]float64{6}, 20))
	}
	if a, lo, hi := pooledAUC(alike, alike[1:], 500); lo > 0.5 || hi < 0.5 || lo > a || hi < a {
		t.Errorf("clients drawn alike: AUC %.3f [%.3f, %.3f], want an interval holding a half", a, lo, hi)
	}
	if a, lo, hi := pooledAUC(apartW, apartC, 500); a != 0 || hi > 0.01 {
		t.Errorf("covers all above: AUC %.3f [%.3f, %.3f], want 0", a, lo, hi)
	}
}

// bootstrapDraws is how many draws of clients pooledAUC's interval
// rests on in the covers' tests.
const bootstrapDraws = 2000

// TestBestThreshold: the best one-threshold classifier on raw values and
// on the counts of an earlierTally (maxPerCount and more together).
func TestBestThreshold(t *testing.T) {
	tally := func(per map[int]int) earlierTally {
		var e earlierTally
		for k, v := range per {
			e.n += v
			e.countPer(k, v)
		}
		return e
	}
	for _, tc := range []struct {
		name string
		w, c []float64
		want float64
	}{
		{"alike", []float64{1, 2, 3}, []float64{3, 2, 1}, 0.5},
		{"apart", []float64{5, 6}, []float64{1, 2, 3}, 1},
		{"apart the other way", []float64{1, 2}, []float64{5, 6, 7}, 1},
		{"half the wallet's above", []float64{0, 0, 1, 1}, []float64{0, 0, 0, 0}, 0.75},
		{"ties at the threshold", []float64{1, 2, 2}, []float64{2, 0}, 0.75},
		{"tally: half above", tally(map[int]int{0: 2, 1: 2}).counts(), tally(map[int]int{0: 4}).counts(), 0.75},
		{"tally: 3 and more together", tally(map[int]int{3: 1, 7: 1}).counts(), tally(map[int]int{5: 2}).counts(), 0.5},
		{"tally: by count", tally(map[int]int{0: 1, 2: 3}).counts(), tally(map[int]int{0: 3, 1: 1}).counts(), 0.875},
	} {
		if got := bestThreshold(tc.w, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: bestThreshold(%v, %v) = %.4f, want %.4f", tc.name, tc.w, tc.c, got, tc.want)
		}
	}
	if got := bestThreshold(nil, []float64{1}); !math.IsNaN(got) {
		t.Errorf("no wallet values: %v, want NaN", got)
	}
}
