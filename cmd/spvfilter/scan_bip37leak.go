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
// the element count the filter is sized for.
type bip37Shape struct {
	scripts uint32
	// perScript is the elements the model inserts per script: the data
	// pushes of the scripts divided by their number, rounded down, at
	// least 1. The model inserts scripts·perScript elements; the filter
	// may hold more (outpoints, a script of several pushes), which only
	// make it match more candidates: the model's P_h is then an upper
	// bound.
	perScript uint32
	inserted  uint64
	sizing    uint32
}

// newBIP37Shape counts the filter's elements of a watch list.
func newBIP37Shape(watch []client.WatchItem) bip37Shape {
	var s bip37Shape
	var pushes uint64
	for _, it := range watch {
		if it.IsOutPoint {
			s.inserted++
			continue
		}
		s.scripts++
		n := uint64(len(bip37.ScriptElements(it.Script)))
		pushes += n
		s.inserted += n
	}
	s.sizing = uint32(s.inserted) + client.WatchFilterHeadroom*uint32(len(watch))
	if s.scripts > 0 {
		s.perScript = max(1, uint32(pushes/uint64(s.scripts)))
	}
	return s
}

// params are the model's parameters for this filter at rate, held b
// times by one peer, among universe candidates.
func (s bip37Shape) params(rate float64, universe uint64, b uint32) model.Params {
	modelled := s.scripts * s.perScript
	return model.Params{
		Addresses: s.scripts, ElementsPerAddress: s.perScript, ExtraElements: s.sizing - modelled,
		FPRate: rate, UniverseSize: universe, Filters: b, Sizing: model.SizingCore,
	}
}

// bip37Plan is how a BIP 37 scan's filter rate was chosen, and what the
// leak report needs of the watch list.
type bip37Plan struct {
	shape    bip37Shape
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
}

func (f *bip37LeakFlags) register(fs *pflag.FlagSet) {
	fs.Uint64Var(&f.universe, "universe-size", model.DefaultParams().UniverseSize,
		"bip37: scripts U a node tests against the filter, the wallet's included, for the leak report and --privacy-target (the default is privacy model's, a round figure for mainnet; Gervais et al. used 3.2e7)")
}

// planBIP37Rate checks --fprate, --privacy-target, --universe-size and
// --max-reloads together and picks the filter's rate: --fprate's, or
// with --privacy-target the advisor's, for Core's sizing (the client's),
// sized so that a peer holding every filter the scan may send it keeps
// E[P_h(N)] below the target.
func (fl *scanFlags) planBIP37Rate(flags *pflag.FlagSet, watch []client.WatchItem) (*bip37Plan, error) {
	if fl.mode != "bip37" {
		if flags.Changed("universe-size") {
			return nil, badInput("--universe-size needs --mode bip37 (a bip157 scan's leak counts the scripts of the blocks it fetched)")
		}
		return nil, nil
	}
	if flags.Changed("fprate") && flags.Changed("privacy-target") {
		return nil, badInput("--fprate %v and --privacy-target %v: give one: the target chooses the rate", fl.fpRate, fl.privacyTarget)
	}
	p := &bip37Plan{shape: newBIP37Shape(watch), rate: fl.fpRate, rateFrom: "--fprate", universe: fl.leak.universe,
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
		return nil, badInput("--universe-size %d: the node tests the watch list's %d scripts among the universe: want more than %d", p.universe, p.shape.scripts, p.shape.scripts)
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
		bytes, k := model.SizingCore.Size(p.shape.sizing, r)
		if row1.Reachable && bytes > 0 && k > 0 && (!rowB.Reachable || r < p.rate) {
			p.advice, p.rate, p.noReload = &row1, r, true
			return nil
		}
	}
	if !rowB.Reachable {
		return badInput("--privacy-target %v: no filter Core's sizing builds for %d script(s) keeps E[P_h(N)] below it for a peer holding %d filter(s) among %d scripts: the most private, at rate %s, leaves %.3g (raise the target, lower --max-reloads or check --universe-size)",
			p.target, p.shape.scripts, p.maxFilters, p.universe, rateArg(rowB), rowB.PHAllExact)
	}
	return nil
}

