package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// defaultScanFPRate is --fprate's default, the rate a --privacy-target's
// cost is set against.
const defaultScanFPRate = 0.0001

// bip37Shape is what the model needs to know of a watch list's BIP 37
// filter, counted as client.NewWatchFilter builds it: the scripts a node
// can test (outpoint items are not scripts), the elements inserted and
// the element count the filter is sized for. The filter's room beyond
// its elements is filled with random elements to its rate, so it matches
// as a filter holding as many elements as it is sized for: the model
// inserts that many.
type bip37Shape struct {
	scripts uint32
	// perScript is the elements the model inserts per script: the
	// sizing count divided by the scripts, rounded down. The model
	// inserts scripts·perScript elements, at most scripts-1 fewer than
	// the filled filter holds: its P_h is then at most a hair above the
	// filter's.
	perScript uint32
	inserted  uint64
	sizing    uint32
}

// newBIP37Shape counts the filter's elements of a watch list.
func newBIP37Shape(watch []client.WatchItem) bip37Shape {
	var s bip37Shape
	for _, it := range watch {
		if it.IsOutPoint {
			s.inserted++
			continue
		}
		s.scripts++
		s.inserted += uint64(len(bip37.ScriptElements(it.Script)))
	}
	s.sizing = uint32(s.inserted) + client.WatchFilterHeadroom*uint32(len(watch))
	if s.scripts > 0 {
		s.perScript = max(1, s.sizing/s.scripts)
	}
	return s
}

// params are the model's parameters for this filter, sized by rule at
// rate, held b times by one peer, among universe candidates.
func (s bip37Shape) params(rule model.SizingRule, rate float64, universe uint64, b uint32) model.Params {
	modelled := s.scripts * s.perScript
	return model.Params{
		Addresses: s.scripts, ElementsPerAddress: s.perScript, ExtraElements: s.sizing - modelled,
		FPRate: rate, UniverseSize: universe, Filters: b, Sizing: rule.OrCore(),
	}
}

// bip37Plan is how a BIP 37 scan's filter rate was chosen, and what the
// leak report needs of the watch list.
type bip37Plan struct {
	shape bip37Shape
	// watch is the watch list, sizing the rule that sizes its filter.
	watch    []client.WatchItem
	sizing   model.SizingRule
	rate     float64
	rateFrom string // the flag that set the rate
	universe uint64
	// universeFrom says where the universe size came from.
	universeFrom string
	// target is --privacy-target (0: none); maxFilters the filters one
	// peer may receive (1 + --max-reloads), which the rate is sized for.
	target     float64
	maxFilters uint32
	// advice is the advisor's row the rate comes from; noReload is true
	// when the rate is that for one filter, raised to noReloadRate if
	// below it, so that the peer gets one filter.
	advice   *model.AdviceRow
	noReload bool
}

// bip37LeakFlags are the flags of the BIP 37 leak report and sizing.
type bip37LeakFlags struct {
	universe uint64
	sizing   bip37.Sizing
}

func (f *bip37LeakFlags) register(fs *pflag.FlagSet) {
	fs.Uint64Var(&f.universe, "universe-size", model.DefaultParams().UniverseSize,
		"bip37: scripts `U` a node tests against the filter, the wallet's included, for the leak report and --privacy-target (the default is privacy model's, a round figure for mainnet; Gervais et al. used 3.2e7)")
	fs.Var(sizingValue{&f.sizing}, "sizing",
		"bip37: sizing rule of the filter, for --fprate and --privacy-target: core (Bitcoin Core) or bitcoinj (bitcoinj, python-bitcoinlib: floating-point hash-function count)")
}

