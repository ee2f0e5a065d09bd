package client

import "github.com/spvfilter/spvfilter/peer/pool"

// risenTips finds the peers whose tips rose since it last looked, however
// they rose: an announcement of a block the chain held (see
// Client.announced) or a header sync that answered one the chain lacked
// when it came and held by the time that peer's headers were read. It is
// the one place late claims are noted.
// Either way the heights are claimed late if they were verified without
// that peer (see lateClaims). It is the service's, used from its
// goroutine alone.
type risenTips struct {
	seen map[*pool.Member]int32
}

// note adds to late the heights each live peer of ms claimed since the
// last look, within tipWindow of its tip then; a peer seen for the first
// time claims nothing (its tip is where verification starts).
func (r *risenTips) note(ms []*pool.Member, tip func(*pool.Member) int32, late *lateClaims) {
	if r.seen == nil {
		r.seen = map[*pool.Member]int32{}
	}
	now := make(map[*pool.Member]int32, len(ms))
	for _, m := range ms {
		h := tip(m)
		now[m] = h
		if old, ok := r.seen[m]; ok && claimsLate(old, h) {
			late.add(m, old+1)
		}
	}
	r.seen = now
}

// claimsLate reports whether a peer's tip rising from old to h claims the
// heights above old: a tip known, and a rise within tipWindow.
func claimsLate(old, h int32) bool { return old >= 0 && old < h && h-old <= tipWindow }
