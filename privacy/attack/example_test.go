package attack_test

import (
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/model"
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