// planBIP37Rate checks --fprate, --privacy-target, --universe-size and
// --max-reloads together and picks the filter's rate: --fprate's, or
// with --privacy-target the advisor's, for --sizing's rule, sized so that a peer holding every filter the scan may send it keeps
// E[P_h(N)] below the target.
func (fl *scanFlags) planBIP37Rate(flags *pflag.FlagSet, watch []client.WatchItem) (*bip37Plan, error) {
	if fl.mode != "bip37" {
		if flags.Changed("universe-size") {
			return nil, badInput("--universe-size needs --mode bip37 (a bip157 scan's leak counts the scripts of the blocks it fetched)")
		}
		if flags.Changed("sizing") {
			return nil, badInput("--sizing needs --mode bip37 (it sizes the Bloom filter)")
		}
		return nil, nil
	}
	if flags.Changed("fprate") && fl.privacyTarget != 0 {
		// --privacy-target 0 is none: the rate is --fprate's.
		return nil, badInput("--fprate %v and --privacy-target %v: give one: the target chooses the rate", fl.fpRate, fl.privacyTarget)
	}
	p := &bip37Plan{shape: newBIP37Shape(watch), watch: watch, sizing: fl.leak.sizing.OrCore(), rate: fl.fpRate, rateFrom: "--fprate", universe: fl.leak.universe,
		universeFrom: "--universe-size", target: fl.privacyTarget, maxFilters: 1}
	if !flags.Changed("universe-size") {
		p.universeFrom = "--universe-size default"
	}
	if !flags.Changed("fprate") {
		p.rateFrom = "--fprate default"
	}
	if fl.maxReloads > 0 {
		p.maxFilters += uint32(fl.maxReloads)
	}
	if p.universe <= uint64(p.shape.scripts) {
		return nil, badInput("--universe-size %d: the node tests the watch list's %s among the universe: want more than %d", p.universe, plural(p.shape.scripts, "script"), p.shape.scripts)
	}
	if p.target == 0 {
		return p, nil
	}
	if p.shape.scripts == 0 {
		return nil, badInput("--privacy-target %v: the watch list holds outpoints only, and the model speaks of scripts: give --fprate", p.target)
	}
	return p, p.advise()
}

// noReloadRate is the smallest rate whose filters the client never
// reloads: it reloads a filter that matches more than ReloadFactor times
// its rate of the transactions, which a rate of 1/ReloadFactor or more
// cannot, however the node marks them; the peer then gets one filter.
const noReloadRate = 1.0 / client.ReloadFactor

// advise asks the advisor for the rate that meets the target: the
// advisor's for every filter the scan may send, or, when cheaper, its
// rate for one filter raised to noReloadRate, which keeps the scan to one.
func (p *bip37Plan) advise() error {
	rowB, err := p.adviseFor(p.maxFilters)
	if err != nil {
		return err
	}
	p.advice, p.rate, p.rateFrom = &rowB, rowB.FPRate, "--privacy-target"
	if p.maxFilters > 1 {
		row1, err := p.adviseFor(1)
		if err != nil {
			return err
		}
		r := max(row1.FPRate, noReloadRate)
		bytes, k := p.sizing.Size(p.shape.sizing, r)
		if row1.Reachable && bytes > 0 && k > 0 && (!rowB.Reachable || r < p.rate) {
			p.advice, p.rate, p.noReload = &row1, r, true
			return nil
		}
	}
	if !rowB.Reachable {
		return badInput("--privacy-target %v: no filter %s's sizing builds for %s keeps E[P_h(N)] below it for a peer holding %s among %s: the most private, at rate %s, leaves %.3g (raise the target, lower --max-reloads, check --universe-size or try the other --sizing)",
			p.target, p.sizing.Implementation(), plural(p.shape.scripts, "script"), plural(p.maxFilters, "filter"), plural(p.universe, "script"), rateArg(rowB), rowB.PHAllExact)
	}
	return nil
}

// adviseFor is the advisor's row for a peer holding b filters.
func (p *bip37Plan) adviseFor(b uint32) (model.AdviceRow, error) {
	a, err := model.Advise(model.AdviceParams{Model: p.shape.params(p.sizing, 0, p.universe, b), TargetPHAll: p.target})
	if err != nil {
		var fe *model.FieldError
		if errors.As(err, &fe) && fe.Field == "universe_size" {
			return model.AdviceRow{}, badInput("--universe-size %d: %s", p.universe, fe.Msg)
		}
		return model.AdviceRow{}, badInput("--privacy-target %v: %w", p.target, err)
	}
	if len(a.Rows) == 0 {
		return model.AdviceRow{}, badInput("--privacy-target %v: %s", p.target, a.Warnings[0])
	}
	return a.Rows[len(a.Rows)-1], nil
}

// bip37LeakJSON is the leak object of a bip37 scan: the model's P_h for
// the filters each peer received, as they were sent.
type bip37LeakJSON struct {
	Mode           string `json:"mode"`
	WatchedScripts uint32 `json:"watched_script_count"`
	// Filter is the filter the rate builds for the watch list, as the
	// model sizes it.
	Filter bip37FilterJSON `json:"bloom_filter"`
	// UniverseSize is U, the scripts the model's node tests (the
	// wallet's included), and UniverseFrom the flag it came from.
	UniverseSize uint64 `json:"universe_size"`
	UniverseFrom string `json:"universe_from"`
	// Target is --privacy-target's decision, null without it.
	Target *bip37TargetJSON `json:"privacy_target"`
	// Peers holds one entry per peer that received filters, passes
	// abandoned included; Collusion is all of them together (every
	// filter intersected, every outpoint sent in clear).
	Peers     []bip37PeerLeakJSON `json:"peers"`
	Collusion bip37PeerLeakJSON   `json:"collusion"`
	Warnings  []string            `json:"warnings"`
}

