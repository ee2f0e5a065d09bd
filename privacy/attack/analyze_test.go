package attack

import (
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// testUniverse writes size random hash lines with the wallet's candidates
// spread among them, in the form given by walletLine, and returns the text
// and the line numbers of the wallet's candidates.
func testUniverse(rng *rand.Rand, size int, wallet []string) (string, map[int]bool) {
	var b strings.Builder
	at := map[int]bool{}
	pos := map[int]string{}
	for _, w := range wallet {
		i := rng.IntN(size)
		for pos[i] != "" {
			i = rng.IntN(size)
		}
		pos[i] = w
	}
	b.WriteString("# synthetic universe\n")
	var h [20]byte
	for i := 0; i < size; i++ {
		if w := pos[i]; w != "" {
			b.WriteString(w)
			at[i+2] = true
		} else {
			randomBytes(rng, h[:])
			b.WriteString(hex.EncodeToString(h[:]))
		}
		b.WriteByte('\n')
	}
	return b.String(), at
}

// bruteForce lists the lines matching every filter, one line at a time.
func bruteForce(t *testing.T, text string, filters []*bip37.Filter, pair bool) map[int]bool {
	out := map[int]bool{}
	_, err := universe.Read(strings.NewReader(text), func(line int, c *universe.Candidate) error {
		for _, f := range filters {
			ok := false
			if pair && c.Pair() {
				ok = f.Contains(c.Elems[0]) && f.Contains(c.Elems[1])
			} else {
				for _, e := range c.Elems {
					ok = ok || f.Contains(e)
				}
			}
			if !ok {
				return nil
			}
		}
		out[line] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAnalyzeFindsWalletAndExpectedFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := model.NewWallet(7, 25)
	addrs := w.Addresses(&chaincfg.MainNetParams)
	const size = 200_000
	universe, walletLines := testUniverse(rng, size, addrs)
	filters := []*bip37.Filter{w.Filter(0.01, 0, 11), w.Filter(0.01, 0, 12), w.Filter(0.01, 0, 13)}

	r, err := Analyze(filters, strings.NewReader(universe), AnalyzeOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.UniverseSize != size {
		t.Fatalf("universe size %d, want %d", r.UniverseSize, size)
	}
	want := bruteForce(t, universe, filters, false)
	got := map[int]bool{}
	for _, m := range r.Matched {
		got[m.Line] = true
	}
	if len(got) != len(want) || uint64(len(want)) != r.MatchedCount {
		t.Fatalf("matched %d (count %d), brute force %d", len(got), r.MatchedCount, len(want))
	}
	for l := range want {
		if !got[l] {
			t.Errorf("line %d matched by brute force, not by Analyze", l)
		}
	}
	for l := range walletLines {
		if !got[l] {
			t.Errorf("wallet line %d not matched", l)
		}
	}
	// Step by step the false positives of one filter must agree with the
	// expectation (Poisson, 5 sigma), and shrink with each filter.
	for j, st := range r.Intersection {
		fp := float64(st.Matched) - float64(len(addrs))
		if math.Abs(fp-st.ExpectedFalsePositives) > 5*math.Sqrt(st.ExpectedFalsePositives)+1 {
			t.Errorf("after %d filters: %g false positives, expected %g", j+1, fp, st.ExpectedFalsePositives)
		}
		if j > 0 && st.ExpectedFalsePositives >= r.Intersection[j-1].ExpectedFalsePositives {
			t.Errorf("filter %d did not shrink the expectation", j+1)
		}
	}
	if r.Intersection[0].ExpectedFalsePositives < 20 {
		t.Fatalf("one filter expects only %g false positives: the test is too weak", r.Intersection[0].ExpectedFalsePositives)
	}
	for i, f := range r.Filters {
		// 50 elements inserted.
		if math.Abs(f.EstimatedElements-50) > 10 {
			t.Errorf("filter %d: estimated %g elements, want about 50", i+1, f.EstimatedElements)
		}
	}
	// After three filters the wallet's addresses are nearly certain.
	for _, m := range r.Matched {
		if walletLines[m.Line] && m.Probability < 0.9 {
			t.Errorf("wallet line %d has probability %g", m.Line, m.Probability)
		}
	}
	if want := r.EstimatedWallet / (r.EstimatedWallet + r.ExpectedFalsePositives); r.PH1 != want || r.PH1 < 0.9 || r.PHAll <= 0 || r.PHAll > 1 {
		t.Errorf("P_h(1) %g (want %g), P_h(N) %g", r.PH1, want, r.PHAll)
	}
	if !strings.Contains(r.Summary, "belong to the wallet") {
		t.Errorf("summary %q", r.Summary)
	}
}

// TestAnalyzeSameHashingFilters checks that filters testing the same bits
// (same size, hash count and tweak: a filter sent twice, or reloaded after
// filteradd) are not intersected as if independent: their false positives
// coincide, so the expectation must follow what actually matches.
func TestAnalyzeSameHashingFilters(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := model.NewWallet(9, 10)
	addrs := w.Addresses(&chaincfg.MainNetParams)
	universe, _ := testUniverse(rng, 100_000, addrs)
	f := w.Filter(0.05, 0, 21) // dense: thousands of chance matches
	grown := f.Clone()
	grown.Add([]byte("one more element seen in a filteradd"))
	for name, filters := range map[string][]*bip37.Filter{
		"same filter twice":     {f, f.Clone()},
		"filter then filteradd": {f, grown},
	} {
		r, err := Analyze(filters, strings.NewReader(universe), AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		one, two := r.Intersection[0], r.Intersection[1]
		if one.ExpectedFalsePositives < 1000 {
			t.Fatalf("%s: only %g false positives expected: the test is too weak", name, one.ExpectedFalsePositives)
		}
		fp := float64(two.Matched) - float64(len(addrs))
		if math.Abs(fp-two.ExpectedFalsePositives) > 5*math.Sqrt(two.ExpectedFalsePositives)+1 {
			t.Errorf("%s: %g false positives after both filters, expected %g", name, fp, two.ExpectedFalsePositives)
		}
		if r.Confident > len(addrs) {
			t.Errorf("%s: %d matches claimed exposed, the wallet has %d addresses", name, r.Confident, len(addrs))
		}
	}
}

func TestAnalyzePairTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := model.NewWallet(8, 20)
	var lines []string
	for _, pk := range w.PubKeys {
		lines = append(lines, hex.EncodeToString(pk))
	}
	// Outside candidates are pubkeys too, so the pair test applies.
	var b strings.Builder
	var pk [33]byte
	for i := 0; i < 100_000; i++ {
		randomBytes(rng, pk[:])
		pk[0] = 2
		b.WriteString(hex.EncodeToString(pk[:]) + "\n")
	}
	universe := b.String() + strings.Join(lines, "\n") + "\n"
	filters := []*bip37.Filter{w.Filter(0.01, 0, 5)}
	plain, err := Analyze(filters, strings.NewReader(universe), AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paired, err := Analyze(filters, strings.NewReader(universe), AnalyzeOptions{PairTest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(bruteForce(t, universe, filters, true)) != int(paired.MatchedCount) {
		t.Fatal("pair test disagrees with brute force")
	}
	if !(paired.ExpectedFalsePositives < plain.ExpectedFalsePositives/20) {
		t.Errorf("pair test expectation %g not far below %g", paired.ExpectedFalsePositives, plain.ExpectedFalsePositives)
	}
	if paired.MatchedCount < 20 || plain.MatchedCount <= paired.MatchedCount {
		t.Errorf("matched: plain %d, paired %d", plain.MatchedCount, paired.MatchedCount)
	}
	fp := float64(plain.MatchedCount - 20)
	if math.Abs(fp-plain.ExpectedFalsePositives) > 5*math.Sqrt(plain.ExpectedFalsePositives)+1 {
		t.Errorf("plain: %g false positives, expected %g", fp, plain.ExpectedFalsePositives)
	}
}

func TestAnalyzeErrors(t *testing.T) {
	f := model.NewWallet(1, 2).Filter(0.01, 0, 0)
	if _, err := Analyze(nil, strings.NewReader(""), AnalyzeOptions{}); !errors.Is(err, ErrNoFilters) {
		t.Errorf("no filters: %v", err)
	}
	bad := "751e76e8199196d454941c45d1b3a323f1433bd6\n\nxyz\n"
	_, err := Analyze([]*bip37.Filter{f}, strings.NewReader(bad), AnalyzeOptions{Strict: true})
	var le *universe.LineError
	if !errors.As(err, &le) || le.Line != 3 {
		t.Errorf("bad line, strict: %v", err)
	}
	r, err := Analyze([]*bip37.Filter{f}, strings.NewReader(bad), AnalyzeOptions{})
	if err != nil || r.UniverseSize != 1 || r.Universe.LinesRead != 3 || r.Universe.LinesSkipped != 1 ||
		len(r.Universe.BadLines) != 1 || r.Universe.BadLines[0].Line != 3 {
		t.Fatalf("bad line skipped: %+v %v", r, err)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "1 of 3 universe lines skipped") }) {
		t.Errorf("no warning about the skipped line: %q", r.Warnings)
	}
	for _, u := range []string{"", "# nothing\n", "xyz\n"} {
		if _, err := Analyze([]*bip37.Filter{f}, strings.NewReader(u), AnalyzeOptions{}); !errors.Is(err, universe.ErrEmpty) {
			t.Errorf("universe %q: %v, want universe.ErrEmpty", u, err)
		}
	}
}

func TestAnalyzeMatchCap(t *testing.T) {
	// A filter of 8 bits with one hash function and 7 bits set matches
	// 7/8 of the candidates; the list stops at the cap but the count does
	// not.
	most, err := bip37.NewFilterFromParams([]byte{0x7f}, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	u, _ := testUniverse(rng, 1000, nil)
	r, err := Analyze([]*bip37.Filter{most}, strings.NewReader(u), AnalyzeOptions{MaxMatches: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.MatchedCount < 800 || len(r.Matched) != 10 || !r.MatchedTruncated {
		t.Errorf("count %d listed %d truncated %v", r.MatchedCount, len(r.Matched), r.MatchedTruncated)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "only the first 10 matches") }) {
		t.Errorf("warnings %q", r.Warnings)
	}
	// A 0-byte filter matches everything: it reveals nothing, and its
	// matches are counted, not listed.
	all, err := bip37.NewFilterFromParams(nil, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err = Analyze([]*bip37.Filter{all}, strings.NewReader(u), AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.MatchedCount != 1000 || len(r.Matched) != 0 || !r.MatchedTruncated {
		t.Errorf("match-all: count %d listed %d truncated %v", r.MatchedCount, len(r.Matched), r.MatchedTruncated)
	}
	if r.EstimatedWallet != 0 || !strings.Contains(r.Summary, "indistinguishable") {
		t.Errorf("a match-all filter reveals nothing: %+v", r.Summary)
	}
	for _, want := range []string{"matches everything and reveals nothing", "not listed"} {
		if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("match-all: no warning %q in %q", want, r.Warnings)
		}
	}
}
