package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Shape of the BIP 157 side.
const (
	// bip158M is BIP 158's false-positive parameter M: a block's basic
	// filter matches an item it lacks with probability 1/M.
	bip158M = 784931
	// walletReuseShare is the share of the payments to a BIP 157 wallet
	// that pay one of its scripts again (in the reuse regime, reuseShare
	// of the regime).
	walletReuseShare = 0.2
	// payerSpendShare is the share of the payers' last change outputs
	// spent later.
	payerSpendShare = 0.5
	// batchedShare is the share of payments that pay several of the
	// wallet's scripts at once, in the payments regime, and batchedMax
	// their most scripts.
	batchedShare = 0.3
	batchedMax   = 20
	// BIP 157 batch sizes: filter headers and filters asked per message,
	// and the blocks of one getdata as a client sends them.
	cfHeadersBatch = 2000
	cfiltersBatch  = 1000
	getDataBatch   = 16
)

// fetchSim is the BIP 157 side of a simulation: its wallets' payments on
// the chain, and their sessions' downloads.
type fetchSim struct {
	s        *Scenario
	opts     FetchOptions
	rng      *rand.Rand
	wallets  []*fetchWalletSim
	sessions []*fetchSessionSim
	labels   *FetchLabels
}

type fetchWalletSim struct {
	label   FetchWallet
	scripts []uint32
	group   int
	// each payer's unspent change, and in the reuse regime the one
	// script its change goes back to
	change      []*coin
	payerScript []uint32
	payees      []uint32
	payerChange []uint32
	// covers are its client's cover scripts (the covered regime).
	covers []uint32
}

// fetchSessionSim is a session and the wallets it scans for.
type fetchSessionSim struct {
	FetchSession
	members []*fetchWalletSim
}

func newFetchSim(s *Scenario) *fetchSim {
	return &fetchSim{s: s, opts: s.opts.Fetch, rng: newRand(s.opts.Seed, streamFetch)}
}

// schedule draws each wallet's birthday and payments: each payment comes
// from one of its payers, who spends the change of the previous one (in
// a clustered chain, the payments come in bursts of neighbouring blocks).
func (f *fetchSim) schedule() {
	o, spec, blocks := f.opts, f.s.spec, f.s.opts.Chain.Blocks
	for i := range o.Wallets {
		w := &fetchWalletSim{group: i, label: FetchWallet{ID: walletID("f", i, o.Wallets),
			Birth: int32(f.rng.IntN(blocks / 4)), Scripts: []string{}, PayerChange: []string{}, Payees: []string{}}}
		payers := uniformInt(f.rng, o.Payers)
		w.change = make([]*coin, payers)
		w.payerScript = make([]uint32, payers)
		for p := range w.payerScript {
			w.payerScript[p] = math.MaxUint32
		}
		n := uniformInt(f.rng, o.Payments)
		if spec.heavyPayments {
			n = paretoInt(f.rng, o.Payments)
		}
		heights := f.paymentHeights(w.label.Birth, n, blocks)
		last := map[int]int{}
		by := make([]int, len(heights))
		for j := range heights {
			by[j] = f.rng.IntN(payers)
			last[by[j]] = j
		}
		for j, h := range heights {
			batch := 1
			if spec.batchPayments && f.rng.Float64() < batchedShare {
				batch = 2 + f.rng.IntN(batchedMax-1)
			}
			f.s.at(h, chainEvent{kind: evPayment, wallet: i, payer: by[j], last: last[by[j]] == j, payment: j, batch: batch})
		}
		f.wallets = append(f.wallets, w)
	}
	if spec.sharedClient {
		for i := 0; i < len(f.wallets); {
			size := 2 + f.rng.IntN(2)
			for j := i; j < min(i+size, len(f.wallets)); j++ {
				f.wallets[j].group = i
			}
			i += size
		}
	}
}

// paymentHeights draws n sorted heights from birth to the tip, in a
// clustered chain in bursts around one to three heights.
func (f *fetchSim) paymentHeights(birth int32, n, blocks int) []int32 {
	out := make([]int32, n)
	span := blocks - int(birth)
	if f.s.spec.clustered {
		centers := make([]int32, 1+f.rng.IntN(3))
		for i := range centers {
			centers[i] = birth + int32(f.rng.IntN(span))
		}
		for j := range out {
			c := centers[f.rng.IntN(len(centers))]
			out[j] = min(int32(blocks-1), c+int32(math.Floor(-math.Log1p(-f.rng.Float64())*2)))
		}
	} else {
		for j := range out {
			out[j] = birth + int32(f.rng.IntN(span))
		}
	}
	slices.Sort(out)
	return out
}

// run makes the transaction of a BIP 157 event.
func (f *fetchSim) run(e chainEvent) {
	switch e.kind {
	case evPayment:
		f.payment(e)
	case evWalletSpend:
		f.walletSpend(e)
	case evPayerSpend:
		b := f.s.chain
		b.payOthers([]coin{e.coin}, 1)
	}
}

