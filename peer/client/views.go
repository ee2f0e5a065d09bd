package client

import (
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/banlist"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// view is what the client knows of one member's chain and conduct: what
// needs the chain or a verdict, which the pool does not keep.
type view struct {
	tip    int32   // the highest height of the chain it is known to hold, or -1
	branch *Branch // its own branch, when it forks off the chain with less work
	// announced holds the blocks it announced that the chain lacks,
	// until its next header sync (what it then did not serve is
	// counted by the service, see unservedScores).
	announced []chainhash.Hash
	// fresh: connected (again) since its last header sync; synced: a
	// header sync with it has ended since it connected.
	fresh, synced bool
	// strikes counts the times in a row it failed to serve what it
	// stated during a dispute, the last at struckAt.
	strikes  int
	struckAt time.Time
}

// peerViews are the views of the pool's members, created as they are
// first needed and dropped with their member (keep). Its methods are safe
// for concurrent use; its lock is a leaf: held while calling nothing
// else.
type peerViews struct {
	mu sync.Mutex
	m  map[*pool.Member]*view
	// compared holds the members whose answers the last verification
	// compared with another's (PeerStatus.Compared).
	compared map[*pool.Member]bool
	// struck keeps, by host (banlist.HostKey, as a ban is kept), the
	// strikes of members gone from the pool (at most maxStruck), so that
	// a peer found again under any address of the same host comes back
	// with them, not with a clean record.
	struck map[string]struck
}

// struck is the strikes in a row of a host, the last at at.
type struck struct {
	n  int
	at time.Time
}

// strikeMemory is how long a strike counts: a failure to serve in a
// dispute longer ago than that is no longer the one before in a row.
const strikeMemory = time.Hour

// maxStruck bounds peerViews.struck.
const maxStruck = 1024

// get returns m's view. Called with mu held.
func (pv *peerViews) get(m *pool.Member) *view {
	v := pv.m[m]
	if v == nil {
		if pv.m == nil {
			pv.m = map[*pool.Member]*view{}
		}
		key := banlist.HostKey(m.Addr())
		v = &view{tip: -1, strikes: pv.struck[key].n, struckAt: pv.struck[key].at}
		delete(pv.struck, key)
		pv.m[m] = v
	}
	return v
}

// tip returns the highest height m is known to hold, or -1.
func (pv *peerViews) tip(m *pool.Member) int32 {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if v := pv.m[m]; v != nil {
		return v.tip
	}
	return -1
}

// branch returns a copy of m's own branch, if it is on one.
func (pv *peerViews) branch(m *pool.Member) *Branch {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if v := pv.m[m]; v != nil && v.branch != nil {
		b := *v.branch
		return &b
	}
	return nil
}

// synced takes in what m's header sync showed of its chain: it replaces
// what it showed before (a peer may roll back).
func (pv *peerViews) synced(m *pool.Member, res peer.HeadersResult) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	v.tip, v.branch, v.synced, v.fresh = res.Tip, nil, true, false
	if b := res.Branch; b != nil {
		v.branch = &Branch{Fork: b.Fork, Height: b.Height, Hash: b.Hash}
	}
}

// clampTips lowers every tip above fork to it: what was learnt above it
// was of the branch the chain left.
func (pv *peerViews) clampTips(fork int32) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	for _, v := range pv.m {
		v.tip = min(v.tip, fork)
	}
}

// raise takes in that m holds the chain up to h (it announced that
// block).
func (pv *peerViews) raise(m *pool.Member, h int32) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	if v := pv.get(m); v.tip < h {
		v.tip = h
	}
}

// pending returns the blocks m announced that the chain lacked, if it
// is a member whose header sync has ended since it connected and that is
// on no branch of its own (see Client.syncAnnounced).
func (pv *peerViews) pending(m *pool.Member) ([]chainhash.Hash, bool) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	if !v.synced || v.branch != nil || len(v.announced) == 0 {
		return nil, false
	}
	return slices.Clone(v.announced), true
}

// heard takes in that the chain holds heard, the blocks pending returned
// for m, the highest at height top: m's tip is raised to it, as an
// announcement of a block the chain holds raises it, and they are
// forgotten. It reports whether m announced nothing else meanwhile.
func (pv *peerViews) heard(m *pool.Member, heard []chainhash.Hash, top int32) bool {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	if len(v.announced) < len(heard) || !slices.Equal(v.announced[:len(heard)], heard) {
		return false // its view was reset or synced meanwhile
	}
	v.tip, v.announced = max(v.tip, top), v.announced[len(heard):]
	return len(v.announced) == 0
}

