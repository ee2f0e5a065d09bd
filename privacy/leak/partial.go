package leak

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// maxSiblings is the most candidates a sampled single's transaction may
// hold for them all to be tested, which tells whether the single rides in
// another match's transaction; beyond it the single is taken to ride
// (left out of the chance singles: conservative).
const maxSiblings = 16

// candidate is one candidate of the fetched blocks.
type candidate struct {
	name    string // its script, set when it is an entry
	script  []byte
	heights []int32    // fetched heights it appears in, increasing
	txs     [][]uint32 // its transactions there
	own     bool
	query   int     // its index among the queries, -1 when untested
	extra   []int32 // heights scanned, not fetched, whose filter holds it
	entry   bool    // in the partial index (not a sampled single)
	bigTx   bool    // a sampled single in a transaction of too many candidates
	// The first appearance's storage, so that a candidate seen once
	// costs no allocation of its own.
	firstHeight [1]int32
	firstTxs    [1][]uint32
	firstTx     [1]uint32
}

// partial is the partial index Compute builds, and what it learned
// building it.
type partial struct {
	first, last int32
	scanned     []bool           // by height - first: scanned by some view
	fetched     []bool           // fetched by some view
	untested    []bool           // scanned, not fetched, filter not held
	seed        maphash.Seed     // shards the candidates
	found       []*candidate     // in the order found: by height, then place in the block
	byTx        [][][]*candidate // by height - first, then position: the candidates of a fetched transaction
	own         map[string]bool
	decoy       map[string]bool
	watchItems  map[string][]int
	queries     []*candidate
	entries     []*candidate
	sample      []*candidate
	pool        []*candidate // every single the sample is drawn from
	truncated   int          // candidates beyond MaxQueries
	rep         []int32
	singles     map[string]Estimate
	warnings    []string
}

// newPartial builds the partial index of the views' fetched blocks.
func newPartial(in Input, views []View, lim Limits) (*partial, error) {
	p := &partial{own: map[string]bool{},
		watchItems: map[string][]int{}, singles: map[string]Estimate{}}
	p.bounds(views)
	for i, s := range in.Watched {
		p.own[string(s)] = true
		p.watchItems[string(s)] = append(p.watchItems[string(s)], i)
	}
	for _, s := range in.Covers {
		p.own[string(s)] = true
	}
	p.decoy = make(map[string]bool, len(in.Decoys))
	for _, s := range in.Decoys {
		p.decoy[string(s)] = true
	}
	if err := p.name(in, lim.Workers); err != nil {
		return nil, err
	}
	p.choose(lim, in.Seed)
	p.test(in.Filters, views, lim.Workers)
	p.representatives(views)
	for i := range views {
		p.estimateSingles(&views[i])
	}
	for _, c := range p.found {
		if c.entry {
			c.name = string(c.script)
			p.entries = append(p.entries, c)
		}
	}
	slices.SortFunc(p.entries, func(a, b *candidate) int { return cmp.Compare(a.name, b.name) })
	return p, nil
}

// bounds sets the heights the views reach and which of them were scanned
// and fetched by some view.
func (p *partial) bounds(views []View) {
	p.first, p.last = int32(1<<31-1), int32(-1)
	for _, v := range views {
		for _, r := range v.Scanned {
			p.first, p.last = min(p.first, max(r.From, 0)), max(p.last, r.To)
		}
		for _, h := range v.Fetched {
			p.first, p.last = min(p.first, max(h, 0)), max(p.last, h)
		}
	}
	if p.last < p.first {
		p.first, p.last = 0, 0
	}
	n := int(p.last-p.first) + 1
	p.scanned, p.fetched, p.untested = make([]bool, n), make([]bool, n), make([]bool, n)
	for _, v := range views {
		for _, r := range v.Scanned {
			for h := max(r.From, p.first); h <= r.To; h++ {
				p.scanned[h-p.first] = true
			}
		}
		for _, h := range v.Fetched {
			if h >= p.first {
				p.scanned[h-p.first], p.fetched[h-p.first] = true, true
			}
		}
	}
}