// bip37FilterJSON is the filter a bip37 scan's rate builds for the watch
// list.
type bip37FilterJSON struct {
	FPRate     float64 `json:"fp_rate"`
	FPRateFrom string  `json:"fp_rate_from"`
	// Sizing is the rule that sizes it, core or bitcoinj.
	Sizing    string `json:"sizing"`
	Bytes     uint32 `json:"filter_bytes"`
	HashFuncs uint32 `json:"hash_function_count"`
	// Elements is what the filter holds of the watch list,
	// SizingElements the count it is sized for (elements plus
	// client.WatchFilterHeadroom per watch item), whose room the client
	// fills with random elements to the rate, and ModelledElements what
	// the model inserts for them (scripts · sizing count per script,
	// rounded down).
	Elements         uint64 `json:"element_count"`
	ModelledElements uint64 `json:"modelled_element_count"`
	SizingElements   uint32 `json:"sizing_element_count"`
	// Pf is the chance that one element outside the filter matches, at
	// the modelled fill.
	Pf float64 `json:"false_positive_rate"`
}

// bip37TargetJSON is what --privacy-target decided and what it costs.
type bip37TargetJSON struct {
	Target float64 `json:"target"`
	// Filters is the filters one peer may receive, which the rate is
	// sized for: 1 + --max-reloads, or 1 when ReloadImpossible (a rate
	// of 1/client.ReloadFactor or more, whose filter the client never
	// reloads). PHAll is the model's E[P_h(N)] at the rate with them,
	// and PHAllMostFills what 95% of real filters stay below (the
	// advisor's, at its rate: a rate raised above it only lowers it).
	Filters          uint32  `json:"filter_count"`
	ReloadImpossible bool    `json:"reload_impossible"`
	PHAll            float64 `json:"p_h_all_exact"`
	PHAllMostFills   float64 `json:"p_h_all_95th_percentile"`
	// MinFilterRate is the least rate each filter's bits must give: a
	// filter below it is drawn again with another tweak.
	MinFilterRate float64 `json:"min_filter_false_positive_rate"`
	// Met is whether the filters sent kept E[P_h(N)] below the target
	// for every peer and for all of them together (the peers' entries).
	Met bool `json:"met"`
	// The cost: false-positive transactions per block of BlockTxs
	// transactions of TxElements elements each, at the rate chosen and
	// at --fprate's default, and those the scan received.
	BlockTxs          uint32  `json:"block_tx_count"`
	TxElements        uint32  `json:"tx_element_count"`
	DefaultRate       float64 `json:"default_false_positive_rate"`
	FPTxsPerBlock     float64 `json:"expected_false_positive_transactions_per_block"`
	DefaultFPTxsBlock float64 `json:"default_expected_false_positive_transactions_per_block"`
	Measured          int     `json:"false_positive_transaction_count"`
}

// bip37PeerLeakJSON is what the filters one peer, or the peers together,
// received reveal: the filter attack on them as sent (privacy/leak's
// Bloom: the chance another script matches every one of them, from their
// bits) and what the peer sent back.
type bip37PeerLeakJSON struct {
	// Address is the peer's, null for the collusion.
	Address *string `json:"address"`
	leak.BloomLeak
	// PH1Exact and PHAllExact are P_h(1) and P_h(N) averaged over the
	// binomial number of false positives (the advisor's figures). With
	// scripts revealed, P_h(N) is that of the others, the revealed ones
	// being known.
	PH1Exact   float64 `json:"p_h_1_exact"`
	PHAllExact float64 `json:"p_h_all_exact"`
	// Received are the filters received, in order.
	Received []bip37SentFilterJSON `json:"filters"`
	// FilterAdds counts the outpoints sent in clear (filteradd), and
	// RevealedScripts the watched scripts they name: the peer knows
	// those for certain.
	FilterAdds      int `json:"filteradd_outpoint_count"`
	RevealedScripts int `json:"revealed_script_count"`
	// MerkleBlocks and Txs are what the peer sent: merkle blocks, and
	// the transactions it sent as matches, false positives included
	// (FalsePositiveTxs).
	MerkleBlocks     int `json:"merkle_block_count"`
	Txs              int `json:"transaction_count"`
	FalsePositiveTxs int `json:"false_positive_transaction_count"`
	// Abandoned is true for a peer whose pass did not end the scan (it
	// failed, or the chain reorganized): it keeps what it received.
	Abandoned bool `json:"abandoned"`
}