// announce remembers a block m announced that the chain lacks, up to
// maxAnnounced until its next header sync; it reports whether it did.
func (pv *peerViews) announce(m *pool.Member, hash chainhash.Hash) bool {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	if len(v.announced) >= maxAnnounced {
		return false
	}
	v.announced = append(v.announced, hash)
	return true
}

// reset forgets what was known of m's chain: it was connected (again).
func (pv *peerViews) reset(m *pool.Member) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	v.tip, v.fresh, v.synced = -1, true, false
}

// unsynced returns the members of ms no header sync has ended with since
// they connected.
func (pv *peerViews) unsynced(ms []*pool.Member) []*pool.Member {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	var out []*pool.Member
	for _, m := range ms {
		if v := pv.m[m]; v == nil || !v.synced {
			out = append(out, m)
		}
	}
	return out
}

// toSync returns the members of live that announced blocks the chain
// lacks or were connected again since their last header sync, and marks
// the latter as no longer fresh.
func (pv *peerViews) toSync(live []*pool.Member) []*pool.Member {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	var out []*pool.Member
	for _, m := range live {
		if v := pv.m[m]; v != nil && (len(v.announced) > 0 || v.fresh) {
			v.fresh = false
			out = append(out, m)
		}
	}
	return out
}

// charge returns the blocks m announced before its header sync that the
// chain still lacks (has reports whether it holds one), and forgets them;
// none is returned if m is on a branch of its own or the sync changed the
// chain's branch (what it announced may be on the branch it left). A
// block m served erases none it did not (see unservedScores).
func (pv *peerViews) charge(m *pool.Member, has func(chainhash.Hash) bool, reorganized bool) []chainhash.Hash {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	var missing []chainhash.Hash
	if v.branch == nil && !reorganized {
		for _, hash := range v.announced {
			if !has(hash) {
				missing = append(missing, hash)
			}
		}
	}
	v.announced = nil
	return missing
}

// strike counts one more failure of m to back its word in a dispute, or
// ends its run of failures when it served (failed false), and returns
// the count: failures in a row, each within strikeMemory of the one
// before (an honest node slow once a day never reaches
// maxDisputeStrikes; a liar that fails a dispute again within the hour,
// as a dispute is replayed within retryInterval, is banned, and one that
// waits strikeMemory between its failures costs one failed request an
// hour, see Client.evidence).
func (pv *peerViews) strike(m *pool.Member, failed bool) int {
	return pv.strikeAt(m, failed, time.Now())
}

// strikeAt is strike at now.
func (pv *peerViews) strikeAt(m *pool.Member, failed bool, now time.Time) int {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	v := pv.get(m)
	if !failed {
		v.strikes = 0
		return 0
	}
	if now.Sub(v.struckAt) > strikeMemory {
		v.strikes = 0 // the last failure is too old to be the one before
	}
	v.strikes, v.struckAt = v.strikes+1, now
	return v.strikes
}

// setCompared records the members the last verification compared.
func (pv *peerViews) setCompared(compared map[*pool.Member]bool) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.compared = compared
}

// wasCompared reports whether the last verification compared m.
func (pv *peerViews) wasCompared(m *pool.Member) bool {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	return pv.compared[m]
}

// keep drops the views of the members not in members (gone from the
// pool), so that the views stay as many as the members.
func (pv *peerViews) keep(members []*pool.Member) {
	in := make(map[*pool.Member]bool, len(members))
	for _, m := range members {
		in[m] = true
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	for m, v := range pv.m {
		if !in[m] {
			pv.keepStrikes(banlist.HostKey(m.Addr()), struck{v.strikes, v.struckAt})
			delete(pv.m, m)
		}
	}
	for m := range pv.compared {
		if !in[m] {
			delete(pv.compared, m)
		}
	}
}

// keepStrikes keeps the strikes of a member gone from the pool, under
// its host's key (the most, of two members of one host); beyond
// maxStruck, another host's are forgotten. Called with mu held.
func (pv *peerViews) keepStrikes(addr string, s struck) {
	if s.n == 0 {
		return
	}
	if pv.struck == nil {
		pv.struck = map[string]struck{}
	}
	if _, ok := pv.struck[addr]; !ok && len(pv.struck) >= maxStruck {
		for a, k := range pv.struck {
			if time.Since(k.at) > strikeMemory {
				delete(pv.struck, a) // no longer counts
			}
		}
		for a := range pv.struck {
			if len(pv.struck) < maxStruck {
				break
			}
			delete(pv.struck, a)
		}
	}
	if old := pv.struck[addr]; old.n > s.n {
		s = old
	}
	pv.struck[addr] = s
}

// maxAnnounced bounds the unknown blocks a peer's announcements are
// remembered for until its next header sync.
const maxAnnounced = 16