// name finds the candidates of every fetched block, each named by its
// script (one script is one candidate of the index: naming it as the
// index does, by its address, would cost more than the rest). The blocks'
// appearances are found on workers goroutines (the spends' scripts are
// hashed), then joined in the order of the blocks.
func (p *partial) name(in Input, workers int) error {
	var heights []int32
	var blocks []*wire.MsgBlock
	for i, f := range p.fetched {
		if !f {
			continue
		}
		h := p.first + int32(i)
		var b *wire.MsgBlock
		ok := in.Blocks != nil
		if ok {
			b, ok = in.Blocks(h)
		}
		if !ok || b == nil {
			return fmt.Errorf("%w: height %d", ErrMissingBlock, h)
		}
		heights, blocks = append(heights, h), append(blocks, b)
	}
	p.seed = maphash.MakeSeed()
	apps := appearancesOf(blocks, in.Params, workers, p.seed)
	shards := p.shard(apps, workers)
	p.found = mergeFound(shards)
	p.byTx = make([][][]*candidate, len(p.fetched))
	for i, h := range heights {
		p.byTx[h-p.first] = make([][]*candidate, len(blocks[i].Transactions))
		for j, a := range apps[i] {
			sh := shards[a.shard]
			p.add(h, a.tx, &sh.slab[sh.ref[i][j]])
		}
	}
	for s := range p.own {
		sh := shards[shardOf(p.seed, []byte(s), len(shards))]
		if k, ok := sh.byScript[s]; ok {
			sh.slab[k].own = true
		}
	}
	return nil
}

// blockApp is one appearance of a fetched block, and the shard of its
// script.
type blockApp struct {
	script []byte
	tx     uint32
	shard  uint32
}

// appearancesOf lists the appearances of each block, on workers
// goroutines, each with its script's shard of n.
func appearancesOf(blocks []*wire.MsgBlock, params *chaincfg.Params, workers int, seed maphash.Seed) [][]blockApp {
	out := make([][]blockApp, len(blocks))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(blocks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				b := blocks[i]
				n := 0
				for _, tx := range b.Transactions {
					n += len(tx.TxIn) + len(tx.TxOut)
				}
				a := make([]blockApp, 0, n)
				universe.ScriptAppearances(b, params, func(x universe.Appearance) {
					a = append(a, blockApp{script: x.Script, tx: uint32(x.Tx), shard: shardOf(seed, x.Script, workers)})
				})
				out[i] = a
			}
		}()
	}
	for i := range blocks {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func shardOf(seed maphash.Seed, script []byte, n int) uint32 {
	return uint32(maphash.Bytes(seed, script) % uint64(n))
}

// shard holds the candidates whose scripts fall in one shard: each
// shard's are found on a goroutine of their own.
type shard struct {
	byScript map[string]int32
	slab     []candidate
	firstAt  []int     // by candidate, the number of its first appearance among all
	ref      [][]int32 // by block and appearance, its candidate in slab (when of this shard)
}

// shard finds the candidates of the appearances, one shard per worker.
func (p *partial) shard(apps [][]blockApp, workers int) []*shard {
	shards := make([]*shard, workers)
	var wg sync.WaitGroup
	size := make([]int, workers) // appearances per shard: at most its candidates
	for _, block := range apps {
		for _, a := range block {
			size[a.shard]++
		}
	}
	for s := range shards {
		sh := &shard{byScript: make(map[string]int32, size[s]), slab: make([]candidate, 0, size[s]), firstAt: make([]int, 0, size[s]), ref: make([][]int32, len(apps))}
		shards[s] = sh
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := 0
			for i, block := range apps {
				sh.ref[i] = make([]int32, len(block))
				for j, a := range block {
					if a.shard != uint32(s) {
						continue
					}
					k, ok := sh.byScript[string(a.script)]
					if !ok {
						k = int32(len(sh.slab))
						sh.byScript[string(a.script)] = k
						sh.slab = append(sh.slab, candidate{script: a.script, query: -1})
						sh.firstAt = append(sh.firstAt, at+j)
					}
					sh.ref[i][j] = k
				}
				at += len(block)
			}
		}()
	}
	wg.Wait()
	return shards
}

