package attack

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// pairUniverse is a synthetic universe of random hashes holding a wallet's
// P2PKH addresses and, for the first keyed of its keys, the key's line
// marked as the address's pair, before or after the address line.
func pairUniverse(rng *rand.Rand, size int, w *model.Wallet, keyed int) (text string, keyLines map[int]int) {
	addrs := w.Addresses(&chaincfg.MainNetParams)
	var lines []string
	var h [20]byte
	for range size {
		randomBytes(rng, h[:])
		lines = append(lines, hex.EncodeToString(h[:]))
	}
	place := func(s string) {
		i := rng.IntN(len(lines) + 1)
		lines = append(lines[:i], append([]string{s}, lines[i:]...)...)
	}
	for i, a := range addrs {
		place(a + " # height 1")
		if i < keyed {
			place(fmt.Sprintf("%x # pair %s, listed %s, height 2", w.PubKeys[i], a, a))
		}
	}
	keyLines = map[int]int{}
	for n, l := range lines {
		for i := 0; i < keyed; i++ {
			if strings.HasPrefix(l, hex.EncodeToString(w.PubKeys[i])) {
				keyLines[n+1] = i
			}
		}
	}
	return strings.Join(lines, "\n") + "\n", keyLines
}

// TestAnalyzeCountsMarkedPairOnce checks that a key line marked as an
// address's pair and the address's own line count as one candidate, the
// address, tested by key and hash, and under the pair test by both.
func TestAnalyzeCountsMarkedPairOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := model.NewWallet(11, 20)
	const size, keyed = 100_000, 12
	text, keyLines := pairUniverse(rng, size, w, keyed)
	addrs := w.Addresses(&chaincfg.MainNetParams)

	// The first filter holds every key and hash; the second, of another
	// tweak, lacks the keys of wallet entries 0 to 3 (a wallet that
	// watches only their hashes), so the pair test must reject those.
	f1 := w.Filter(0.01, 0, 1)
	f2 := bip37.NewFilter(40, 0.01, 2, 0)
	for i := range w.PubKeys {
		if i >= 4 {
			f2.Add(w.PubKeys[i])
		}
		f2.Add(w.Hashes[i])
	}
	filters := []*bip37.Filter{f1, f2}

	for _, pair := range []bool{false, true} {
		t.Run(fmt.Sprintf("pair=%v", pair), func(t *testing.T) {
			r, err := Analyze(filters, strings.NewReader(text), AnalyzeOptions{PairTest: pair, Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			if r.UniverseSize != size+uint64(len(addrs)) || r.Pairs != keyed || r.MergedAddressLines != keyed {
				t.Fatalf("universe %d, pairs %d, merged %d; want %d, %d, %d",
					r.UniverseSize, r.Pairs, r.MergedAddressLines, size+len(addrs), keyed, keyed)
			}
			// Each wallet address is listed once: as its key's line
			// if it has one, else as its own line.
			seen := map[string]int{}
			for _, m := range r.Matched {
				seen[m.Candidate]++
				if i, ok := keyLines[m.Line]; ok {
					if m.Candidate != addrs[i] || m.PubKey != hex.EncodeToString(w.PubKeys[i]) || m.Kind != universe.KindAddress || m.PairTested != pair {
						t.Errorf("key line %d matched as %+v", m.Line, m)
					}
				}
			}
			wallet := 0
			for i, a := range addrs {
				want := 1
				if pair && i < 4 {
					want = 0 // the key is not in the second filter
				}
				wallet += want
				if seen[a] != want {
					t.Errorf("address %d (%s, keyed %v) listed %d times, want %d", i, a, i < keyed, seen[a], want)
				}
			}
			if uint64(len(r.Matched)) != r.MatchedCount {
				t.Fatalf("%d listed, count %d", len(r.Matched), r.MatchedCount)
			}
			// The counts agree with the listing, and the false
			// positives with their expectation.
			fp := float64(r.MatchedCount) - float64(wallet)
			e := r.ExpectedFalsePositives
			if math.Abs(fp-e) > 5*math.Sqrt(e)+1 {
				t.Errorf("%g false positives, expected %g", fp, e)
			}
			for _, fr := range r.Filters {
				if fr.Matched < uint64(wallet) || float64(fr.Matched) > float64(len(addrs))+fr.ExpectedFalsePositives+5*math.Sqrt(fr.ExpectedFalsePositives)+1 {
					t.Errorf("filter %d alone matches %d", fr.Number, fr.Matched)
				}
			}
		})
	}
}

func TestAnalyzeBadPairMarker(t *testing.T) {
	w := model.NewWallet(3, 2)
	addrs := w.Addresses(&chaincfg.MainNetParams)
	key := hex.EncodeToString(w.PubKeys[0])
	f := w.Filter(0.001, 0, 1)
	for _, tt := range []struct{ line, want string }{
		{key + " # pair " + addrs[1], "not an address of the key's HASH160"},
		{key + " # pair " + addrs[0] + ", listed " + addrs[1], "not an address of the key's HASH160"},
		{key + " # pair nonsense", "not an address"},
		{key + " # listed " + addrs[0], "without"},
	} {
		text := "# header\n" + tt.line + "\n"
		_, err := Analyze([]*bip37.Filter{f}, strings.NewReader(text), AnalyzeOptions{Strict: true})
		var le *universe.LineError
		if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, universe.ErrBadCandidate) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want a line 2 error about %q", tt.line, err, tt.want)
		}
	}
	// Other comment fields, and comments on other lines, are ignored.
	text := addrs[0] + " # pair of nothing\n" + key + " # height 3, pair " + addrs[0] + ", note\n"
	r, err := Analyze([]*bip37.Filter{f}, strings.NewReader(text), AnalyzeOptions{})
	if err != nil || r.Pairs != 1 || r.MergedAddressLines != 0 || r.UniverseSize != 2 {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestParsePairMarker(t *testing.T) {
	const key = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798" // generator point, HASH160 751e76e8...
	var p universe.Parser
	c, err := p.Parse([]byte(key + " # pair 1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH, listed bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4, listed 1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH, height 1"))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.PairAddress) != "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH" || len(c.Listed) != 2 ||
		string(c.Listed[0]) != "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4" || string(c.Listed[1]) != "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH" {
		t.Fatalf("read %q, %q", c.PairAddress, c.Listed)
	}
	// The next line, of any form, carries no marker over.
	for _, line := range []string{"751e76e8199196d454941c45d1b3a323f1433bd6", key, "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH # pair x"} {
		c, err := p.Parse([]byte(line))
		if err != nil || c.PairAddress != nil || c.Listed != nil {
			t.Fatalf("%q: %+v %v", line, c, err)
		}
	}
}
