package simulate_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// Generate a small labelled capture, attack it with package attack, and
// score the attack against the labels.
func Example() {
	o := simulate.DefaultOptions()
	o.Seed = 3
	o.Wallets, o.Addresses, o.Sessions = 4, simulate.IntRange{Min: 20, Max: 40}, simulate.IntRange{Min: 2, Max: 2}
	o.FPRate = simulate.FloatRange{Min: 1e-5, Max: 1e-5}
	o.PayFraction, o.Noise, o.Degenerate = 0, 1, 0
	o.Chain = simulate.ChainOptions{Blocks: 100, TxsPerBlock: 20}
	o.Fetch.Wallets, o.Fetch.Noise = 0, 0
	sc, err := simulate.Generate(o)
	if err != nil {
		log.Fatal(err)
	}
	var universe, capt bytes.Buffer
	if err := sc.WriteUniverse(&universe); err != nil {
		log.Fatal(err)
	}
	if err := sc.WriteCapture(&capt); err != nil {
		log.Fatal(err)
	}
	records, err := capture.Read(&capt)
	if err != nil {
		log.Fatal(err)
	}
	sessions, err := capture.Sessions(records)
	if err != nil {
		log.Fatal(err)
	}
	var groups [][]*bip37.Filter
	for _, s := range sessions {
		groups = append(groups, s.BloomFilters())
	}
	acc, err := attack.NewAccumulator(groups, attack.AnalyzeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := acc.ReadUniverse(&universe); err != nil {
		log.Fatal(err)
	}
	reports, err := acc.Reports()
	if err != nil {
		log.Fatal(err)
	}
	// The report as "privacy analyze --capture --json" writes it, reduced
	// to what is scored: each session's listed matches.
	var doc bytes.Buffer
	doc.WriteString(`{"clients": [`)
	for i, r := range reports {
		if i > 0 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, `{"session": %q, "matched": [`, sessions[i].ID)
		for j, m := range r.Matched {
			if j > 0 {
				doc.WriteString(",")
			}
			fmt.Fprintf(&doc, `{"candidate": %q, "probability": %g}`, m.Candidate, m.Probability)
		}
		doc.WriteString("]}")
	}
	doc.WriteString("]}")
	score, err := simulate.Evaluate(sc.Labels, doc.Bytes(), simulate.EvalOptions{})
	if err != nil {
		log.Fatal(err)
	}
	c := score.Candidates
	fmt.Printf("%d sessions; the wallets' filters hold %d candidates; %d attributed with P >= 0.95, %d of them right\n",
		len(score.Sessions), c.TruthCount, c.AttributedCount, c.RightCount)
	// Output:
	// 9 sessions; the wallets' filters hold 220 candidates; 216 attributed with P >= 0.95, 214 of them right
}
