package client

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// classMix gathers, over clients, the class (appearances, at most
// leak.MaxProfileClass) and group size of each watched script and each
// cover as the colluding peers' attack sees them, to show where the
// covers' mixture over the classes differs from the wallet's: a pooled
// AUC of group size mixes the classes in the proportions each side has,
// so covers alike within every class are still told apart where their
// shares of the classes differ.
type classMix struct {
	wallet, covers map[int][]float64
	// sigs count, per side, the groups by their watched members'
	// classes and the group's size ("2,1/4": a member of two
	// appearances and one of one, in a group of four).
	sigs [2]map[string]int
}

// add takes in one client's leak of its wallet and of its covers.
func (m *classMix) add(wallet, covers *leak.Leak) {
	if m.wallet == nil {
		m.wallet, m.covers = map[int][]float64{}, map[int][]float64{}
	}
	for i, side := range []struct {
		l  *leak.Leak
		to map[int][]float64
	}{{wallet, m.wallet}, {covers, m.covers}} {
		if m.sigs[i] == nil {
			m.sigs[i] = map[string]int{}
		}
		groups := map[int][]int{}
		size := map[int]int{}
		alone := -1
		for _, s := range side.l.Collusion.Scripts {
			k := min(int(s.Appearances), leak.MaxProfileClass)
			side.to[k] = append(side.to[k], float64(s.GroupSize))
			g := alone
			if s.Group != nil {
				g = *s.Group
			} else {
				alone--
			}
			groups[g] = append(groups[g], k)
			size[g] = s.GroupSize
		}
		for g, ks := range groups {
			slices.Sort(ks)
			slices.Reverse(ks)
			m.sigs[i][fmt.Sprintf("%v/%d", ks, size[g])]++
		}
	}
}

// reweighted is the AUC of group size with each cover weighed by the
// wallet's share of its class over the covers' share: the pooled AUC
// the covers would give were their mixture the wallet's, each class's
// covers as they are.
func (m *classMix) reweighted() float64 {
	nw, nc := valuesIn(m.wallet), valuesIn(m.covers)
	sum, weight := 0.0, 0.0
	for k, cs := range m.covers {
		if len(m.wallet[k]) == 0 {
			continue
		}
		wgt := (float64(len(m.wallet[k])) / float64(nw)) / (float64(len(cs)) / float64(nc))
		for _, c := range cs {
			for _, ws := range m.wallet {
				for _, w := range ws {
					switch {
					case w > c:
						sum += wgt
					case w == c:
						sum += wgt / 2
					}
				}
			}
			weight += wgt * float64(nw)
		}
	}
	if weight == 0 {
		return 0.5
	}
	return sum / weight
}

// valuesIn is how many values vs holds over its classes.
func valuesIn(vs map[int][]float64) int {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	return n
}

// String is one line a class: each side's scripts and share, and the
// AUC of group size within the class.
func (m *classMix) String() string {
	nw, nc := valuesIn(m.wallet), valuesIn(m.covers)
	var b strings.Builder
	ks := slices.Sorted(maps.Keys(m.wallet))
	for k := range m.covers {
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	for _, k := range ks {
		w, c := m.wallet[k], m.covers[k]
		auc := "-"
		if len(w) > 0 && len(c) > 0 {
			auc = fmt.Sprintf("%.3f", aucRanked(w, c))
		}
		fmt.Fprintf(&b, "class %d: wallet %d (%.3f, mean group %.2f), covers %d (%.3f, mean group %.2f), group-size AUC within %s\n",
			k, len(w), float64(len(w))/float64(max(nw, 1)), mean(w), len(c), float64(len(c))/float64(max(nc, 1)), mean(c), auc)
	}
	return b.String()
}

// log logs the mixture and the reweighted AUC.
func (m *classMix) log(t *testing.T) {
	t.Helper()
	if m.wallet == nil {
		return
	}
	for i, side := range []string{"wallet", "covers"} {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(m.sigs[i])) {
			fmt.Fprintf(&b, " %s:%d", k, m.sigs[i][k])
		}
		t.Logf("%s groups (watched members' classes/size:count):%s", side, b.String())
	}
	t.Logf("classes (appearances, colluding):\n%sgroup-size AUC with the covers reweighed to the wallet's mixture: %.3f", m, m.reweighted())
}

// leakOfGroups is a leak whose colluding view holds one script of each
// class (appearances) and group size given, in pairs, each in a group
// of its own.
func leakOfGroups(classSize ...int) *leak.Leak {
	l := &leak.Leak{}
	for i := 0; i+1 < len(classSize); i += 2 {
		g := i/2 + 1
		l.Collusion.Scripts = append(l.Collusion.Scripts, leak.ScriptLeak{Appearances: uint64(classSize[i]), GroupSize: classSize[i+1], Group: &g})
	}
	return l
}

// TestClassMixReweighted: covers alike the wallet's within each class
// but mixed over the classes otherwise give a pooled AUC away from a
// half and a reweighted one of a half; covers apart within a class stay
// apart reweighted.
func TestClassMixReweighted(t *testing.T) {
	for _, tc := range []struct {
		name             string
		wallet, covers   []int // class, group size pairs
		pooledLo, pooled float64
		lo, hi           float64
	}{
		{"alike within, mixed otherwise",
			[]int{1, 4, 1, 4, 1, 4, 2, 6},
			[]int{1, 4, 2, 6, 2, 6, 2, 6},
			0, 0.3, 0.499, 0.501},
		{"apart within, mixed alike",
			[]int{1, 4, 2, 6},
			[]int{1, 5, 2, 7},
			0, 0.4, 0, 0.4},
		{"the wallet's own",
			[]int{1, 4, 2, 6, 3, 5},
			[]int{1, 4, 2, 6, 3, 5},
			0.499, 0.501, 0.499, 0.501},
	} {
		var m classMix
		w, c := leakOfGroups(tc.wallet...), leakOfGroups(tc.covers...)
		m.add(w, c)
		var ws, cs []float64
		for _, s := range w.Collusion.Scripts {
			ws = append(ws, float64(s.GroupSize))
		}
		for _, s := range c.Collusion.Scripts {
			cs = append(cs, float64(s.GroupSize))
		}
		if p := aucRanked(ws, cs); p < tc.pooledLo || p > tc.pooled {
			t.Errorf("%s: pooled AUC %.3f, want within [%g, %g]", tc.name, p, tc.pooledLo, tc.pooled)
		}
		if r := m.reweighted(); r < tc.lo || r > tc.hi {
			t.Errorf("%s: reweighted AUC %.3f, want within [%g, %g]\n%s", tc.name, r, tc.lo, tc.hi, &m)
		}
	}
}