// payment is a payer's transaction to wallet e.wallet: it spends the
// payer's last change (or a background output), pays the wallet one or
// several scripts (new, or one it has), and makes the payer's new change
// beside the payment (in the reuse regime, to the payer's one change
// script).
func (f *fetchSim) payment(e chainEvent) {
	b, spec := f.s.chain, f.s.spec
	w := f.wallets[e.wallet]
	var ins []coin
	if prev := w.change[e.payer]; prev != nil {
		ins = []coin{*prev}
	} else {
		ins = b.funding()
	}
	reuse := walletReuseShare
	if spec.reuse > 0 {
		reuse = spec.reuse
	}
	var outs []uint32
	for range e.batch {
		if len(w.scripts) > 0 && f.rng.Float64() < reuse {
			outs = append(outs, w.scripts[f.rng.IntN(len(w.scripts))])
		} else {
			outs = append(outs, f.walletScript(w))
		}
	}
	change := w.payerScript[e.payer]
	if change == math.MaxUint32 || !spec.payerReuse {
		change = b.tracked(b.fakeScript())
		w.payerChange = append(w.payerChange, change)
		if spec.payerReuse {
			w.payerScript[e.payer] = change
		}
	}
	coins := b.tx(ins, append(outs, change))
	cc := coins[len(coins)-1]
	w.change[e.payer] = &cc
	if e.last && f.rng.Float64() < payerSpendShare {
		if at, ok := f.s.later(f.rng, b.h); ok {
			f.s.at(at, chainEvent{kind: evPayerSpend, coin: cc})
		}
	}
	for _, c := range coins[:len(coins)-1] {
		if f.rng.Float64() < spec.spendShare {
			if at, ok := f.s.later(f.rng, b.h); ok {
				f.s.at(at, chainEvent{kind: evWalletSpend, wallet: e.wallet, coin: c})
			}
		}
	}
}

// walletScript makes a new script of wallet w.
func (f *fetchSim) walletScript(w *fetchWalletSim) uint32 {
	b := f.s.chain
	id := b.tracked(b.fakeScript())
	w.scripts = append(w.scripts, id)
	return id
}

// walletSpend is the wallet's own transaction: it spends e.coin, pays
// someone new and keeps a new change script.
func (f *fetchSim) walletSpend(e chainEvent) {
	b := f.s.chain
	w := f.wallets[e.wallet]
	payee := b.tracked(b.fakeScript())
	w.payees = append(w.payees, payee)
	coins := b.tx([]coin{e.coin}, []uint32{payee, f.walletScript(w)})
	b.pool = append(b.pool, coins[0])
}

// makeLabels draws every session's downloads and labels the chain.
func (f *fetchSim) makeLabels() {
	o, b := f.opts, f.s.chain
	blocks := f.s.opts.Chain.Blocks
	f.labels = &FetchLabels{Network: params.Name, FirstHeight: 0, BlockCount: blocks, CandidateCount: f.s.indexCandidates(),
		Wallets: []FetchWallet{}, Sessions: []FetchSession{}}
	tip := int32(blocks - 1)
	for _, w := range f.wallets {
		for _, id := range w.scripts {
			w.label.Scripts = append(w.label.Scripts, b.scripts[id].name)
		}
		for _, id := range w.payerChange {
			w.label.PayerChange = append(w.label.PayerChange, b.scripts[id].name)
		}
		for _, id := range w.payees {
			w.label.Payees = append(w.label.Payees, b.scripts[id].name)
		}
		if f.s.spec.covered {
			f.newCovers(w, tip)
		}
		for k := range uniformInt(f.rng, o.Sessions) {
			if f.s.spec.covered && o.FreshCovers && k > 0 {
				f.newCovers(w, tip)
			}
			from := w.label.Birth
			if f.s.spec.shrink && k > 0 {
				from += int32(f.rng.IntN(int(tip-from) + 1))
			}
			members := []*fetchWalletSim{w}
			if f.s.spec.sharedClient && f.rng.IntN(3) == 0 {
				members = f.groupOf(w)
				for _, m := range members {
					from = min(from, m.label.Birth)
				}
			}
			f.sessions = append(f.sessions, f.walletSession(members, from, tip))
		}
		f.labels.Wallets = append(f.labels.Wallets, w.label)
	}
	for range o.Noise {
		from := int32(f.rng.IntN(blocks / 2))
		s := &fetchSessionSim{FetchSession: FetchSession{Kind: KindNoise, ScannedFrom: from, ScannedTo: tip,
			WalletHeights: []int32{}, FalsePositiveHeights: []int32{}, Scripts: []string{}}}
		s.DecoyHeights = f.randomHeights(from, tip, 2*uniformInt(f.rng, o.Payments), map[int32]bool{})
		f.sessions = append(f.sessions, s)
	}
	f.rng.Shuffle(len(f.sessions), func(i, j int) { f.sessions[i], f.sessions[j] = f.sessions[j], f.sessions[i] })
	for i, s := range f.sessions {
		s.ID = fmt.Sprintf("simf%d-%d", f.s.opts.Seed, i+1)
		host := fmt.Sprintf("127.1.%d.%d", i/250%250, i%250+1)
		if len(s.members) > 0 && f.s.spec.sharedClient {
			g := s.members[0].group
			host = fmt.Sprintf("127.3.%d.%d", g/250%250, g%250+1)
		}
		s.Client = fmt.Sprintf("%s:%d", host, 10000+f.rng.IntN(50000))
		f.labels.Sessions = append(f.labels.Sessions, s.FetchSession)
	}
}

