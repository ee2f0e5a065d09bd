package addrbook

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// The bounds of the address book.
const (
	// sourceBurst is how many addresses one source (a peer's gossip, a
	// DNS seed) may add at once: one full addr or addrv2 message.
	sourceBurst = wire.MaxAddrPerMsg
	// sourceRefill is how long a source waits for each address past its
	// burst: 600 an hour.
	sourceRefill = 6 * time.Second
	// maxSources caps the sources whose quotas the book keeps; beyond
	// it the oldest is forgotten.
	maxSources = 256
	// recentAttempt: an address dialled this recently is picked only
	// when nothing else fits.
	recentAttempt = 10 * time.Minute
)

// How pick ranks a candidate: the lower the sum, the sooner it is picked.
const (
	rankOtherPort       = 1  // not the network's default port (public networks)
	rankRecent          = 2  // attempted within recentAttempt
	rankUnknownServices = 4  // services not known (a DNS seed without filtering)
	rankSameGroup       = 8  // in the group of a peer in use (regtest, simnet)
	rankFailed          = 16 // per failed attempt since the last success, up to three
)

// Book remembers the addresses of nodes the client may dial: what
// peers gossip (addr, addrv2) and what DNS seeds answer, with what the
// client learnt dialling them. It is safe for concurrent use.
//
// On public networks (mainnet, testnet3, testnet4, signet) the book is
// btcd's address manager (package addrmgr, as in btcd v0.24.2): its new
// and tried tables, bucketed by the address's and the source's network
// group, bound it to 1,024 new buckets of at most 65 addresses and 64
// tried buckets of 256 (82,944 addresses), and confine the addresses of
// one source group to 64 of the new buckets. It keeps only publicly
// routable addresses (addrmgr.IsRoutable: no loopback, private, link-local,
// documentation or shared address space) and saves itself to peers.json
// in the book's directory every ten minutes and at close. Its log is the
// package's default, silent.
//
// On regtest and simnet, whose nodes live on loopback and private
// addresses that btcd's address manager refuses, the book is a list of
// at most maxLocalAddresses addresses, of any kind, saved whole to
// peers-local.json (written to a temporary file, synced and renamed into
// place). A source (the peer that gossiped) holds at most a quarter of
// it in addresses never used: past that, its new address replaces its
// own seen longest ago. When the book is full, a new address replaces
// the one seen longest ago that was never used of the source holding
// the most such; when every address was used, the new one is dropped.
// One peer's flood thus pushes out its own addresses first, never more
// than a quarter of the book.
//
// On both, an address must name a host (IPv4, IPv6 or Tor v3; Tor v2 is
// no longer served by Tor) and a port; a gossiped time more than ten
// minutes ahead or before the genesis block becomes five days ago, as
// Bitcoin Core and btcd treat it; and each source may add sourceBurst
// addresses at once and then one every sourceRefill, for the life of the
// book, which bounds what one peer's flood can push out.
//
// A book file that cannot be decoded is set aside (name.damaged-<unix
// time>, the last two kept) and named in a note, and the book starts
// without it; btcd's address manager would delete it without a word, so
// peers.json is checked before the manager reads it (CheckPeersFile). The
// manager writes peers.json in place, every ten minutes
// too, so a crash while it writes leaves a damaged file; at close the
// previous file is kept as peers.json.prev until the new one is written
// and read back, and restored by the next open if the save did not
// finish.
type Book struct {
	params *chaincfg.Params
	now    func() time.Time
	public bool // btcd's address manager, not the local list
	store  addrStore

	mu      sync.Mutex
	quotas  map[string]*quota
	sources []string // the keys of quotas, oldest first
}

// addrStore is where a Book keeps its addresses: btcd's address
// manager (publicStore) or a bounded list (localStore). Addresses reach
// Add already checked.
type addrStore interface {
	add(addrs []*wire.NetAddressV2, src *wire.NetAddressV2)
	candidates() []candidate
	attempt(hostport string, now time.Time)
	connected(hostport string, services wire.ServiceFlag, now time.Time)
	good(hostport string, now time.Time)
	known() ([]Known, error)
	close() error
}

// quota is what a source may still add.
type quota struct {
	left float64
	at   time.Time
}

// isLocalNetwork reports whether params are regtest's or simnet's, whose
// nodes are not on public addresses.
func isLocalNetwork(params *chaincfg.Params) bool {
	return params.Net == wire.TestNet || params.Net == wire.SimNet
}