// mergeFound lists the shards' candidates in the order found.
func mergeFound(shards []*shard) []*candidate {
	n := 0
	for _, sh := range shards {
		n += len(sh.slab)
	}
	out := make([]*candidate, 0, n)
	next := make([]int, len(shards))
	for len(out) < n {
		best := -1
		for s, sh := range shards {
			if next[s] < len(sh.slab) && (best < 0 || sh.firstAt[next[s]] < shards[best].firstAt[next[best]]) {
				best = s
			}
		}
		c := &shards[best].slab[next[best]]
		c.heights, c.txs = c.firstHeight[:0], c.firstTxs[:0]
		out = append(out, c)
		next[best]++
	}
	return out
}

// add records an appearance of c in transaction tx at fetched height h.
func (p *partial) add(h int32, tx uint32, c *candidate) {
	last := len(c.heights) - 1
	if last < 0 || c.heights[last] != h {
		c.heights = append(c.heights, h)
		c.txs = append(c.txs, nil)
		last++
		if last == 0 {
			c.txs[0] = c.firstTx[:0]
		}
	}
	if t := c.txs[last]; len(t) == 0 || t[len(t)-1] != tx {
		c.txs[last] = append(t, tx)
		t := &p.byTx[h-p.first][tx]
		*t = append(*t, c)
	}
}

// txCands are the candidates of the fetched transaction at position tx
// of height h.
func (p *partial) txCands(h int32, tx uint32) []*candidate { return p.byTx[h-p.first][tx] }

// choose picks the queries: the own candidates and those of their
// transactions, always; those in two or more fetched blocks, the most
// appearing first, each with the candidates of its transactions (whether
// a match rides in another's transaction depends on them), at most
// MaxQueries; and a sample of MaxSingles of the others, with the
// candidates of their transactions.
func (p *partial) choose(lim Limits, seed uint64) {
	var many []*candidate
	for _, c := range p.found {
		switch {
		case c.own:
			// Own candidates and their transactions' are always tested:
			// they decide the own groups.
			for _, d := range p.txMates(c) {
				p.ask(d)
				d.entry = true
			}
		case len(c.heights) >= 2:
			many = append(many, c)
		}
	}
	slices.SortFunc(many, func(a, b *candidate) int {
		if d := cmp.Compare(len(b.heights), len(a.heights)); d != 0 {
			return d
		}
		return bytes.Compare(a.script, b.script)
	})
	budget := lim.MaxQueries
	for i, c := range many {
		if c.entry {
			continue
		}
		tx := p.txMates(c)
		if len(tx) > budget {
			p.truncated = len(many) - i
			p.warnings = append(p.warnings, fmt.Sprintf("%d candidates seen in two or more fetched blocks were left untested (more than %d queries): they are taken to match nothing, which only raises the probabilities", p.truncated, lim.MaxQueries))
			break
		}
		for _, d := range tx {
			p.ask(d)
			d.entry = true
			budget--
		}
	}
	var singles []*candidate
	for _, c := range p.found { // in the order found, so that the sample is the same every run
		if !c.entry && len(c.heights) == 1 {
			singles = append(singles, c)
		}
	}
	p.pool = slices.Clone(singles)
	if len(singles) > lim.MaxSingles {
		rng := rand.New(rand.NewPCG(seed, 0x6c65616b))
		rng.Shuffle(len(singles), func(i, j int) { singles[i], singles[j] = singles[j], singles[i] })
		singles = singles[:lim.MaxSingles]
	}
	p.sample = singles
	for _, c := range singles {
		p.ask(c)
		for i, h := range c.heights {
			for _, tx := range c.txs[i] {
				sib := p.txCands(h, tx)
				if len(sib) > maxSiblings {
					c.bigTx = true
					continue
				}
				for _, s := range sib {
					p.ask(s)
				}
			}
		}
	}
}

// txMates is c and, transitively, every candidate not yet an entry that
// shares a fetched transaction with it.
func (p *partial) txMates(c *candidate) []*candidate {
	seen := map[*candidate]bool{c: true}
	out := []*candidate{c}
	for i := 0; i < len(out); i++ {
		d := out[i]
		for j, h := range d.heights {
			for _, tx := range d.txs[j] {
				for _, e := range p.txCands(h, tx) {
					if !seen[e] && !e.entry {
						seen[e] = true
						out = append(out, e)
					}
				}
			}
		}
	}
	return out
}

