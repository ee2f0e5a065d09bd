package leak_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestColludeUnion: the colluding nodes' report scans and fetches the
// union of the views, so that a wallet script whose blocks were fetched
// from different peers matches there and at none of them; it cannot go
// with an intersection.
func TestColludeUnion(t *testing.T) {
	c := newTestChain(t, chainSpec{blocks: 300, txs: 12, wallet: 10, seed: 11})
	index := c.index(t)
	read := func() *universe.IndexReader {
		ir, err := universe.NewIndexReader(bytes.NewReader(index))
		if err != nil {
			t.Fatal(err)
		}
		return ir
	}
	reps, err := leak.Analyze(c.views, read(), leak.Options{Collude: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(c.views)+1 {
		t.Fatalf("%d reports for %d views and the collusion", len(reps), len(c.views))
	}
	var fetched []int32
	for _, v := range c.views {
		fetched = append(fetched, v.Fetched...)
	}
	slices.Sort(fetched)
	all := reps[len(reps)-1]
	if !slices.Equal(all.FetchedHeights, fetched) || all.ScannedBlocks != uint64(c.tip+1) {
		t.Errorf("collusion fetched %v scanned %d, want %v and %d", all.FetchedHeights, all.ScannedBlocks, fetched, c.tip+1)
	}
	split := 0
	for i, s := range c.watched {
		name := universe.ScriptCandidate(s, c.params)
		at := func(r *leak.Report) bool {
			return slices.ContainsFunc(r.Matched, func(m leak.Match) bool { return m.Candidate == name })
		}
		atPeer := slices.ContainsFunc(reps[:len(c.views)], at)
		switch {
		case atPeer && !at(all):
			t.Errorf("watched script %d matches at a peer, not colluding", i)
		case !atPeer && at(all):
			split++
		}
	}
	if split == 0 {
		t.Errorf("every watched script matches at some peer: the chain does not split a script over peers")
	}
	if _, err := leak.Analyze(c.views, read(), leak.Options{Collude: true, Intersect: true}); !errors.Is(err, leak.ErrColludeIntersect) {
		t.Errorf("collude with intersect: %v", err)
	}
}