// adviseFor is the advisor's row for a peer holding b filters.
func (p *bip37Plan) adviseFor(b uint32) (model.AdviceRow, error) {
	a, err := model.Advise(model.AdviceParams{Model: p.shape.params(0, p.universe, b), TargetPHAll: p.target})
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
// the filters the peers received.
type bip37LeakJSON struct {
	Mode           string `json:"mode"`
	WatchedScripts uint32 `json:"watched_script_count"`
	// Filter is the filter loaded, as the client built it.
	Filter bip37FilterJSON `json:"bloom_filter"`
	// UniverseSize is U, the scripts the model's node tests (the
	// wallet's included), and UniverseFrom the flag it came from.
	UniverseSize uint64 `json:"universe_size"`
	UniverseFrom string `json:"universe_from"`
	// Target is --privacy-target's decision, null without it.
	Target *bip37TargetJSON `json:"privacy_target"`
	// Peers holds one entry per peer that received filters; Collusion
	// is all of them together (their filters intersected).
	Peers     []bip37PeerLeakJSON `json:"peers"`
	Collusion bip37PeerLeakJSON   `json:"collusion"`
	Warnings  []string            `json:"warnings"`
}

// bip37FilterJSON is the filter a bip37 scan loads.
type bip37FilterJSON struct {
	FPRate     float64 `json:"fp_rate"`
	FPRateFrom string  `json:"fp_rate_from"`
	Bytes      uint32  `json:"filter_bytes"`
	HashFuncs  uint32  `json:"hash_function_count"`
	// Elements is what the filter holds, ModelledElements what the
	// model inserts (scripts · elements per script), SizingElements the
	// count it is sized for (elements plus client.WatchFilterHeadroom
	// per watch item).
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

// bip37PeerLeakJSON is the model's figures for the filters one peer, or
// the peers together, received.
type bip37PeerLeakJSON struct {
	// Address is the peer's, null for the collusion.
	Address *string `json:"address"`
	leak.BloomLeak
	// PH1Exact and PHAllExact are P_h(1) and P_h(N) averaged over the
	// binomial number of false positives (the advisor's figures).
	PH1Exact   float64 `json:"p_h_1_exact"`
	PHAllExact float64 `json:"p_h_all_exact"`
}

// bip37Leak is the leak report of a bip37 scan: every filter of the scan
// went to the filtering peer (the first and each reload, fresh tweaks,
// the same rate), so it holds 1 + reloads filters, intersected.
func (p *bip37Plan) bip37Leak(res *client.ScanResult, measuredFPs int) (*bip37LeakJSON, error) {
	filters := uint32(1 + res.FilterReloads)
	r, err := model.Evaluate(p.shape.params(p.rate, p.universe, filters))
	if err != nil && p.shape.scripts > 0 {
		return nil, fmt.Errorf("the bip37 leak: %w", err)
	}
	out := &bip37LeakJSON{Mode: "bip37", WatchedScripts: p.shape.scripts, UniverseSize: p.universe, UniverseFrom: p.universeFrom,
		Peers: []bip37PeerLeakJSON{}, Warnings: []string{}}
	bytes, k := model.SizingCore.Size(p.shape.sizing, p.rate)
	out.Filter = bip37FilterJSON{FPRate: p.rate, FPRateFrom: p.rateFrom, Bytes: bytes, HashFuncs: k,
		Elements: p.shape.inserted, ModelledElements: uint64(p.shape.scripts) * uint64(p.shape.perScript), SizingElements: p.shape.sizing}
	if p.shape.scripts == 0 {
		out.Warnings = append(out.Warnings, "the watch list holds outpoints only: the model's P_h speaks of scripts a node tests, so no figure is given")
		return out, nil
	}
	out.Filter.Pf = r.Pf
	if out.Filter.Elements > out.Filter.ModelledElements {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the filter holds %d elements and the model %d (outpoints, or scripts of several data pushes): the others make it match more candidates, so the P_h given is an upper bound",
			out.Filter.Elements, out.Filter.ModelledElements))
	}
	view := bip37PeerLeakJSON{BloomLeak: leak.BloomLeak{Filters: int(filters), FalsePositiveRate: r.PfCandidate, UniverseSize: p.universe,
		ExpectedFalsePositives: r.ExpectedFalsePositives, PH1: r.PH1, PHAll: r.PHAll}, PH1Exact: r.PH1Exact, PHAllExact: r.PHAllExact}
	out.Collusion = view
	if res.FilteringPeer != "" {
		view.Address = orNull(res.FilteringPeer)
		out.Peers = append(out.Peers, view)
	}
	out.Warnings = append(out.Warnings, fmt.Sprintf("every filter of the scan went to one peer, %s (%d filter(s): the first and each reload, with fresh tweaks), so the peers together learn what it does; a pass abandoned for a failure or a reorganization loaded a filter into a peer this report cannot name",
		res.FilteringPeer, filters))
	if p.target != 0 {
		out.Target = p.targetCost(measuredFPs)
	}
	return out, nil
}