// ask makes c a query.
func (p *partial) ask(c *candidate) {
	if c.query < 0 {
		c.query = len(p.queries)
		p.queries = append(p.queries, c)
	}
}

// test tests the queries against each held filter of a height scanned
// and not fetched, on workers goroutines; a height whose filter is not
// held (or does not decode) is untested. A query stops being tested once
// it matches at no view (a kill, see liveness): further appearances
// cannot make it match, and the report reads nothing else of a candidate
// that matches nowhere; every held filter is still read and decoded, to
// know which are untested. The heights nearest the fetched ones go first,
// since a candidate's appearances cluster in time, in rounds that grow
// from 8 heights, the queries still alive taken again after each.
func (p *partial) test(fs FilterSource, views []View, workers int) {
	var heights []int32
	for i := range p.scanned {
		if p.scanned[i] && !p.fetched[i] {
			heights = append(heights, p.first+int32(i))
		}
	}
	p.nearestFirst(heights)
	lv := p.newLiveness(views)
	type hit struct {
		h int32
		q int
	}
	var (
		mu   sync.Mutex
		hits []hit
		bad  int
	)
	var alive []int
	var scripts [][]byte
	for done, round := 0, 8; done < len(heights); done, round = done+round, 2*round {
		alive, scripts = alive[:0], scripts[:0]
		for q, c := range p.queries {
			if lv.alive(q) {
				alive = append(alive, q)
				scripts = append(scripts, c.script)
			}
		}
		var wg sync.WaitGroup
		next := make(chan int32)
		var found []hit
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var dst []bool
				var mine []hit
				var missing []int32
				nbad := 0
				for h := range next {
					var nbytes []byte
					var key [16]byte
					ok := fs != nil
					if ok {
						nbytes, key, ok = fs.Filter(h)
					}
					var f *gcs.Filter
					if ok {
						var err error
						if f, err = gcs.DecodeBasic(nbytes); err != nil {
							ok = false
							nbad++
						}
					}
					if !ok {
						missing = append(missing, h)
						continue
					}
					dst = f.MatchEach(key, scripts, dst)
					for i, m := range dst {
						if m {
							mine = append(mine, hit{h, alive[i]})
						}
					}
				}
				mu.Lock()
				found = append(found, mine...)
				bad += nbad
				for _, h := range missing {
					p.untested[h-p.first] = true
				}
				mu.Unlock()
			}()
		}
		for _, h := range heights[done:min(done+round, len(heights))] {
			next <- h
		}
		close(next)
		wg.Wait()
		for _, x := range found {
			lv.kill(x.q, x.h)
		}
		hits = append(hits, found...)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if d := cmp.Compare(a.h, b.h); d != 0 {
			return d
		}
		return cmp.Compare(a.q, b.q)
	})
	for _, x := range hits {
		c := p.queries[x.q]
		c.extra = append(c.extra, x.h)
	}
	if bad > 0 {
		p.warnings = append(p.warnings, fmt.Sprintf("%d held filter(s) did not decode: their blocks are untested", bad))
	}
}

// nearestFirst orders heights by their distance to the nearest fetched
// height, then by height.
func (p *partial) nearestFirst(heights []int32) {
	n := len(p.fetched)
	dist := make([]int32, n)
	last := int32(-1 << 30)
	for i := range n {
		if p.fetched[i] {
			last = int32(i)
		}
		dist[i] = int32(i) - last
	}
	last = 1 << 30
	for i := n - 1; i >= 0; i-- {
		if p.fetched[i] {
			last = int32(i)
		}
		dist[i] = min(dist[i], last-int32(i))
	}
	slices.SortFunc(heights, func(a, b int32) int {
		if d := cmp.Compare(dist[a-p.first], dist[b-p.first]); d != 0 {
			return d
		}
		return cmp.Compare(a, b)
	})
}

