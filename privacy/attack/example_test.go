package attack_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// A node that received a wallet's filter tests a universe of candidates.
func ExampleAnalyze() {
	w := model.NewWallet(1, 3)
	f := w.Filter(0.001, 0, 42)
	addrs := w.Addresses(&chaincfg.MainNetParams)
	universe := "# candidates seen on chain\n" +
		addrs[0] + "\n" +
		"1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH\n" +
		addrs[2] + "  # another one\n"
	r, err := attack.Analyze([]*bip37.Filter{f}, strings.NewReader(universe), attack.AnalyzeOptions{})
	if err != nil {
		panic(err)
	}
	for _, m := range r.Matched {
		fmt.Println("line", m.Line, m.Candidate == addrs[0] || m.Candidate == addrs[2])
	}
	fmt.Println(r.UniverseSize, "candidates,", r.MatchedCount, "matched")
	// Output:
	// line 2 true
	// line 4 true
	// 3 candidates, 2 matched
}

// Three sessions of a capture: alice's wallet connects twice (a restart
// picks a new tweak), bob's once. One pass over the universe analyzes each
// session; linking finds alice's two sessions and intersects them.
func ExampleAccumulator_Link() {
	alice, bob := model.NewWallet(11, 4), model.NewWallet(12, 4)
	var u strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&u, "%040x\n", i*7919+5)
	}
	for _, a := range append(alice.Addresses(&chaincfg.MainNetParams), bob.Addresses(&chaincfg.MainNetParams)...) {
		u.WriteString(a + "\n")
	}
	sessions := [][]*bip37.Filter{
		{alice.Filter(0.0001, 10, 1)},
		{bob.Filter(0.0001, 10, 2)},
		{alice.Filter(0.0001, 10, 3)},
	}
	acc, err := attack.NewAccumulator(sessions, attack.AnalyzeOptions{})
	if err != nil {
		panic(err)
	}
	if err := acc.ReadUniverse(strings.NewReader(u.String())); err != nil {
		panic(err)
	}
	reports, err := acc.Reports()
	if err != nil {
		panic(err)
	}
	for i, r := range reports {
		fmt.Printf("session %d: %d of %d candidates match\n", i+1, r.MatchedCount, r.UniverseSize)
	}
	l, err := acc.Link(nil, attack.LinkOptions{})
	if err != nil {
		panic(err)
	}
	for _, p := range l.Pairs {
		fmt.Printf("sessions %d and %d: %d shared, linked %v\n", p.A+1, p.B+1, p.Shared, p.Linked)
	}
	joint, err := acc.Intersect(l.Groups[0])
	if err != nil {
		panic(err)
	}
	fmt.Printf("group %v: %d candidates match both sessions\n", l.Groups[0], joint.MatchedCount)
	// Output:
	// session 1: 4 of 2008 candidates match
	// session 2: 4 of 2008 candidates match
	// session 3: 4 of 2008 candidates match
	// sessions 1 and 2: 0 shared, linked false
	// sessions 1 and 3: 4 shared, linked true
	// sessions 2 and 3: 0 shared, linked false
	// group [0 2]: 4 candidates match both sessions
}

// A BIP 157 client of a wallet paid twice at one address fetched the
// blocks of its payments and of its spend. The payer's change sits in
// both payments: downloads cannot tell it from the wallet's script, so the
// two form a group and the change gets only its share (three tenths of
// the group's: it rides beside the wallet's script, which appears more,
// in every block of it).
func ExampleAnalyzeFetches() {
	ix := universe.NewIndexWriter("", 0)
	defer ix.Close()
	ix.AddTx("payer", 5, 1)
	for _, app := range []struct {
		script string
		height int32
		tx     int
	}{{"payer", 10, 1}, {"wallet", 10, 1}, {"change", 10, 1}, {"change", 40, 2}, {"wallet", 40, 2}, {"wallet", 70, 3}} {
		ix.AddTx(app.script, app.height, app.tx)
	}
	for i := range 500 { // other scripts, in two blocks each
		ix.AddTx(fmt.Sprintf("other-%03d", i), int32(i%100), 4)
		ix.AddTx(fmt.Sprintf("other-%03d", i), int32((i*37+11)%100), 5)
	}
	hash := func(h int32) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint(h))) }
	hd := &universe.IndexHeader{Network: "regtest"}
	for h := range int32(100) {
		hd.Hashes = append(hd.Hashes, hash(h))
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		panic(err)
	}
	ir, err := universe.NewIndexReader(&buf)
	if err != nil {
		panic(err)
	}
	session := &capture.FetchSession{ID: "s-1", Blocks: []chainhash.Hash{hash(10), hash(40), hash(70)},
		Ranges: []capture.FilterRange{{Command: capture.CmdGetCFilters, StopHash: hash(99)}}}
	reports, err := attack.AnalyzeFetches([]*capture.FetchSession{session}, ir, attack.FetchOptions{})
	if err != nil {
		panic(err)
	}
	for _, m := range reports[0].Matched {
		fmt.Printf("%s: %d appearances, group %d, probability %.2f\n", m.Candidate, m.Appearances, m.Group, m.Probability)
	}
	g := reports[0].Groups[0]
	fmt.Printf("group 1 %v: probability %.2f that one is the wallet's\n", g.Members, g.Probability)
	// Output:
	// wallet: 3 appearances, group 1, probability 1.00
	// change: 2 appearances, group 1, probability 0.30
	// group 1 [wallet change]: probability 1.00 that one is the wallet's
}
