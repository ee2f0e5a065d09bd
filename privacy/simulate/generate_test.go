package simulate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// smallOptions is a simulation small enough for a unit test that still
// has every kind of session: 8 wallets with payments and filteradd, noise,
// degenerate sessions, and a chain of 300 blocks.
func smallOptions(seed uint64) Options {
	o := DefaultOptions()
	o.Seed = seed
	o.Wallets = 8
	o.Addresses = IntRange{5, 60}
	o.FPRate = FloatRange{1e-4, 1e-2}
	o.PayFraction = 0.5
	o.FilterAddFraction = 0.5
	o.Noise = 3
	o.Chain = ChainOptions{Blocks: 300, TxsPerBlock: 8}
	o.Fetch.Wallets = 3
	return o
}

// files is a simulation written to memory.
type files struct {
	universe, capture, labels, index, fetchCapture []byte
}

func writeAll(t *testing.T, s *Scenario) files {
	t.Helper()
	var f files
	for _, w := range []struct {
		dst   *[]byte
		write func(io.Writer) error
	}{
		{&f.universe, s.WriteUniverse}, {&f.capture, s.WriteCapture}, {&f.labels, s.Labels.Write},
		{&f.index, s.WriteIndex}, {&f.fetchCapture, s.WriteFetchCapture},
	} {
		var b bytes.Buffer
		if err := w.write(&b); err != nil {
			t.Fatal(err)
		}
		*w.dst = b.Bytes()
	}
	return f
}

func generate(t *testing.T, o Options) (*Scenario, files) {
	t.Helper()
	s, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, writeAll(t, s)
}

// TestGenerateDeterministic: one seed gives the same bytes, another seed
// other bytes.
func TestGenerateDeterministic(t *testing.T) {
	_, a := generate(t, smallOptions(11))
	_, b := generate(t, smallOptions(11))
	_, c := generate(t, smallOptions(12))
	for name, pair := range map[string][3][]byte{
		"universe": {a.universe, b.universe, c.universe}, "capture": {a.capture, b.capture, c.capture},
		"labels": {a.labels, b.labels, c.labels}, "index": {a.index, b.index, c.index},
		"fetch capture": {a.fetchCapture, b.fetchCapture, c.fetchCapture},
	} {
		if !bytes.Equal(pair[0], pair[1]) {
			t.Errorf("%s: two runs of one seed differ", name)
		}
		if bytes.Equal(pair[0], pair[2]) {
			t.Errorf("%s: two seeds give the same bytes", name)
		}
	}
}

// TestLabelsAgreeWithUniverseAndCapture reads the files back as the
// analysis does and checks them against the labels: every labelled
// address is a candidate of the universe, every session of the labels is
// in the capture with the filter the labels describe, and that filter
// holds every candidate the labels give it.
func TestLabelsAgreeWithUniverseAndCapture(t *testing.T) {
	for _, sizing := range []model.SizingRule{model.SizingCore, model.SizingBitcoinj} {
		t.Run(string(sizing), func(t *testing.T) {
			o := smallOptions(21)
			o.Sizing = sizing
			_, f := generate(t, o)
			l := labelsOfUniverse(t, f)
			checkCapture(t, l, f.capture, sizing)
		})
	}
}

// labelsOfUniverse decodes the labels of f and checks that the universe
// holds as many candidates as they say, every wallet's address among them.
func labelsOfUniverse(t *testing.T, f files) *Labels {
	t.Helper()
	l, err := DecodeLabels(f.labels)
	if err != nil {
		t.Fatal(err)
	}
	cands := universeCandidates(t, f.universe)
	if len(cands) != l.UniverseSize {
		t.Fatalf("universe of %d candidates, labels say %d", len(cands), l.UniverseSize)
	}
	for _, w := range l.Wallets {
		for _, a := range w.Addresses {
			if !cands[a] {
				t.Fatalf("wallet %s: %s not in the universe", w.ID, a)
			}
		}
	}
	return l
}