// liveness tracks, per query and view, whether the query can still match
// at the view, as matches decides: it cannot once one of its appearances
// the view scanned is one the view did not fetch, or when the view
// scanned none of its fetched appearances. The client's own scripts are
// always alive (they are few, and decide the own groups).
type liveness struct {
	p      *partial
	scans  [][]bool // by view, then height - first
	dead   []bool   // by query*views + view
	live   []int    // by query, the views where it is alive
	nviews int
}

func (p *partial) newLiveness(views []View) *liveness {
	lv := &liveness{p: p, nviews: len(views), dead: make([]bool, len(p.queries)*len(views)), live: make([]int, len(p.queries))}
	n := len(p.scanned)
	for i := range views {
		s := newViewSet(&views[i])
		sc := make([]bool, n)
		for h := range n {
			sc[h] = s.scans(p.first + int32(h))
		}
		lv.scans = append(lv.scans, sc)
		for q, c := range p.queries {
			if c.own || p.matchesFetched(c, s) {
				lv.live[q]++
			} else {
				lv.dead[q*len(views)+i] = true
			}
		}
	}
	return lv
}

// matchesFetched reports whether c can match at the view by its fetched
// appearances: each of those the view scanned it fetched, and it scanned
// one.
func (p *partial) matchesFetched(c *candidate, s *viewSet) bool {
	k := 0
	for _, h := range c.heights {
		if s.scans(h) {
			if !s.fetched[h] {
				return false
			}
			k++
		}
	}
	return k > 0
}

func (lv *liveness) alive(q int) bool { return lv.live[q] > 0 }

// kill records that query q appears at height h, scanned and not
// fetched.
func (lv *liveness) kill(q int, h int32) {
	if lv.p.queries[q].own {
		return
	}
	for v := range lv.nviews {
		if i := q*lv.nviews + v; !lv.dead[i] && lv.scans[v][h-lv.p.first] {
			lv.dead[i] = true
			lv.live[q]--
		}
	}
}

// representatives are, per view, the first untested height it scanned:
// a candidate other than the client's own is taken to appear at each of
// them, so that it matches in no view that scanned an untested height.
// The client's own scripts need no such height: every scanned filter was
// matched against them, and a block whose filter held one was fetched.
func (p *partial) representatives(views []View) {
	seen := map[int32]bool{}
	for i := range views {
		if h, ok := p.firstUntested(&views[i]); ok && !seen[h] {
			seen[h] = true
			p.rep = append(p.rep, h)
		}
	}
	slices.Sort(p.rep)
	if len(p.rep) > 0 {
		n := 0
		for _, u := range p.untested {
			if u {
				n++
			}
		}
		p.warnings = append(p.warnings, fmt.Sprintf("%d scanned block(s) not fetched have no filter held: candidates are taken to appear there, which only raises the probabilities", n))
	}
}

// firstUntested is the first untested height the view scanned.
func (p *partial) firstUntested(v *View) (int32, bool) {
	best, found := int32(0), false
	for _, r := range v.Scanned {
		for h := max(r.From, p.first); h <= r.To && (!found || h < best); h++ {
			if p.untested[h-p.first] {
				best, found = h, true
				break
			}
		}
	}
	return best, found
}

// conservative reports whether a view rests on something untested.
func (p *partial) conservative(v *View) bool {
	_, untested := p.firstUntested(v)
	return untested || p.truncated > 0 || slices.ContainsFunc(p.sample, func(c *candidate) bool { return c.bigTx })
}

// viewSet is a view's scanned ranges and fetched heights, to ask of a
// height whether the view scanned it and whether it fetched it.
type viewSet struct {
	fetched map[int32]bool
	ranges  []HeightRange
}

func newViewSet(v *View) *viewSet {
	s := &viewSet{fetched: map[int32]bool{}, ranges: v.Scanned}
	for _, h := range v.Fetched {
		s.fetched[h] = true
	}
	return s
}

// scans reports whether the view scanned height h.
func (s *viewSet) scans(h int32) bool {
	if s.fetched[h] {
		return true
	}
	for _, r := range s.ranges {
		if h >= r.From && h <= r.To {
			return true
		}
	}
	return false
}