// newCovers draws wallet w's covers over its birth..tip and adds them to
// its label.
func (f *fetchSim) newCovers(w *fetchWalletSim, tip int32) {
	b := f.s.chain
	covers, links, missing := f.drawCovers(w, w.label.Birth, tip, f.opts.CoverTarget, f.rng.Uint64())
	w.covers = covers
	w.label.CoversMissing += missing
	for _, id := range covers {
		w.label.Covers = append(w.label.Covers, b.scripts[id].name)
	}
	for _, id := range links {
		w.label.CoverMates = append(w.label.CoverMates, b.scripts[id].name)
	}
}

// groupOf returns the wallets behind w's client address, w first.
func (f *fetchSim) groupOf(w *fetchWalletSim) []*fetchWalletSim {
	out := []*fetchWalletSim{w}
	for _, x := range f.wallets {
		if x != w && x.group == w.group {
			out = append(out, x)
		}
	}
	return out
}

// walletSession is a session of the wallets members that scans from..to:
// it fetches the blocks of their scripts there, the blocks whose BIP 158
// filter matches its watch list by chance, and decoys.
func (f *fetchSim) walletSession(members []*fetchWalletSim, from, to int32) *fetchSessionSim {
	b := f.s.chain
	s := &fetchSessionSim{members: members, FetchSession: FetchSession{Kind: KindWallet, Wallet: members[0].label.ID,
		ScannedFrom: from, ScannedTo: to, Scripts: []string{}}}
	own := map[int32]bool{}
	watched := 0
	for _, m := range members {
		if len(members) > 1 {
			s.Wallets = append(s.Wallets, m.label.ID)
		}
		watched += len(m.scripts) + len(m.covers) + f.s.spec.lookahead
		for _, id := range m.scripts {
			in := false
			for _, h := range b.scripts[id].heights {
				if h >= from && h <= to {
					own[h], in = true, true
				}
			}
			if in {
				s.Scripts = append(s.Scripts, b.scripts[id].name)
			}
		}
	}
	s.WalletHeights = sortedHeights(own)
	pfp := -math.Expm1(float64(watched) * math.Log1p(-1.0/bip158M))
	taken := heightSet(s.WalletHeights)
	for _, m := range members {
		s.CoverHeights = append(s.CoverHeights, f.coverHeights(m.covers, from, to, taken)...)
	}
	slices.Sort(s.CoverHeights)
	s.FalsePositiveHeights = f.chanceHeights(from, to, pfp, taken)
	s.DecoyHeights = f.randomHeights(from, to, f.opts.Decoys, taken)
	return s
}

// chanceHeights draws the blocks of from..to whose filter matches by
// chance, each with probability p, skipping from one to the next by a
// geometric draw; it marks them taken and returns those not taken
// before, in order.
func (f *fetchSim) chanceHeights(from, to int32, p float64, taken map[int32]bool) []int32 {
	out := []int32{}
	if !(p > 0) {
		return out
	}
	for h := int64(from) - 1; ; {
		h += 1 + int64(math.Floor(math.Log1p(-f.rng.Float64())/math.Log1p(-p)))
		if h > int64(to) {
			return out
		}
		if !taken[int32(h)] {
			taken[int32(h)] = true
			out = append(out, int32(h))
		}
	}
}

// randomHeights draws up to n heights of from..to not yet taken, marks
// them taken and returns them in order.
func (f *fetchSim) randomHeights(from, to int32, n int, taken map[int32]bool) []int32 {
	got := map[int32]bool{}
	for tries := 0; len(got) < n && tries < 100*n; tries++ {
		h := from + int32(f.rng.IntN(int(to-from)+1))
		if !taken[h] {
			taken[h], got[h] = true, true
		}
	}
	return sortedHeights(got)
}

func heightSet(hs []int32) map[int32]bool {
	m := make(map[int32]bool, len(hs))
	for _, h := range hs {
		m[h] = true
	}
	return m
}

func sortedHeights(set map[int32]bool) []int32 {
	out := make([]int32, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}