// Open opens the address book of the network in dir, the
// network's own directory of the data directory; dir "" keeps it in
// memory. now is the clock (time.Now if nil). The notes say what was
// wrong with the files found and what became of them, and name a book
// file of the other kind of network (see Read); an error means the
// directory or a file in it could not be read or written.
func Open(params *chaincfg.Params, dir string, now func() time.Time) (*Book, []string, error) {
	if now == nil {
		now = time.Now
	}
	b := &Book{params: params, now: now, public: !isLocalNetwork(params), quotas: make(map[string]*quota)}
	var notes []string
	var err error
	if b.public {
		b.store, notes, err = openPublicStore(dir, now())
	} else {
		b.store, notes, err = openLocalStore(params, dir, now())
	}
	if err != nil {
		return nil, nil, err
	}
	if dir != "" {
		notes = append(strayNotes(params, dir), notes...)
	}
	return b, notes, nil
}

// Read reads the address book of params' network kept in dir (the
// network's directory of a data directory) as it is on disk, without
// opening it (nothing is written), by address. A file that cannot be
// decoded is named in a note and listed as empty; on public networks
// the copy a save that did not finish kept (peers.json.prev), which
// Open restores, is listed in its place, with a note. A book file of the
// other kind of network (peers.json on regtest or simnet,
// peers-local.json on public networks), which no client reads, is named
// in a note. A file that cannot be read is an error.
func Read(params *chaincfg.Params, dir string) ([]Known, []string, error) {
	notes := strayNotes(params, dir)
	var ks []Known
	var err error
	path := filepath.Join(dir, PeersFile)
	if isLocalNetwork(params) {
		path = filepath.Join(dir, LocalPeersFile)
		var lf *localFile
		if lf, err = readLocalFile(path, params.Name); err == nil {
			ks = lf.Addresses
		}
	} else {
		var note string
		ks, note, err = readPublic(path)
		if note != "" {
			notes = append(notes, note)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, notes, nil
	case errors.Is(err, errDamaged):
		return nil, append(notes, fmt.Sprintf("address book %s is damaged (%s): listed as empty, left as it is", path, damage(err))), nil
	case err != nil:
		return nil, nil, err
	}
	slices.SortFunc(ks, func(x, y Known) int { return strings.Compare(x.Addr, y.Addr) })
	return ks, notes, nil
}

// readPublic lists the peers.json at path or, if it is missing or
// damaged, the copy of a save that did not finish, saying so in note.
func readPublic(path string) (ks []Known, note string, err error) {
	sp, err := readPeersFile(path)
	if err == nil {
		return sp.known(), "", nil
	}
	prev, perr := readPeersFile(path + prevSuffix)
	if perr != nil || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errDamaged) {
		return nil, "", err
	}
	what := "missing"
	if errors.Is(err, errDamaged) {
		what = fmt.Sprintf("damaged (%s)", damage(err))
	}
	return prev.known(), fmt.Sprintf("address book %s is %s: listed from %s, the copy a save that did not finish kept (the next client to open the book restores it)",
		path, what, path+prevSuffix), nil
}

// strayNotes names the book files in dir of the other kind of network,
// which no client of params' network reads.
func strayNotes(params *chaincfg.Params, dir string) []string {
	strays, keeps := []string{PeersFile, PeersFile + prevSuffix}, LocalPeersFile
	if !isLocalNetwork(params) {
		strays, keeps = []string{LocalPeersFile}, PeersFile
	}
	var notes []string
	for _, name := range strays {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			notes = append(notes, fmt.Sprintf("address book: %s is not read: %s keeps its book in %s", filepath.Join(dir, name), params.Name, keeps))
		}
	}
	return notes
}

// Add adds addresses src gossiped (src is the peer's host:port) or a DNS
// seed answered (src is the seed's name), within src's quota, and returns
// how many it took; those the book cannot use are dropped.
func (b *Book) Add(addrs []*wire.NetAddressV2, src string) int {
	now := b.now()
	ok := make([]*wire.NetAddressV2, 0, min(len(addrs), sourceBurst))
	for _, na := range addrs {
		if len(ok) == sourceBurst {
			break
		}
		if !b.usable(na) {
			continue
		}
		c := *na
		if c.Timestamp.After(now.Add(10*time.Minute)) || c.Timestamp.Before(b.params.GenesisBlock.Header.Timestamp) {
			c.Timestamp = now.Add(-5 * 24 * time.Hour)
		}
		ok = append(ok, &c)
	}
	ok = ok[:b.allow(src, len(ok), now)]
	if len(ok) == 0 {
		return 0
	}
	srcNA, err := ParseAddr(src, 0, now)
	if err != nil {
		// A seed's name: btcd's server takes the first address of a
		// seed's answer for its source.
		srcNA = ok[0]
	}
	b.store.add(ok, srcNA)
	return len(ok)
}