// bip37SentFilterJSON is one filter as a peer received it.
type bip37SentFilterJSON struct {
	Bytes     int    `json:"filter_bytes"`
	HashFuncs uint32 `json:"hash_function_count"`
	Tweak     uint32 `json:"tweak"`
	// HashingRate is the chance an element outside it matches, from its
	// bits (model.HashingRate).
	HashingRate float64 `json:"false_positive_rate"`
}

// bip37Leak is the leak report of a bip37 scan: for every peer that
// received filters (res.BIP37Peers), the filter attack on them as sent,
// and on all of them together.
func (p *bip37Plan) bip37Leak(res *client.ScanResult, measuredFPs int) (*bip37LeakJSON, error) {
	r, err := model.Evaluate(p.shape.params(p.sizing, p.rate, p.universe, 1))
	if err != nil && p.shape.scripts > 0 {
		return nil, fmt.Errorf("the bip37 leak: %w", err)
	}
	out := &bip37LeakJSON{Mode: "bip37", WatchedScripts: p.shape.scripts, UniverseSize: p.universe, UniverseFrom: p.universeFrom,
		Peers: []bip37PeerLeakJSON{}, Warnings: []string{}}
	bytes, k := p.sizing.Size(p.shape.sizing, p.rate)
	out.Filter = bip37FilterJSON{FPRate: p.rate, FPRateFrom: p.rateFrom, Sizing: string(p.sizing), Bytes: bytes, HashFuncs: k,
		Elements: p.shape.inserted, ModelledElements: uint64(p.shape.scripts) * uint64(p.shape.perScript), SizingElements: p.shape.sizing}
	if p.shape.scripts == 0 {
		out.Warnings = append(out.Warnings, "the watch list holds outpoints only: the model's P_h speaks of scripts a node tests, so no figure is given")
		return out, nil
	}
	out.Filter.Pf = r.Pf
	all := client.BIP37Peer{}
	for _, sent := range res.BIP37Peers {
		out.Peers = append(out.Peers, p.peerLeak(orNull(sent.Address), sent))
		all.Filters = append(all.Filters, sent.Filters...)
		all.Added = append(all.Added, sent.Added...)
		all.AddedItems = append(all.AddedItems, sent.AddedItems...)
		all.MerkleBlocks += sent.MerkleBlocks
		all.Txs += sent.Txs
		all.FalsePositiveTxs += sent.FalsePositiveTxs
	}
	out.Collusion = p.peerLeak(nil, all)
	out.Warnings = append(out.Warnings, p.leakWarnings(out)...)
	if p.target != 0 {
		out.Target = p.targetCost(measuredFPs, out)
		if !out.Target.Met {
			out.Warnings = append(out.Warnings, fmt.Sprintf("privacy target %v not met: the filters sent leave E[P_h(N)] %.3g for the peers together (%s, %s sent in clear)",
				p.target, out.Collusion.PHAllExact, plural(out.Collusion.Filters, "filter"), plural(out.Collusion.RevealedScripts, "script")))
		}
	}
	return out, nil
}

// peerLeak is the filter attack on what one peer (or the peers together)
// received. The scripts named by outpoints sent in clear are known to
// it: P_h(N) is then that of the other scripts, 1 when none is left.
func (p *bip37Plan) peerLeak(addr *string, sent client.BIP37Peer) bip37PeerLeakJSON {
	n := p.shape.scripts
	v := bip37PeerLeakJSON{Address: addr, BloomLeak: leak.Bloom(sent.Filters, int(n), p.universe), Received: []bip37SentFilterJSON{},
		FilterAdds: len(sent.Added), RevealedScripts: p.revealed(sent.AddedItems),
		MerkleBlocks: sent.MerkleBlocks, Txs: sent.Txs, FalsePositiveTxs: sent.FalsePositiveTxs, Abandoned: sent.Abandoned}
	for _, f := range sent.Filters {
		v.Received = append(v.Received, bip37SentFilterJSON{Bytes: f.Size(), HashFuncs: f.HashFuncs(), Tweak: f.Tweak(), HashingRate: model.HashingRate(f.Bits(), f.HashFuncs())})
	}
	others := p.universe - uint64(n)
	v.PH1Exact, v.PHAllExact = model.Confidence(n, others, v.FalsePositiveRate)
	if hidden := n - uint32(v.RevealedScripts); v.RevealedScripts > 0 {
		v.PHAll, v.PHAllExact = 1, 1
		if hidden > 0 {
			v.PHAll = model.ProbAllReal(float64(hidden), v.ExpectedFalsePositives)
			_, v.PHAllExact = model.Confidence(hidden, others, v.FalsePositiveRate)
		}
	}
	return v
}

