package attack

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/capture"
)

// oneClientCapture is k sessions of one wallet of size elements, each
// session's filter of its own tweak and false-positive rate (about fp
// chance matches among the random ones), as analyze --client HOST
// --intersect reads them, and the universe: the wallet's elements among
// random hashes.
func oneClientCapture(seed uint64, k, size, random int, fp float64) ([][]*bip37.Filter, []byte) {
	rng := rand.New(rand.NewPCG(seed, 0x1c7))
	var b bytes.Buffer
	wallet := make([][]byte, size)
	for i := range wallet {
		wallet[i] = randomElem(rng, 20)
		b.WriteString(hex.EncodeToString(wallet[i]) + "\n")
	}
	for range random {
		b.WriteString(hex.EncodeToString(randomElem(rng, 20)) + "\n")
	}
	var groups [][]*bip37.Filter
	for range k {
		f := bip37.NewFilter(uint32(size), fp/float64(random), rng.Uint32(), 0)
		for _, e := range wallet {
			f.Add(e)
		}
		groups = append(groups, []*bip37.Filter{f})
	}
	return groups, b.Bytes()
}

// matchProbabilities are the probabilities of a report's matches, by line.
func matchProbabilities(r *Report) map[int]float64 {
	out := make(map[int]float64, len(r.Matched))
	for _, m := range r.Matched {
		out[m.Line] = m.Probability
	}
	return out
}

// TestIntersectionNotASession: in a capture report with Intersect, the
// group of every session's filters is not one more session of the
// priors' fit: each session's matches are weighed as in the report of
// the sessions alone, and the intersection's under the priors fitted
// over the sessions alone. Before, a client's two or three sessions of
// one wallet of 12 elements (seeds 1 to 3) counted the wallet a third or
// fourth time, with the intersection; its sessions' matches moved by up
// to maxMoved (logged) and the intersection's likewise.
func TestIntersectionNotASession(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		k    int
	}{{1, 2}, {2, 2}, {3, 3}} {
		t.Run(fmt.Sprintf("seed %d, %d sessions", tc.seed, tc.k), func(t *testing.T) {
			groups, univ := oneClientCapture(tc.seed, tc.k, 12, 20_000, 400)
			var all []*bip37.Filter
			sessions := make([]*capture.Session, tc.k)
			for i, g := range groups {
				all = append(all, g...)
				sessions[i] = &capture.Session{ID: fmt.Sprintf("s%d", i+1), Client: "10.0.0.1:8333"}
			}
			alone, want := accumulate(t, groups, univ, AnalyzeOptions{})
			acc, err := NewAccumulator(append(groups, all), AnalyzeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := acc.ReadUniverse(bytes.NewReader(univ)); err != nil {
				t.Fatal(err)
			}
			rep, err := NewCaptureReport(sessions, acc, ReportOptions{Intersect: true, Link: true})
			if err != nil {
				t.Fatal(err)
			}
			var moved float64
			for i, c := range rep.Clients {
				got, exp := matchProbabilities(c.Report), matchProbabilities(want[i])
				for line, p := range exp {
					moved = math.Max(moved, math.Abs(got[line]-p))
				}
			}
			// The intersection weighed under the sessions' priors.
			ref, err := NewAccumulator(append(groups, all), AnalyzeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := ref.ReadUniverse(bytes.NewReader(univ)); err != nil {
				t.Fatal(err)
			}
			ref.fit = &fittedPriors{sizes: alone.fit.sizes, mix: alone.fit.mix}
			refReps, err := ref.Reports()
			if err != nil {
				t.Fatal(err)
			}
			var ixMoved float64
			got, exp := matchProbabilities(rep.Intersection.Report), matchProbabilities(refReps[tc.k])
			for line, p := range exp {
				ixMoved = math.Max(ixMoved, math.Abs(got[line]-p))
			}
			t.Logf("sessions' matches moved by up to %.4g, the intersection's by %.4g; the sessions' prior %+v", moved, ixMoved, alone.fit.sizes.public())
			if moved > 1e-12 || ixMoved > 1e-12 {
				t.Errorf("the intersection counted as a session: the sessions' matches moved by up to %.4g, the intersection's by %.4g", moved, ixMoved)
			}
			if len(exp) == 0 {
				t.Fatal("the intersection matched nothing")
			}
			// Link weighs under the very prior the reports were.
			if rep.Links.WalletSizes != alone.fit.sizes.public() {
				t.Errorf("linking's sizes %+v, the sessions' %+v", rep.Links.WalletSizes, alone.fit.sizes.public())
			}
		})
	}
}