// universeCandidates returns the universe's candidates by the name the
// analysis reports them by: a key line marked as an address's pair by the
// address it takes over (the first listed), or else its pair address.
func universeCandidates(t *testing.T, text []byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	var p universe.Parser
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		c, err := p.Parse(sc.Bytes())
		if err != nil {
			t.Fatalf("universe line %q: %v", sc.Text(), err)
		}
		switch {
		case c == nil:
		case len(c.Listed) > 0:
			if !out[string(c.Listed[0])] {
				t.Fatalf("universe line %q takes over %s, not written before", sc.Text(), c.Listed[0])
			}
		case c.PairAddress != nil:
			out[string(c.PairAddress)] = true
		default:
			out[string(c.Text)] = true
		}
	}
	return out
}

// checkCapture replays the capture and checks every session against its
// label.
func checkCapture(t *testing.T, l *Labels, text []byte, sizing model.SizingRule) {
	t.Helper()
	recs, err := capture.Read(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.Sessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != len(l.Sessions) {
		t.Fatalf("%d sessions in the capture, %d labelled", len(sessions), len(l.Sessions))
	}
	kinds := map[SessionKind]int{}
	for _, cs := range sessions {
		s := l.truth.sessions[cs.ID]
		if s == nil || s.Client != cs.Client || len(cs.Filters) != 1 {
			t.Fatalf("capture session %s (%s, %d filters) not labelled as such", cs.ID, cs.Client, len(cs.Filters))
		}
		kinds[s.Kind]++
		cf := cs.Filters[0]
		f := cf.Filter
		if f.Size() != s.FilterBytes || int(f.HashFuncs()) != s.HashFuncs {
			t.Fatalf("session %s: filter of %d bytes, %d hash functions; labels %d, %d", s.ID, f.Size(), f.HashFuncs(), s.FilterBytes, s.HashFuncs)
		}
		if s.Kind == KindWallet {
			size, k := sizing.Size(uint32(s.SizedFor), s.FPRate)
			if int(size) != s.FilterBytes || int(k) != s.HashFuncs {
				t.Fatalf("session %s: labelled filter %d bytes k %d, the %s sizing of %d elements at %g gives %d, %d",
					s.ID, s.FilterBytes, s.HashFuncs, sizing, s.SizedFor, s.FPRate, size, k)
			}
		}
		if want := s.Added * l.Options.ElementsPerAddress; len(cf.Added) != want {
			t.Fatalf("session %s: %d filteradd records, want %d", s.ID, len(cf.Added), want)
		}
		for a := range l.sessionTruth(s) {
			if !f.Contains(addressHash(t, a)) {
				t.Fatalf("session %s (%s): its filter lacks %s", s.ID, s.Wallet, a)
			}
		}
	}
	if kinds[KindWallet] == 0 || kinds[KindNoise] != l.Options.Noise || kinds[KindEmpty]+kinds[KindFull]+kinds[KindTiny] != l.Options.Degenerate {
		t.Fatalf("session kinds %v", kinds)
	}
}

// addressHash returns the 20-byte hash an address encodes.
func addressHash(t *testing.T, a string) []byte {
	t.Helper()
	addr, err := btcutil.DecodeAddress(a, params)
	if err != nil {
		t.Fatal(err)
	}
	return addr.ScriptAddress()
}

// TestNoiseMatchesOnlyChance analyzes the capture with package attack:
// every candidate a wallet session's filters hold matches; noise sessions
// match about what chance gives (within a bound that fails with
// probability below 1e-6); the empty and full filters match everything
// and the tiny one about half.
func TestNoiseMatchesOnlyChance(t *testing.T) {
	o := smallOptions(31)
	o.Noise = 6
	o.Fetch.Wallets, o.Fetch.Noise = 0, 0
	_, f := generate(t, o)
	l, err := DecodeLabels(f.labels)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := capture.Read(bytes.NewReader(f.capture))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.Sessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	groups := make([][]*bip37.Filter, len(sessions))
	for i, s := range sessions {
		groups[i] = s.BloomFilters()
	}
	reps, err := attack.AnalyzeGroups(groups, bytes.NewReader(f.universe), attack.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned := map[string]bool{}
	for _, w := range l.Wallets {
		for _, a := range w.Addresses {
			owned[a] = true
		}
	}
	for i, s := range sessions {
		lab, rep := l.truth.sessions[s.ID], reps[i]
		matched := map[string]bool{}
		for _, m := range rep.Matched {
			matched[m.Candidate] = true
		}
		switch lab.Kind {
		case KindWallet:
			for a := range l.sessionTruth(lab) {
				if !matched[a] {
					t.Errorf("session %s: %s of its filter not matched", s.ID, a)
				}
			}
		case KindNoise:
			// Poisson with mean S: P(X > S + 6√S + 12) < 1e-6 for any S.
			bound := rep.ExpectedFalsePositives + 6*math.Sqrt(rep.ExpectedFalsePositives) + 12
			if float64(rep.MatchedCount) > bound {
				t.Errorf("noise session %s: %d matches, %.3g expected by chance", s.ID, rep.MatchedCount, rep.ExpectedFalsePositives)
			}
		case KindEmpty, KindFull:
			if rep.MatchedCount != uint64(l.UniverseSize) {
				t.Errorf("%s session %s: %d of %d matched", lab.Kind, s.ID, rep.MatchedCount, l.UniverseSize)
			}
		case KindTiny:
			if share := float64(rep.MatchedCount) / float64(l.UniverseSize); share < 0.1 || share > 0.9 {
				t.Errorf("tiny session %s: %.2f of the universe matched", s.ID, share)
			}
		}
	}
}

// TestChainAgreesWithLabels reads the index and the BIP 157 capture back:
// every wallet script is in the index, the blocks holding them are the
// labels' wallet heights, every payer change script shares a block with
// the wallet, and each session asked for exactly the blocks the labels
// list, over the range they say it scanned.
func TestChainAgreesWithLabels(t *testing.T) {
	_, f := generate(t, smallOptions(41))
	l, err := DecodeLabels(f.labels)
	if err != nil {
		t.Fatal(err)
	}
	checkChain(t, l, f)
}

// checkChain checks the index and the BIP 157 capture against the
// labels.
func checkChain(t *testing.T, l *Labels, f files) {
	t.Helper()
	ir, err := universe.NewIndexReader(bytes.NewReader(f.index))
	if err != nil {
		t.Fatal(err)
	}
	if v := ir.Header().Version; v != universe.IndexVersion {
		t.Fatalf("index version %d, want %d (transactions recorded)", v, universe.IndexVersion)
	}
	heights := map[string][]int32{}
	txs := map[string]map[[2]int64]bool{} // candidate -> (height, position)
	for {
		e, err := ir.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		heights[e.Candidate] = e.Heights
		if len(e.Txs) != len(e.Heights) {
			t.Fatalf("%s: %d blocks, transactions recorded for %d", e.Candidate, len(e.Heights), len(e.Txs))
		}
		txs[e.Candidate] = map[[2]int64]bool{}
		for i, h := range e.Heights {
			if len(e.Txs[i]) == 0 {
				t.Fatalf("%s: no transaction recorded at height %d", e.Candidate, h)
			}
			for _, pos := range e.Txs[i] {
				txs[e.Candidate][[2]int64{int64(h), int64(pos)}] = true
			}
		}
	}
	x := l.Fetch
	if len(heights) != x.CandidateCount || len(ir.Header().Hashes) != x.BlockCount {
		t.Fatalf("index of %d candidates and %d blocks, labels %d and %d", len(heights), len(ir.Header().Hashes), x.CandidateCount, x.BlockCount)
	}
	scriptsOf := map[string][]string{}
	for _, w := range x.Wallets {
		scriptsOf[w.ID] = w.Scripts
		walletTxs := map[[2]int64]bool{}
		for _, s := range w.Scripts {
			if heights[s] == nil {
				t.Fatalf("wallet %s: script %s not in the index", w.ID, s)
			}
			for tx := range txs[s] {
				walletTxs[tx] = true
			}
		}
		// A payer's change is made in the transaction that pays the
		// wallet: the fetch attack groups them by it.
		for _, s := range w.PayerChange {
			shared := false
			for tx := range txs[s] {
				shared = shared || walletTxs[tx]
			}
			if !shared {
				t.Fatalf("wallet %s: payer change %s shares no transaction with it", w.ID, s)
			}
		}
	}
	// Covers come in chains: each link (a mate) shares a transaction
	// with a cover and appears in at most two blocks, all of them the
	// covers' (the attack ties the chain through it); no cover is a
	// wallet's or in a block of the wallet's.
	coversOf := map[string][]string{}
	for _, w := range x.Wallets {
		if len(w.Covers) > 0 && len(w.CoverMates) == 0 {
			t.Fatalf("wallet %s: %d covers and no link", w.ID, len(w.Covers))
		}
		own := map[int32]bool{}
		for _, s := range w.Scripts {
			for _, h := range heights[s] {
				own[h] = true
			}
		}
		coverTxs, coverAt := map[[2]int64]bool{}, map[int32]bool{}
		for _, c := range w.Covers {
			for tx := range txs[c] {
				coverTxs[tx] = true
			}
			for _, h := range heights[c] {
				coverAt[h] = true
				if own[h] {
					t.Fatalf("wallet %s: cover %s in the wallet's block %d", w.ID, c, h)
				}
			}
		}
		for _, m := range w.CoverMates {
			shared := false
			for tx := range txs[m] {
				shared = shared || coverTxs[tx]
			}
			if !shared || len(heights[m]) > 2 || slices.ContainsFunc(heights[m], func(h int32) bool { return !coverAt[h] }) {
				t.Fatalf("wallet %s: link %s in %v, sharing a transaction with a cover %v", w.ID, m, heights[m], shared)
			}
		}
		coversOf[w.ID] = slices.Concat(w.Covers, w.CoverMates)
	}
	// The blocks of a session's covers in the range it scanned, beside
	// its wallets'.
	coverBlocks := func(lab *FetchSession) []int32 {
		own := map[int32]bool{}
		for _, h := range lab.WalletHeights {
			own[h] = true
		}
		set := map[int32]bool{}
		for _, w := range walletsOf(lab.Wallet, lab.Wallets) {
			for _, s := range coversOf[w] {
				for _, h := range heights[s] {
					if h >= lab.ScannedFrom && h <= lab.ScannedTo && !own[h] {
						set[h] = true
					}
				}
			}
		}
		return sortedHeights(set)
	}
	// The blocks and scripts of a session's wallets in the range it
	// scanned.
	inRange := func(lab *FetchSession) ([]int32, []string) {
		set := map[int32]bool{}
		var scripts []string
		for _, w := range walletsOf(lab.Wallet, lab.Wallets) {
			for _, s := range scriptsOf[w] {
				in := false
				for _, h := range heights[s] {
					if h >= lab.ScannedFrom && h <= lab.ScannedTo {
						set[h], in = true, true
					}
				}
				if in {
					scripts = append(scripts, s)
				}
			}
		}
		return sortedHeights(set), scripts
	}
	recs, err := capture.Read(bytes.NewReader(f.fetchCapture))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.FetchSessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != len(x.Sessions) {
		t.Fatalf("%d sessions in the capture, %d labelled", len(sessions), len(x.Sessions))
	}
	for _, s := range sessions {
		lab := l.truth.fetchSessions[s.ID]
		if lab == nil {
			t.Fatalf("session %s not labelled", s.ID)
		}
		if hs, scripts := inRange(lab); lab.Kind == KindWallet && (!slices.Equal(lab.WalletHeights, hs) || !slices.Equal(lab.Scripts, scripts)) {
			t.Fatalf("session %s: wallet heights %v and scripts %v, the index says %v and %v", s.ID, lab.WalletHeights, lab.Scripts, hs, scripts)
		}
		var got []int32
		for _, h := range s.Blocks {
			height, ok := ir.Height(h)
			if !ok {
				t.Fatalf("session %s: block %s not in the index", s.ID, h)
			}
			got = append(got, height)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(slices.Concat(lab.WalletHeights, lab.DecoyHeights, lab.FalsePositiveHeights, lab.CoverHeights)))
		if !slices.Equal(got, want) {
			t.Fatalf("session %s fetched %v, labels %v", s.ID, got, want)
		}
		if hs := coverBlocks(lab); !l.Options.Fetch.FreshCovers && !slices.Equal(lab.CoverHeights, hs) {
			t.Fatalf("session %s: cover heights %v, the index says %v", s.ID, lab.CoverHeights, hs)
		}
		if lab.Kind == KindWallet && len(lab.DecoyHeights) != l.Options.Fetch.Decoys {
			t.Fatalf("session %s: %d decoys, want %d", s.ID, len(lab.DecoyHeights), l.Options.Fetch.Decoys)
		}
		// Filter headers from the genesis block, filters over the range
		// the labels say it scanned.
		var headers, filters []capture.FilterRange
		for _, r := range s.Ranges {
			if r.Command == capture.CmdGetCFHeaders {
				headers = append(headers, r)
			} else {
				filters = append(filters, r)
			}
		}
		tip := ir.Header().Hashes[len(ir.Header().Hashes)-1]
		if headers[0].StartHeight != 0 || headers[len(headers)-1].StopHash != tip {
			t.Fatalf("session %s: filter headers from %d to %s, want 0 to the tip", s.ID, headers[0].StartHeight, headers[len(headers)-1].StopHash)
		}
		first, last := filters[0], filters[len(filters)-1]
		if int32(first.StartHeight) != lab.ScannedFrom || last.StopHash != ir.Header().Hashes[lab.ScannedTo] {
			t.Fatalf("session %s: filters from %d to %s, labels %d..%d", s.ID, first.StartHeight, last.StopHash, lab.ScannedFrom, lab.ScannedTo)
		}
	}
}

// TestSizing checks both sizings on figures worked out by hand from
// Core's and bitcoinj's formulas.
func TestSizing(t *testing.T) {
	tests := []struct {
		elements uint32
		rate     float64
		sizing   model.SizingRule
		size, k  uint32
	}{
		// 632 elements at 1e-5: 1893 bytes; Core 15064/632 = 23 (integer)
		// x ln 2 = 15.9 -> 15; bitcoinj 23.84 x ln 2 = 16.5 -> 16.
		{632, 1e-5, model.SizingCore, 1893, 15},
		{632, 1e-5, model.SizingBitcoinj, 1893, 16},
		// 2100 elements at 0.1: 1258 bytes; Core 10064/2100 = 4 -> 2;
		// bitcoinj 4.79 x ln 2 = 3.3 -> 3.
		{2100, 0.1, model.SizingCore, 1258, 2},
		{2100, 0.1, model.SizingBitcoinj, 1258, 3},
		// A filter Core sizes to nothing, bitcoinj to at least one byte
		// (8 bits for 1 element: 5 hash functions).
		{1, 0.5, model.SizingCore, 0, 0},
		{1, 0.5, model.SizingBitcoinj, 1, 5},
		// 1.44 bits per element: Core 0 hash functions, bitcoinj at least 1.
		{100_000, 0.5, model.SizingCore, 18033, 0},
		{100_000, 0.5, model.SizingBitcoinj, 18033, 1},
		// The size limit, and the hash limit.
		{100_000, 1e-9, model.SizingBitcoinj, bip37.MaxFilterSize, 1},
		{1, 1e-30, model.SizingBitcoinj, 17, 50},
	}
	for _, tt := range tests {
		size, k := tt.sizing.Size(tt.elements, tt.rate)
		if size != tt.size || k != tt.k {
			t.Errorf("%s %d elements at %g: %d bytes, k %d; want %d, %d", tt.sizing, tt.elements, tt.rate, size, k, tt.size, tt.k)
		}
	}
}

// TestBadOptions: options out of range are ErrBadOptions, named: a rule
// of one field names it by its JSON key (a model.FieldError).
func TestBadOptions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		field  string // "" for a rule of several fields
		says   string
	}{
		{"no sessions", func(o *Options) { o.Sessions = IntRange{0, 2} }, "sessions_per_wallet", "not within 1..64"},
		{"rate 1", func(o *Options) { o.FPRate = FloatRange{0.1, 1} }, "fp_rate_range", "not within (0, 1)"},
		{"sizing", func(o *Options) { o.Sizing = "python" }, "sizing", "want core or bitcoinj"},
		{"elements", func(o *Options) { o.ElementsPerAddress = 3 }, "elements_per_address", "want 1 or 2"},
		{"pay alone", func(o *Options) { o.Wallets = 1 }, "pay_fraction", "two wallets"},
		{"nothing", func(o *Options) { o.Wallets, o.Noise, o.Degenerate, o.Fetch.Wallets, o.Fetch.Noise = 0, 0, 0, 0, 0 }, "", "nothing to simulate"},
		{"too many addresses", func(o *Options) { o.Wallets, o.Addresses = 10_000, IntRange{1, 100_000} }, "wallet_count", "addresses"},
		{"decoys", func(o *Options) { o.Chain.Blocks, o.Fetch.Decoys = 20, 10 }, "fetch.decoys_per_session", "half of chain.block_count 20"},
		{"chain too short", func(o *Options) { o.Chain.Blocks = 0 }, "chain.block_count", "not in 10.."},
		{"chain too long", func(o *Options) { o.Chain.Blocks, o.Chain.TxsPerBlock = 1_000_000, 1000 }, "chain.block_count", "transactions"},
		{"regime", func(o *Options) { o.Regime = "sometimes" }, "regime", "want one of standard"},
		{"too many sessions", func(o *Options) { o.Wallets, o.Addresses, o.Sessions = 10_000, IntRange{1, 10}, IntRange{1, 64} }, "wallet_count", "sessions"},
		{"too many fetch sessions", func(o *Options) { o.Fetch.Wallets, o.Fetch.Sessions = 1000, IntRange{1, 64} }, "fetch.wallet_count", "fetch wallets"},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		tt.change(&o)
		_, err := Generate(o)
		var fe *model.FieldError
		named := errors.As(err, &fe)
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), tt.says) || named != (tt.field != "") || named && fe.Field != tt.field {
			t.Errorf("%s: %v, want ErrBadOptions naming %q", tt.name, err, tt.field)
		}
	}
	for _, s := range []string{"", "x", "3..1", "1..", "..2", "1.5"} {
		if _, err := ParseIntRange(s); !errors.Is(err, ErrBadOptions) {
			t.Errorf("ParseIntRange(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "0", "-1..2", "0.1..0.01", "NaN", "1..Inf"} {
		if _, err := ParseFloatRange(s); !errors.Is(err, ErrBadOptions) {
			t.Errorf("ParseFloatRange(%q): %v", s, err)
		}
	}
	if r, err := ParseIntRange("5..500"); err != nil || r != (IntRange{5, 500}) || r.String() != "5..500" {
		t.Errorf("ParseIntRange: %v %v", r, err)
	}
	if r, err := ParseFloatRange("1e-5..0.01"); err != nil || r != (FloatRange{1e-5, 0.01}) || r.String() != "1e-05..0.01" {
		t.Errorf("ParseFloatRange: %v %v", r, err)
	}
}