// revealed counts the watched scripts among the watch items items.
func (p *bip37Plan) revealed(items []int) int {
	scripts := map[string]bool{}
	for _, i := range items {
		if i >= 0 && i < len(p.watch) && !p.watch[i].IsOutPoint {
			scripts[string(p.watch[i].Script)] = true
		}
	}
	return len(scripts)
}

// leakWarnings say who holds what: the peers and their filters, scripts
// sent in clear, and a filter that matches far less than its rate.
func (p *bip37Plan) leakWarnings(l *bip37LeakJSON) []string {
	var w []string
	switch c := l.Collusion; {
	case len(l.Peers) > 1:
		w = append(w, fmt.Sprintf("%d peers received filters (passes abandoned for a failure or a reorganization included): each keeps what it received, and together they intersect %s",
			len(l.Peers), plural(c.Filters, "filter")))
	case len(l.Peers) == 1 && c.Filters == 1:
		w = append(w, fmt.Sprintf("the scan's filter went to one peer, %s (1 filter, never reloaded)", *l.Peers[0].Address))
	case len(l.Peers) == 1:
		w = append(w, fmt.Sprintf("every filter of the scan went to one peer, %s (%d filters: the first and each reload, with fresh tweaks)", *l.Peers[0].Address, c.Filters))
	}
	if c := l.Collusion; c.RevealedScripts > 0 {
		w = append(w, fmt.Sprintf("%s of the wallet went out in clear (filteradd, for the --flags update rule): %s %d of your %s to %s with certainty; --flags all keeps them inside the filter",
			plural(c.FilterAdds, "outpoint"), map[bool]string{true: "it names", false: "they name"}[c.FilterAdds == 1], c.RevealedScripts, plural(l.WatchedScripts, "script"),
			map[bool]string{true: "the peer", false: "the peers"}[len(l.Peers) == 1]))
	}
	for _, v := range l.Peers {
		if len(v.Received) > 0 && v.Received[0].HashingRate < p.rate/10 {
			w = append(w, fmt.Sprintf("the filter %s received matches an element outside it with probability %.3g, far below the rate %v: it is sized for %d elements (room for %d found outpoints per watch item) and holds far fewer, the watch list's %d and too few random ones, so it reveals more than the rate says",
				*v.Address, v.Received[0].HashingRate, p.rate, p.shape.sizing, client.WatchFilterHeadroom, p.shape.inserted))
			break
		}
	}
	return w
}

