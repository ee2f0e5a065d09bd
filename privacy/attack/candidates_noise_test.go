package attack

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// noiseCapture is a capture of honest sessions, each of a wallet of
// own one-element candidates behind a filter of chance rate rate, in a
// universe of hashes one-element candidates and keys public keys (a rare
// class of two elements), beside noise sessions whose filters hold every
// key of the universe at a chance rate of almost none: sessions an
// adversary can open to move the classes' shares fitted over the
// capture. owner maps a wallet candidate's line to its session.
func noiseCapture(seed uint64, honest, own, hashes, keys, noise int, rate float64) (groups [][]*bip37.Filter, data []byte, owner map[int]int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5e55))
	var b strings.Builder
	owner = map[int]int{}
	line := 0
	write := func(e []byte, who int) {
		b.WriteString(hex.EncodeToString(e))
		b.WriteByte('\n')
		line++
		if who >= 0 {
			owner[line] = who
		}
	}
	for s := range honest {
		f := bip37.NewFilter(uint32(own), rate, rng.Uint32(), 0)
		for range own {
			e := randomElem(rng, 20)
			f.Add(e)
			write(e, s)
		}
		groups = append(groups, []*bip37.Filter{f})
	}
	for range hashes {
		write(randomElem(rng, 20), -1)
	}
	var all [][]byte
	for range keys {
		k := randomElem(rng, 33)
		k[0] = 2
		all = append(all, k)
		write(k, -1)
	}
	for i := range noise {
		f := bip37.NewFilter(uint32(keys), 1e-7, uint32(1000+i), 0)
		for _, k := range all {
			f.Add(k)
		}
		groups = append(groups, []*bip37.Filter{f})
	}
	return groups, []byte(b.String()), owner
}

// TestCandidateProbabilityNoiseSessions holds the honest sessions'
// matches to what they are when analyzed alone as noise sessions are
// added to the capture: sessions whose filters hold every candidate of a
// rare class must neither lift the honest sessions' chance matches of
// that class to P >= 0.95 (a wallet holds at most the matches of a class
// it has) nor take their own candidates' mean probability down by more
// than 0.1.
func TestCandidateProbabilityNoiseSessions(t *testing.T) {
	const honest, own = 30, 50
	type outcome struct {
		wrongConfident, confident int
		ownMean                   float64
	}
	measure := func(noise int) outcome {
		groups, data, owner := noiseCapture(11, honest, own, 20000, 500, noise, 1e-3)
		reps, err := AnalyzeGroups(groups, bytes.NewReader(data), AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var o outcome
		var mine int
		for g, r := range reps[:honest] {
			for _, m := range r.Matched {
				who, ok := owner[m.Line]
				right := ok && who == g
				if m.Probability >= 0.95 {
					o.confident++
					if !right {
						o.wrongConfident++
					}
				}
				if right {
					mine++
					o.ownMean += m.Probability
				}
			}
		}
		if mine != honest*own {
			t.Fatalf("%d of the honest wallets' %d candidates matched", mine, honest*own)
		}
		o.ownMean /= float64(mine)
		return o
	}
	alone := measure(0)
	for _, noise := range []int{1, 5, 20} {
		t.Run(fmt.Sprintf("noise=%d", noise), func(t *testing.T) {
			o := measure(noise)
			t.Logf("alone: %+v; with noise: %+v", alone, o)
			if o.wrongConfident > alone.wrongConfident {
				t.Errorf("wrong at P >= 0.95: %d, %d without the noise sessions", o.wrongConfident, alone.wrongConfident)
			}
			if o.ownMean < alone.ownMean-0.1 {
				t.Errorf("own candidates' mean P %.3f, %.3f without the noise sessions", o.ownMean, alone.ownMean)
			}
		})
	}
}