// matches reports whether candidate c matches at the view: each of its
// appearances in the view's scanned set fetched by the view, an
// untested height it scanned counting as an appearance for another's.
func (p *partial) matches(c *candidate, s *viewSet, untested bool) bool {
	if c.query < 0 && !c.own {
		return true // untested beyond MaxQueries: taken to match (conservative for riding)
	}
	if untested && !c.own || !p.matchesFetched(c, s) {
		return false
	}
	for _, h := range c.extra {
		if s.scans(h) {
			return false
		}
	}
	return true
}

// estimateSingles estimates, for a view, the chance matches of one
// appearance that ride in no other match's transaction, from the
// sample: the share of the sampled singles whose block the view fetched
// that match there alone, times all such singles, at its Wilson 95%
// interval (exact when the sample holds every single).
func (p *partial) estimateSingles(v *View) {
	s := newViewSet(v)
	_, untested := p.firstUntested(v)
	all := 0 // singles of the fetched blocks whose block the view fetched
	for _, c := range p.pool {
		if s.fetched[c.heights[0]] {
			all++
		}
	}
	n, alone := 0, 0
	for _, c := range p.sample {
		if !s.fetched[c.heights[0]] {
			continue
		}
		n++
		if c.bigTx || !p.matches(c, s, untested) || p.rides(c, s, untested) {
			continue
		}
		alone++
	}
	if n == 0 {
		return
	}
	if n == all {
		x := float64(alone)
		p.singles[v.ID] = Estimate{Count: x, Low: x, High: x}
		return
	}
	lo, hi := model.Wilson(alone, n)
	p.singles[v.ID] = Estimate{Count: float64(all) * float64(alone) / float64(n), Low: float64(all) * lo, High: float64(all) * hi}
}

// rides reports whether the sampled single c rides in other matches'
// transactions at the view, as the attack's grouping decides: each of
// its transactions holds another match, and at most maxTxMatches.
func (p *partial) rides(c *candidate, s *viewSet, untested bool) bool {
	for i, h := range c.heights {
		for _, tx := range c.txs[i] {
			others, all := 0, 0
			for _, d := range p.txCands(h, tx) {
				if p.matches(d, s, untested) {
					all++
					if d != c {
						others++
					}
				}
			}
			if others == 0 || all > maxTxMatches {
				return false
			}
		}
	}
	return true
}

// isOwn labels the client's own candidates.
func (p *partial) isOwn(c string) bool { return p.own[c] }

// isDecoy labels the candidates whose blocks the client fetched on
// purpose (Input.Decoys).
func (p *partial) isDecoy(c string) bool { return p.decoy[c] }

// source is the partial index as a Source: the entries in candidate
// order, each with its fetched appearances, the heights whose held filter
// holds it, and (for another's) the views' first untested heights.
func (p *partial) source() Source {
	hd := &universe.IndexHeader{Version: universe.IndexVersion, First: p.first, Hashes: make([]chainhash.Hash, int(p.last-p.first)+1)}
	return &partialSource{hd: hd, p: p}
}

type partialSource struct {
	hd   *universe.IndexHeader
	p    *partial
	next int
}

func (s *partialSource) Header() *universe.IndexHeader { return s.hd }

func (s *partialSource) Next() (*universe.IndexEntry, error) {
	if s.next == len(s.p.entries) {
		return nil, io.EOF
	}
	c := s.p.entries[s.next]
	s.next++
	e := &universe.IndexEntry{Candidate: c.name}
	add := func(h int32, txs []uint32) {
		e.Heights = append(e.Heights, h)
		e.Txs = append(e.Txs, txs)
	}
	extra := c.extra
	if !c.own {
		extra = append(slices.Clone(extra), s.p.rep...)
		slices.Sort(extra)
		extra = slices.Compact(extra)
	}
	i, j := 0, 0
	for i < len(c.heights) || j < len(extra) {
		switch {
		case j == len(extra) || i < len(c.heights) && c.heights[i] < extra[j]:
			add(c.heights[i], c.txs[i])
			i++
		case i == len(c.heights) || extra[j] < c.heights[i]:
			add(extra[j], []uint32{})
			j++
		default: // a fetched height cannot be untested or tested
			add(c.heights[i], c.txs[i])
			i, j = i+1, j+1
		}
	}
	return e, nil
}