// sizedFor is the filters one peer may receive, which the rate is sized
// for.
func (p *bip37Plan) sizedFor() uint32 {
	if p.noReload {
		return 1
	}
	return p.maxFilters
}

// targetCost is the decision of --privacy-target and its cost.
func (p *bip37Plan) targetCost(measured int) *bip37TargetJSON {
	t := &bip37TargetJSON{Target: p.target, Filters: p.sizedFor(), ReloadImpossible: p.noReload, BlockTxs: model.DefaultBlockTxs, TxElements: model.DefaultTxElements,
		DefaultRate: defaultScanFPRate, Measured: measured}
	if r, err := model.Evaluate(p.shape.params(p.rate, p.universe, t.Filters)); err == nil {
		t.PHAll = r.PHAllExact
	}
	if p.advice != nil {
		t.PHAllMostFills = p.advice.PHAllMostFills
	}
	perBlock := func(rate float64) float64 {
		r, err := model.Evaluate(p.shape.params(rate, p.universe, 1))
		if err != nil {
			return math.NaN()
		}
		return model.FalsePositiveTxsPerBlock(r.Pf, t.BlockTxs, t.TxElements)
	}
	t.FPTxsPerBlock, t.DefaultFPTxsBlock = perBlock(p.rate), perBlock(defaultScanFPRate)
	return t
}

// bip37LeakLine says in one line what the filters told the peer.
func bip37LeakLine(l *bip37LeakJSON) string {
	f := l.Filter
	filter := fmt.Sprintf("rate %v from %s: %d bytes, %d hash functions, %d elements", f.FPRate, f.FPRateFrom, f.Bytes, f.HashFuncs, f.Elements)
	if l.WatchedScripts == 0 {
		return "leak (bip37): no figure, the watch list holds outpoints only (" + filter + ")"
	}
	c := l.Collusion
	who := "the peer"
	if len(l.Peers) == 1 {
		who = *l.Peers[0].Address
	}
	line := fmt.Sprintf("leak (bip37, the model's P_h): %s holds %d filter(s) (%s); among %d candidate scripts (%s) it names your %d scripts with P_h(N) %.3g, one match is yours with P_h(1) %.3g",
		who, c.Filters, filter, l.UniverseSize, l.UniverseFrom, l.WatchedScripts, c.PHAllExact, c.PH1Exact)
	if t := l.Target; t != nil {
		sized := fmt.Sprintf("for up to %d filter(s)", t.Filters)
		if t.ReloadImpossible {
			sized = fmt.Sprintf("for 1 filter, never reloaded at %v or above", noReloadRate)
		}
		line += fmt.Sprintf("\nprivacy target %v: rate %v chosen %s (E[P_h(N)] %.3g, at most %.3g for 95%% of filters); cost %.3g false-positive transactions per block of %d against %.3g at --fprate %v; this scan received %d",
			t.Target, f.FPRate, sized, t.PHAll, t.PHAllMostFills, t.FPTxsPerBlock, t.BlockTxs, t.DefaultFPTxsBlock, t.DefaultRate, t.Measured)
	}
	return line
}
