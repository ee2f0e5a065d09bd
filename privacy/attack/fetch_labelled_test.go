package attack

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// chainSpec describes a labelled chain for the block-download attack:
// blocks of noise transactions (each spends earlier outputs and pays two
// new scripts), a wallet paid by payers whose change sits in the payment
// (and, when the payer pays the same address again from it, spent in the
// next payment), the wallet spending its coins to itself and others, and
// the blocks a BIP 157 client of the wallet fetches: those of its scripts
// and a few of its filters' false positives.
type chainSpec struct {
	Blocks      int
	TxsPerBlock int
	Payments    int // payments to the wallet
	Repeat      float64
	Spends      int // the wallet's own spends
	FalseBlocks int
}

// labelledChain is a generated chain's index, a session's downloads and
// the truth.
type labelledChain struct {
	index   []byte
	session *capture.FetchSession
	wallet  map[string]bool
}

// chainTx is a transaction's scripts, by name.
type chainTx []string

func newLabelledChain(seed uint64, spec chainSpec) *labelledChain {
	rng := rand.New(rand.NewPCG(seed, 0xfe7c))
	blocks := make([][]chainTx, spec.Blocks)
	names := 0
	fresh := func(kind string) string { names++; return fmt.Sprintf("%s-%06d", kind, names) }
	var utxos []string // noise outputs not yet spent
	lc := &labelledChain{wallet: map[string]bool{}}
	// Noise: every block's transactions spend earlier noise outputs and
	// pay two new scripts.
	for h := range blocks {
		for range spec.TxsPerBlock {
			var tx chainTx
			for range 1 + rng.IntN(2) {
				if len(utxos) > 0 && rng.IntN(3) > 0 {
					i := rng.IntN(len(utxos))
					tx = append(tx, utxos[i])
					utxos[i] = utxos[len(utxos)-1]
					utxos = utxos[:len(utxos)-1]
				}
			}
			for range 2 {
				s := fresh("noise")
				tx = append(tx, s)
				utxos = append(utxos, s)
			}
			blocks[h] = append(blocks[h], tx)
		}
	}
	// Payments to the wallet, each from a payer's coin, with change; a
	// repeated payment spends that change to the same address.
	var walletCoins []string
	for range spec.Payments {
		h := rng.IntN(spec.Blocks - 1)
		w, payer, change := fresh("wallet"), fresh("payer"), fresh("change")
		lc.wallet[w] = true
		blocks[h] = append(blocks[h], chainTx{payer, w, change})
		walletCoins = append(walletCoins, w)
		if rng.Float64() < spec.Repeat {
			h2 := h + 1 + rng.IntN(spec.Blocks-h-1)
			blocks[h2] = append(blocks[h2], chainTx{change, w, fresh("change")})
		}
	}
	// The wallet's spends: a coin to someone else, the change back.
	for range spec.Spends {
		if len(walletCoins) == 0 {
			break
		}
		i := rng.IntN(len(walletCoins))
		coin := walletCoins[i]
		walletCoins = append(walletCoins[:i], walletCoins[i+1:]...)
		back := fresh("wallet")
		lc.wallet[back] = true
		h := rng.IntN(spec.Blocks)
		blocks[h] = append(blocks[h], chainTx{coin, fresh("noise"), back})
	}
	ix := universe.NewIndexWriter("", 0)
	defer ix.Close()
	fetched := map[int]bool{}
	for h, txs := range blocks {
		rng.Shuffle(len(txs), func(i, j int) { txs[i], txs[j] = txs[j], txs[i] })
		for pos, tx := range txs {
			for _, s := range tx {
				ix.AddTx(s, int32(h), pos)
				if lc.wallet[s] {
					fetched[h] = true
				}
			}
		}
	}
	for range spec.FalseBlocks {
		fetched[rng.IntN(spec.Blocks)] = true
	}
	hd := &universe.IndexHeader{Network: "regtest"}
	for h := range spec.Blocks {
		hd.Hashes = append(hd.Hashes, blockHash(int32(h)))
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		panic(err)
	}
	lc.index = buf.Bytes()
	lc.session = &capture.FetchSession{ID: fmt.Sprintf("s-%d", seed), Client: "127.0.0.1:1",
		Ranges: []capture.FilterRange{{Command: capture.CmdGetCFilters, StartHeight: 0, StopHash: blockHash(int32(spec.Blocks - 1))}}}
	for h := range spec.Blocks {
		if fetched[h] {
			lc.session.Blocks = append(lc.session.Blocks, blockHash(int32(h)))
		}
	}
	return lc
}

// fetchScore scores fetch reports against the truth.
type fetchScore struct {
	confident, confRight   int // matches at P ≥ 0.95, and of them the wallet's
	groups, groupsRight    int // groups of two or more at P ≥ 0.95, and of them holding a wallet script
	intervals, covered     int // estimated wallet intervals covering the truth
	shares, sharesCovered  int // groups' probability intervals covering their class's true share
	coLocated, spurious2   int
	coLocated2             int
	chance2                float64
	walletMatches, matched int
}

