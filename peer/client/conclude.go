package client

import (
	"fmt"
	"maps"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// conclude stores and records what the verification verified: full holds
// the filter headers of first-1..to, start is the first height that the
// store or this life did not hold verified already. It returns the
// headers of from-1..to and the peers still taking part.
func (v *verification) conclude(full []chainhash.Hash, first, start int32) ([]chainhash.Hash, []*pool.Member, error) {
	c, from, to := v.c, v.from, v.to
	headers := full[start-first:]
	// What rests on an undecided filter is neither stored nor kept as
	// verified: it is verified again (the conflict is remembered, so its
	// block is not asked for again).
	kept := to
	if u := c.conflicts.first(0); u >= 0 {
		kept = min(to, u-1)
	}
	if c.st != nil {
		if err := c.dropUndecidedStored(v.log); err != nil {
			return nil, v.ms, err
		}
		if err := c.storeVerified(v.log, full, first, kept); err != nil {
			return nil, v.ms, err
		}
	}
	// The heights asked of the peers again below start were compared
	// with them too: they count as verified, or rest on one peer, as
	// those of the range.
	lo := max(min(start, v.asked), first)
	v.noteVoices()
	if lo <= kept {
		c.noteVerified(v.summary(), lo, kept, full[lo-first:kept-first+2])
	}
	return headers[from-start:], v.ms, nil
}

// storeVerified appends to the store the verified filter headers above
// its tip up to kept; full holds those of first-1 on. The store may have
// been cut back below first-1 while the verification ran (what it held was
// found false or undecided): then the headers between are not at hand,
// nothing is appended, and the next verification starts from the store's
// tip again (see filterHeaders). So too if the header the store ends with
// is not the verified one (it changed meanwhile), which log notes for the
// result.
func (c *Client) storeVerified(log *scanLog, full []chainhash.Hash, first, kept int32) error {
	tip := c.st.FilterHeaderTip()
	if tip >= kept || tip < first-1 {
		return nil
	}
	if hs, err := c.st.FilterHeaders(tip, tip); tip >= 0 && (err != nil || len(hs) != 1 || hs[0] != full[tip-(first-1)]) {
		note := fmt.Sprintf("filter headers verified from height %d not stored: the data directory's store ends at %d with another header (it changed meanwhile); they are verified again from there", first, tip)
		if err != nil {
			note = fmt.Sprintf("%s (reading it: %v)", note, err)
		}
		c.logf("%s", note)
		log.note(note)
		return nil
	}
	if err := c.st.AppendFilterHeaders(tip+1, full[tip+1-(first-1):kept-(first-1)+1]); err != nil {
		return fmt.Errorf("client: storing filter headers: %w", err)
	}
	return nil
}

// noteVoices records, for the scan's result, which peers' answers were
// compared with another's (both spoke for a height of the range, whether
// or not one was banned for it), and the heights of the range that only
// one of the peers left could speak for: those above the second-highest
// reach. A peer that left the verification unbanned (too slow, gone)
// spoke for nothing: its reach is only what it claimed (an announcement
// raises it), so heights only it and one other claimed rest on the other.
func (v *verification) noteVoices() {
	if v.log.compared == nil {
		v.log.compared = map[*pool.Member]bool{}
	}
	speakers, silent := v.speakers()
	for _, m := range speakers {
		for _, o := range speakers {
			if o != m && min(v.reach[m], v.reach[o]) >= v.from {
				v.log.compared[m] = true
			}
		}
	}
	v.c.views.setCompared(maps.Clone(v.log.compared))
	top, second := v.topTwo()
	if top == nil || len(v.ms) < 2 && !silent || second >= v.to {
		return
	}
	v.log.oneVoice = append(v.log.oneVoice, OnePeer{From: max(second+1, v.from), To: v.reach[top], Peer: top.Addr()})
}

// speakers returns the peers whose words the verification weighed: those
// still taking part and those banned for what they said. It reports
// whether any other peer left it (too slow or gone, unbanned).
func (v *verification) speakers() (out []*pool.Member, silent bool) {
	for _, m := range v.all {
		switch {
		case slices.Contains(v.ms, m) || v.c.pool.Status(m).Banned:
			out = append(out, m)
		default:
			silent = true
		}
	}
	return out, silent
}

// summary says how far the peers still taking part reached.
func (v *verification) summary() peerReaches {
	top, second := v.topTwo()
	r := peerReaches{peers: len(v.ms), second: second}
	if top != nil {
		r.top, r.topReach = top.Addr(), v.reach[top]
	}
	return r
}

// topTwo returns the peer of the highest reach among those taking part,
// and the second-highest reach (-1 with fewer than two peers): the heights
// above it rest on that peer alone.
func (v *verification) topTwo() (top *pool.Member, second int32) {
	second = -1
	for _, m := range v.ms {
		switch r := v.reach[m]; {
		case top == nil || r > v.reach[top]:
			if top != nil {
				second = v.reach[top]
			}
			top = m
		case r > second:
			second = r
		}
	}
	return top, second
}