// filterFloor is the least rate, from its bits, each filter must match
// an element outside it at so that a peer holding sizedFor() of them
// keeps E[P_h(N)] below the target (client.BIP37Options.MinFilterRate):
// a filter whose elements collided in few bits tells more than the
// advisor's, which holds for most fills only. 0 without a target, or
// when no rate meets it.
func (p *bip37Plan) filterFloor() float64 {
	if p.target == 0 || p.shape.scripts == 0 {
		return 0
	}
	b := float64(p.sizedFor())
	others := p.universe - uint64(p.shape.scripts)
	meets := func(q float64) bool {
		_, phAll := model.Confidence(p.shape.scripts, others, math.Pow(q, b))
		return phAll < p.target
	}
	if !meets(1) {
		return 0
	}
	// Bisect on log q: P_h falls as q grows.
	lo, hi := math.Log(math.SmallestNonzeroFloat64), 0.0
	for range 80 {
		mid := (lo + hi) / 2
		if meets(math.Exp(mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Exp(hi)
}

// sizedFor is the filters one peer may receive, which the rate is sized
// for.
func (p *bip37Plan) sizedFor() uint32 {
	if p.noReload {
		return 1
	}
	return p.maxFilters
}

// targetCost is the decision of --privacy-target, its cost, and whether
// the filters sent met it (l's peers).
func (p *bip37Plan) targetCost(measured int, l *bip37LeakJSON) *bip37TargetJSON {
	t := &bip37TargetJSON{Target: p.target, Met: l.Collusion.PHAllExact < p.target, MinFilterRate: p.filterFloor(), Filters: p.sizedFor(), ReloadImpossible: p.noReload, BlockTxs: model.DefaultBlockTxs, TxElements: model.DefaultTxElements,
		DefaultRate: defaultScanFPRate, Measured: measured}
	if r, err := model.Evaluate(p.shape.params(p.sizing, p.rate, p.universe, t.Filters)); err == nil {
		t.PHAll = r.PHAllExact
	}
	if p.advice != nil {
		t.PHAllMostFills = p.advice.PHAllMostFills
	}
	perBlock := func(rate float64) float64 {
		r, err := model.Evaluate(p.shape.params(p.sizing, rate, p.universe, 1))
		if err != nil {
			return math.NaN()
		}
		return model.FalsePositiveTxsPerBlock(r.Pf, t.BlockTxs, t.TxElements)
	}
	t.FPTxsPerBlock, t.DefaultFPTxsBlock = perBlock(p.rate), perBlock(defaultScanFPRate)
	return t
}

// warnFailedBIP37 warns, when a bip37 scan failed or was interrupted
// after loading filters, of what the peers that received them keep.
func (a *app) warnFailedBIP37(plan *scanPlan, err error) {
	var fe *client.BIP37ScanError
	if plan.bip37Rate == nil || !errors.As(err, &fe) {
		return
	}
	l, lerr := plan.bip37Rate.bip37Leak(&client.ScanResult{BIP37Peers: fe.Peers}, 0)
	if lerr != nil {
		return
	}
	a.warnAlone([]string{plan.nodes.named("the scan ended before its result, but the peers keep the filters they received: " + bip37LeakLine(l))})
}

// bip37LeakLine says in one line what the filters told the peer.
func bip37LeakLine(l *bip37LeakJSON) string {
	f := l.Filter
	filter := fmt.Sprintf("rate %v from %s: %s, %s, %s of the watch list and random ones to the rate",
		f.FPRate, f.FPRateFrom, plural(f.Bytes, "byte"), plural(f.HashFuncs, "hash function"), plural(f.Elements, "element"))
	if l.WatchedScripts == 0 {
		return "leak (bip37): no figure, the watch list holds outpoints only (" + filter + ")"
	}
	c := l.Collusion
	who := fmt.Sprintf("the %d peers together hold", len(l.Peers))
	if len(l.Peers) == 1 {
		who = *l.Peers[0].Address + " holds"
	}
	line := fmt.Sprintf("leak (bip37, the model's P_h on the filters sent): %s %s (%s, %s sizing); among %s (%s) it names your %s with P_h(N) %.3g, one match is yours with P_h(1) %.3g",
		who, plural(c.Filters, "filter"), filter, f.Sizing, plural(l.UniverseSize, "candidate script"), l.UniverseFrom, plural(l.WatchedScripts, "script"), c.PHAllExact, c.PH1Exact)
	if c.RevealedScripts > 0 {
		line += fmt.Sprintf("; %s named for certain by outpoints sent in clear", plural(c.RevealedScripts, "script"))
	}
	if len(l.Peers) > 1 {
		for _, v := range l.Peers {
			state := ""
			if v.Abandoned {
				state = ", abandoned"
			}
			line += fmt.Sprintf("\n  %s%s: %s, P_h(N) %.3g, %s sent", *v.Address, state, plural(v.Filters, "filter"), v.PHAllExact, plural(v.Txs, "transaction"))
		}
	}
	if t := l.Target; t != nil {
		sized := "for up to " + plural(t.Filters, "filter")
		if t.ReloadImpossible {
			sized = fmt.Sprintf("for 1 filter, never reloaded at %v or above", noReloadRate)
		}
		met := "met by the filters sent"
		if !t.Met {
			met = fmt.Sprintf("NOT met by the filters sent (P_h(N) %.3g)", c.PHAllExact)
		}
		line += fmt.Sprintf("\nprivacy target %v, %s: rate %v chosen %s (E[P_h(N)] %.3g, at most %.3g for 95%% of filters); cost %.3g false-positive transactions per block of %s against %.3g at --fprate %v; this scan received %s",
			t.Target, met, f.FPRate, sized, t.PHAll, t.PHAllMostFills, t.FPTxsPerBlock, plural(t.BlockTxs, "transaction"), t.DefaultFPTxsBlock, t.DefaultRate, plural(t.Measured, "false-positive transaction"))
	}
	return line
}