func (sc *fetchScore) score(r *FetchReport, wallet map[string]bool) {
	holds := map[int]bool{} // group -> holds a wallet script
	for _, m := range r.Matched {
		if wallet[m.Candidate] {
			sc.walletMatches++
			if m.Group > 0 {
				holds[m.Group] = true
			}
		}
		sc.matched++
		if m.Probability >= 0.95 {
			sc.confident++
			if wallet[m.Candidate] {
				sc.confRight++
			}
		}
		if m.Appearances == 2 && !wallet[m.Candidate] && !m.CoLocated {
			sc.spurious2++
		}
	}
	for i, g := range r.Groups {
		if g.Probability >= 0.95 {
			sc.groups++
			if holds[i+1] {
				sc.groupsRight++
			}
		}
	}
	// The truth the estimate and the groups' probabilities stand for:
	// per k, the groups (of one or more) holding a wallet script.
	byK := map[uint64][2]int{} // groups, of them the wallet's
	seen := map[int]bool{}
	walletUnits := 0
	for _, m := range r.Matched {
		if m.Group > 0 && seen[m.Group] {
			continue
		}
		k, has := m.Appearances, wallet[m.Candidate]
		if m.Group > 0 {
			seen[m.Group] = true
			k, has = r.Groups[m.Group-1].Appearances, holds[m.Group]
		}
		c := byK[k]
		c[0]++
		if has {
			c[1]++
			if k >= 2 {
				walletUnits++
			}
		}
		byK[k] = c
	}
	sc.intervals++
	if n := float64(walletUnits); n >= r.EstimatedWalletGroupsLow && n <= r.EstimatedWalletGroupsHigh {
		sc.covered++
	}
	seen = map[int]bool{}
	for _, m := range r.Matched {
		k, lo, hi := m.Appearances, m.ProbabilityLow, m.ProbabilityHigh
		if m.Group > 0 {
			if seen[m.Group] {
				continue
			}
			seen[m.Group] = true
			g := r.Groups[m.Group-1]
			k, lo, hi = g.Appearances, g.ProbabilityLow, g.ProbabilityHigh
		}
		if k < 2 {
			continue
		}
		c := byK[k]
		share := float64(c[1]) / float64(c[0])
		sc.shares++
		if share >= lo-1e-9 && share <= hi+1e-9 {
			sc.sharesCovered++
		}
	}
	sc.coLocated += int(r.CoLocated)
	for _, c := range r.ByAppearances {
		if c.Appearances == 2 {
			sc.chance2 += c.ExpectedByChance
			sc.coLocated2 += int(c.CoLocated)
		}
	}
}

func (sc fetchScore) String() string {
	return fmt.Sprintf("%d matches (%d the wallet's), %d co-located; %d scripts at P ≥ 0.95, %.4f right; %d groups at P ≥ 0.95, %.4f holding a wallet script; "+
		"wallet estimate's interval covers the truth in %d of %d (%.4f); groups' probability intervals cover their class's true share in %d of %d (%.4f); "+
		"of two appearances: %d matches not the wallet's that ride in no other's transactions, against %.3g expected by chance; %d ride in another's",
		sc.matched, sc.walletMatches, sc.coLocated, sc.confident, ratio(sc.confRight, sc.confident), sc.groups, ratio(sc.groupsRight, sc.groups),
		sc.covered, sc.intervals, ratio(sc.covered, sc.intervals), sc.sharesCovered, sc.shares, ratio(sc.sharesCovered, sc.shares), sc.spurious2, sc.chance2, sc.coLocated2)
}

// TestCalibrationFetches measures the block-download attack on labelled
// chains (payers' change in the wallet's payments, some paying the same
// address again from it) and holds it to the targets: of the groups (and
// the scripts, if any) given probability ≥ 0.95, at least 95% right, and the
// wallet estimate's interval covering the truth in at least 92% of
// sessions. Thirty chains of each kind by default (1,000 blocks of 12
// transactions; 630 blocks of 20, as the neutrino run); two
// hundred of each with SPVFILTER_LONG=1, on seeds no other test uses.
func TestCalibrationFetches(t *testing.T) {
	specs := []chainSpec{
		{Blocks: 1000, TxsPerBlock: 12, Payments: 8, Repeat: 0.5, Spends: 4, FalseBlocks: 2},
		{Blocks: 630, TxsPerBlock: 20, Payments: 4, Repeat: 0.75, Spends: 2, FalseBlocks: 0},
	}
	first, n := uint64(100), 30
	if os.Getenv("SPVFILTER_LONG") == "1" {
		first, n = 5000, 200
	}
	var all fetchScore
	for i, spec := range specs {
		var sc fetchScore
		for seed := first; seed < first+uint64(n); seed++ {
			lc := newLabelledChain(seed+uint64(i)*100_000, spec)
			ir, err := universe.NewIndexReader(bytes.NewReader(lc.index))
			if err != nil {
				t.Fatal(err)
			}
			reps, err := AnalyzeFetches([]*capture.FetchSession{lc.session}, ir, FetchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sc.score(reps[0], lc.wallet)
			all.score(reps[0], lc.wallet)
		}
		t.Logf("%+v, %d chains: %v", spec, n, sc)
	}
	if all.confident > 0 && ratio(all.confRight, all.confident) < 0.95 || ratio(all.groupsRight, all.groups) < 0.95 || all.groups == 0 {
		t.Errorf("%v: want 95%% right at P ≥ 0.95", all)
	}
	if c := ratio(all.covered, all.intervals); c < 0.92 {
		t.Errorf("wallet estimate's interval covers the truth in %.3f, want at least 0.92", c)
	}
}
