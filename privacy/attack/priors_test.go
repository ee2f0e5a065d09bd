package attack

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// sessionsCapture is n sessions, each of its own wallet of 1 to 300
// hashes behind a filter of 2 to 200 chance matches, over a universe of
// the wallets and random hashes, random of them in all.
func sessionsCapture(seed uint64, n, random int) ([][]*bip37.Filter, []byte) {
	rng := rand.New(rand.NewPCG(seed, seed^0xf17))
	var b bytes.Buffer
	var groups [][]*bip37.Filter
	for range n {
		size := int(logUniform(rng, 1, 300))
		f := bip37.NewFilter(uint32(size), logUniform(rng, 2, 200)/float64(random), rng.Uint32(), 0)
		for range size {
			e := randomElem(rng, 20)
			f.Add(e)
			b.WriteString(hex.EncodeToString(e) + "\n")
		}
		groups = append(groups, []*bip37.Filter{f})
	}
	for range random {
		b.WriteString(hex.EncodeToString(randomElem(rng, 20)) + "\n")
	}
	return groups, b.Bytes()
}

// TestPriorsFittedOnce holds Reports, Link and Intersect to one fit of
// the priors over every session until more is read: Link over every
// session weighs under the very prior Reports fitted (fitting it took
// as long as the rest of Reports on a thousand sessions; see
// BenchmarkFitSizes), a linked group's matches under it and the class
// shares, and Link first then Reports give what Reports then Link give.
// Link over some of the sessions fits its own.
func TestPriorsFittedOnce(t *testing.T) {
	groups, univ := sessionsCapture(3, 30, 20_000)
	acc, reps := accumulate(t, groups, univ, AnalyzeOptions{})
	if acc.fit == nil || acc.fit.sizes == nil || acc.fit.mix == nil {
		t.Fatalf("Reports kept no fit: %+v", acc.fit)
	}
	sizes := acc.fit.sizes
	u, err := acc.finished()
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, len(groups))
	for g := range all {
		all[g] = g
	}
	if lk := acc.newLinker(all, u); lk.prior != sizes {
		t.Errorf("Link over every session fitted the size prior again: %+v, Reports' %+v", lk.prior.public(), sizes.public())
	}
	if lk := acc.newLinker(all[:10], u); lk.prior == sizes {
		t.Errorf("Link over 10 of %d sessions took the prior of all", len(all))
	}
	r, err := acc.Intersect([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.sizes != sizes || r.mix != acc.fit.mix {
		t.Errorf("Intersect weighed under other priors than Reports")
	}
	l, err := acc.Link(nil, LinkOptions{})
	if err != nil {
		t.Fatal(err)
	}

	fresh, err := NewAccumulator(groups, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.ReadUniverse(bytes.NewReader(univ)); err != nil {
		t.Fatal(err)
	}
	lf, err := fresh.Link(nil, LinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lf.WalletSizes != l.WalletSizes {
		t.Errorf("Link before Reports: sizes %+v, after %+v", lf.WalletSizes, l.WalletSizes)
	}
	again, err := fresh.Reports()
	if err != nil {
		t.Fatal(err)
	}
	for g, r := range again {
		for i, m := range r.Matched {
			if w := reps[g].Matched[i]; m.Probability != w.Probability {
				t.Fatalf("session %d, line %d: P %v after Link, %v before", g, m.Line, m.Probability, w.Probability)
			}
		}
	}

	// More read is another fit.
	_, more := sessionsCapture(4, 0, 5_000)
	if err := acc.ReadUniverse(bytes.NewReader(more)); err != nil {
		t.Fatal(err)
	}
	if acc.fit != nil {
		t.Fatalf("the fit outlived a reading")
	}
	if _, err := acc.Reports(); err != nil {
		t.Fatal(err)
	}
	if acc.fit.sizes == sizes || acc.fit.sizes.public() == sizes.public() {
		t.Errorf("the prior was not fitted again over the counts read since: %+v", acc.fit.sizes.public())
	}
}

// BenchmarkFitSizes measures fitting the prior on wallet sizes over the
// reports of BenchmarkAnalyzeSessions's sessions (1,000 over 100,000
// lines, 10,000 over 10,000): what Link paid again, after Reports, before
// they shared one fit.
func BenchmarkFitSizes(b *testing.B) {
	w := model.NewWallet(8, 316)
	for _, n := range []int{1000, 10000} {
		groups := make([][]*bip37.Filter, n)
		for i := range groups {
			groups[i] = []*bip37.Filter{w.Filter(1e-5, 0, uint32(i)*0x9e3779b9)}
		}
		lines := min(max(100_000_000/n, 10_000), 1_000_000)
		acc, err := NewAccumulator(groups, AnalyzeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := acc.ReadUniverse(bytes.NewReader(benchUniverse(lines))); err != nil {
			b.Fatal(err)
		}
		reps, err := acc.Reports()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			for range b.N {
				fitSizes(reportSessions(reps, acc.set), uint64(lines))
			}
		})
	}
}