// usable reports whether the book can keep na: a host of a known kind
// that is not unspecified, Tor v2 or broadcast, and a port; on public
// networks only what btcd's address manager keeps.
func (b *Book) usable(na *wire.NetAddressV2) bool {
	if na == nil || na.Addr == nil || na.Port == 0 {
		return false
	}
	if na.IsTorV3() {
		return true
	}
	lna := na.ToLegacy()
	if !addrmgr.IsValid(lna) || addrmgr.IsOnionCatTor(lna) {
		return false
	}
	return !b.public || addrmgr.IsRoutable(na)
}

// allow takes up to n addresses of src's quota and returns how many src
// may add.
func (b *Book) allow(src string, n int, now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.quotas[src]
	if q == nil {
		if len(b.sources) == maxSources {
			delete(b.quotas, b.sources[0])
			b.sources = slices.Delete(b.sources, 0, 1)
		}
		q = &quota{left: sourceBurst, at: now}
		b.quotas[src] = q
		b.sources = append(b.sources, src)
	}
	if d := now.Sub(q.at); d > 0 {
		q.left = min(sourceBurst, q.left+d.Seconds()/sourceRefill.Seconds())
		q.at = now
	}
	k := min(n, int(q.left))
	q.left -= float64(k)
	return k
}

// Pick returns an address to dial: one that advertises every service in
// need (or, after those, one whose services are unknown), is not in use
// (inUse: the host:port of the peers connected or being dialled) and for
// which skip (banned, say; nil for none) is false. On public networks it
// never returns an address in the group (see groupKey) of a peer in use,
// as btcd and Bitcoin Core keep one outbound peer per group; on regtest
// and simnet, where nodes share the loopback group, such an address comes
// only after all others. Addresses attempted in the last ten minutes and,
// on public networks, those off the default port come after the others,
// and those that failed since they last served come after those that did
// not, as btcd's address manager weighs them.
// On public networks the candidates are drawn at random by btcd's address
// manager (which favours addresses not tried lately and without failed
// attempts); ok is false when none fits.
func (b *Book) Pick(need wire.ServiceFlag, inUse []string, skip func(hostport string) bool) (hostport string, ok bool) {
	busy := make(map[string]bool, len(inUse))
	groups := make(map[string]bool, len(inUse))
	for _, a := range inUse {
		busy[a] = true
		groups[groupKey(a)] = true
	}
	now := b.now()
	best, bestRank := "", -1
	for _, c := range b.store.candidates() {
		if busy[c.addr] || (skip != nil && skip(c.addr)) {
			continue
		}
		r, fits := b.rank(c, need, groups, now)
		if fits && (bestRank < 0 || r < bestRank) {
			best, bestRank = c.addr, r
			if r == 0 {
				break
			}
		}
	}
	return best, bestRank >= 0
}

// rank orders pick's candidates, lowest first; fits is false for one pick
// must not return.
func (b *Book) rank(c candidate, need wire.ServiceFlag, groups map[string]bool, now time.Time) (r int, fits bool) {
	switch {
	case c.services&need == need:
	case c.services == 0:
		r += rankUnknownServices
	default:
		return 0, false
	}
	if groups[groupKey(c.addr)] {
		if b.public {
			return 0, false
		}
		r += rankSameGroup
	}
	if now.Sub(c.lastAttempt) < recentAttempt {
		r += rankRecent
	}
	r += rankFailed * min(c.attempts, 3)
	if _, port, _ := net.SplitHostPort(c.addr); b.public && port != b.params.DefaultPort {
		r += rankOtherPort
	}
	return r, true
}

// Attempt records that the client is dialling hostport.
func (b *Book) Attempt(hostport string) { b.store.attempt(hostport, b.now()) }

// Connected records a completed handshake with hostport and the services
// it advertised, which replace those gossiped; an address the book did
// not know (a peer given by the user) is added.
func (b *Book) Connected(hostport string, services wire.ServiceFlag) {
	b.store.connected(hostport, services, b.now())
}

// Good records that hostport served the client: it moves to the tried
// addresses, and its failed attempts are forgotten.
func (b *Book) Good(hostport string) { b.store.good(hostport, b.now()) }

// Known lists the addresses of the book, by address. On public networks
// it reads them from peers.json, since btcd's address manager lists
// nothing: the book as last saved (when opened, every ten minutes, at
// close); a book kept in memory lists nothing there.
func (b *Book) Known() ([]Known, error) {
	ks, err := b.store.known()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ks, func(x, y Known) int { return strings.Compare(x.Addr, y.Addr) })
	return ks, nil
}

// Close saves the book. It is safe to call more than once.
func (b *Book) Close() error { return b.store.close() }
