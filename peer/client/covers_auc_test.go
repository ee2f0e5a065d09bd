package client

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// pooledAUC is the AUC of the wallet's values against the covers'
// (aucOf), pooled over clients (a client's wallet[i] beside its
// covers[i]), with a 95% bootstrap interval that draws whole clients
// with replacement (draws times; a client's values are not independent
// of each other, its covers being drawn against its own wallet), from
// a fixed seed so that a run's interval is the same for the same values.
func pooledAUC(wallet, covers [][]float64, draws int) (auc, lo, hi float64) {
	p := pooled{wallet: wallet, covers: covers}
	return bootstrapClients(min(len(wallet), len(covers)), draws, p.auc)
}

// pooled are the values of clients, each client's wallet[i] beside its
// covers[i].
type pooled struct{ wallet, covers [][]float64 }

// auc is the AUC of the values of the clients picked, pooled (NaN where
// a side has none).
func (p pooled) auc(pick []int) float64 {
	var w, c []float64
	for _, i := range pick {
		w, c = append(w, p.wallet[i]...), append(c, p.covers[i]...)
	}
	if len(w) == 0 || len(c) == 0 {
		return math.NaN()
	}
	return aucRanked(w, c)
}

// bootstrapClients is of over all n clients, with the 95% interval of
// draws draws of n clients with replacement, from a fixed seed (NaN
// values are left out; none at all gives a half and [0, 1]).
func bootstrapClients(n, draws int, of func(pick []int) float64) (v, lo, hi float64) {
	every := make([]int, n)
	for i := range every {
		every[i] = i
	}
	v = of(every)
	if math.IsNaN(v) {
		return 0.5, 0, 1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var got []float64
	pick := make([]int, n)
	for range draws {
		for i := range pick {
			pick[i] = rng.IntN(n)
		}
		if x := of(pick); !math.IsNaN(x) {
			got = append(got, x)
		}
	}
	if len(got) == 0 {
		return v, 0, 1
	}
	slices.Sort(got)
	return v, got[len(got)*25/1000], got[min(len(got)*975/1000, len(got)-1)]
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
	// Each class's covers the sizes of its wallet's, in other shares of
	// the classes: the pooled AUC tells them apart, the classed one not.
	var mixW, mixC [][]sized
	var flatW, flatC [][]float64
	for range 16 {
		w := []sized{{2, 4}, {2, 4}, {2, 4}, {3, 5}, {3, 5}}
		c := []sized{{2, 4}, {3, 5}, {3, 5}, {3, 5}, {3, 5}}
		mixW, mixC = append(mixW, w), append(mixC, c)
		flatW, flatC = append(flatW, sizesOf(w)), append(flatC, sizesOf(c))
	}
	if a, lo, hi := classedAUC(mixW, mixC, 500); a != 0.5 || lo != 0.5 || hi != 0.5 {
		t.Errorf("each class's sizes alike: classed AUC %.3f [%.3f, %.3f], want 0.5", a, lo, hi)
	}
	if a, _, hi := pooledAUC(flatW, flatC, 500); hi >= 0.5 {
		t.Errorf("each class's sizes alike, the classes' shares not: pooled AUC %.3f, interval up to %.3f, want below a half", a, hi)
	}
	if a, lo, hi := reweightedAUC(mixW, mixC, 500); math.Abs(a-0.5) > 1e-6 || lo > 0.5+1e-6 || hi < 0.5-1e-6 {
		t.Errorf("each class's sizes alike, the covers weighed to the wallet's classes: AUC %.3f [%.3f, %.3f], want 0.5", a, lo, hi)
	}
	if a, _, _ := reweightedAUC(apartSized(apartW), apartSized(apartC), 500); a != 0 {
		t.Errorf("covers all above, weighed to the wallet's classes: AUC %.3f, want 0", a)
	}
}

// bootstrapDraws is how many draws of clients pooledAUC's interval
// rests on in the covers' tests.
const bootstrapDraws = 2000

// sized is a watched script's group size beside its group's class (the
// most appearances of a watched script of its group, its own where it
// is alone), which the attack reads as well.
type sized struct {
	class int
	size  float64
}

// groupsByClass are the group sizes of the watched scripts of l's
// collusion, each with its group's class.
func groupsByClass(l *leak.Leak) []sized {
	most := map[int]uint64{}
	for _, s := range l.Collusion.Scripts {
		if s.Group != nil {
			most[*s.Group] = max(most[*s.Group], s.Appearances)
		}
	}
	var out []sized
	for _, s := range l.Collusion.Scripts {
		k := s.Appearances
		if s.Group != nil {
			k = most[*s.Group]
		}
		out = append(out, sized{class: int(k), size: float64(s.GroupSize)})
	}
	return out
}

// classedAUC is the AUC of the wallet's group sizes against the covers'
// over the pairs of one class only (the chance that a wallet's script's
// group is larger than a cover's of its class, ties half), pooled over
// clients, with pooledAUC's interval: the attack reads the appearances
// of a group's scripts beside its size, and a class's covers are as many as its
// need (leak.Need) asks, not in the wallet's shares of the classes, so
// that the AUC of sizes alone pooled over every class weighs the
// classes' mix as well as the sizes within each.
func classedAUC(wallet, covers [][]sized, draws int) (auc, lo, hi float64) {
	p := classed{wallet: wallet, covers: covers}
	return bootstrapClients(min(len(wallet), len(covers)), draws, p.auc)
}

// classed are the group sizes of clients, each client's wallet[i]
// beside its covers[i].
type classed struct{ wallet, covers [][]sized }

// auc is the AUC over the pairs of one class of the clients picked (NaN
// where there is none).
func (p classed) auc(pick []int) float64 {
	sum, n := 0.0, 0.0
	for _, i := range pick {
		for _, w := range p.wallet[i] {
			for _, c := range p.covers[i] {
				if w.class != c.class {
					continue
				}
				n++
				switch {
				case w.size > c.size:
					sum++
				case w.size == c.size:
					sum += 0.5
				}
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / n
}

// reweightedAUC is the AUC of the wallet's group sizes against the
// covers' over every pair, pooled over clients, each cover weighed so
// that the covers' classes take the wallet's shares of the scripts
// (a class the wallet has none of weighs nothing), with pooledAUC's
// interval: what the pooled AUC would be were the covers as many in
// each class as the wallet's scripts.
func reweightedAUC(wallet, covers [][]sized, draws int) (auc, lo, hi float64) {
	p := classed{wallet: wallet, covers: covers}
	return bootstrapClients(min(len(wallet), len(covers)), draws, p.reweighted)
}

// reweighted is reweightedAUC of the clients picked (NaN where a side
// weighs nothing).
func (p classed) reweighted(pick []int) float64 {
	wk, ck := map[int]float64{}, map[int]float64{}
	nw, nc := 0.0, 0.0
	for _, i := range pick {
		for _, w := range p.wallet[i] {
			wk[w.class]++
			nw++
		}
		for _, c := range p.covers[i] {
			ck[c.class]++
			nc++
		}
	}
	sum, n := 0.0, 0.0
	for _, i := range pick {
		for _, c := range p.covers[i] {
			weight := (wk[c.class] / nw) / (ck[c.class] / nc)
			for _, w := range p.wallet[i] {
				n += weight
				switch {
				case w.size > c.size:
					sum += weight
				case w.size == c.size:
					sum += weight / 2
				}
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / n
}

// classHistograms says, per class, how many of each side's scripts
// lie in groups of each size, pooled over clients.
func classHistograms(wallet, covers [][]sized) string {
	type key struct {
		class int
		size  float64
	}
	count := func(all [][]sized) map[key]int {
		out := map[key]int{}
		for _, xs := range all {
			for _, x := range xs {
				out[key{x.class, x.size}]++
			}
		}
		return out
	}
	w, c := count(wallet), count(covers)
	keys := slices.Collect(maps.Keys(w))
	for k := range c {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.class != b.class {
			return a.class - b.class
		}
		return int(a.size - b.size)
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, " %d/%g: %d/%d;", k.class, k.size, w[k], c[k])
	}
	return sb.String()
}

// sizesOf are the sizes of xs.
func sizesOf(xs []sized) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x.size
	}
	return out
}

// apartSized are the values of clients as sizes of one class.
func apartSized(vs [][]float64) [][]sized {
	out := make([][]sized, len(vs))
	for i, xs := range vs {
		for _, x := range xs {
			out[i] = append(out[i], sized{class: 2, size: x})
		}
	}
	return out
}
