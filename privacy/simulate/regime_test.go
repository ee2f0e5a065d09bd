package simulate

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// regimeOptions is a small simulation of regime r, with every kind of
// session on both sides.
func regimeOptions(t *testing.T, r Regime, seed uint64) Options {
	t.Helper()
	o, err := RegimeOptions(r)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed = seed
	o.Wallets = 10
	o.Addresses.Max = min(o.Addresses.Max, 300)
	o.FPRate = FloatRange{1e-4, 1e-2}
	o.FilterAddFraction = 0.5
	o.Noise = 2
	o.Chain = ChainOptions{Blocks: 300, TxsPerBlock: 8}
	o.Fetch.Wallets = 6
	o.Fetch.Payments.Max = min(o.Fetch.Payments.Max, 40)
	return o
}

// TestRegimesAgreeWithLabels runs the checks of the standard regime's
// files on every regime: the labelled addresses are candidates of the
// universe, every session's filter holds what the labels say, and the
// index and the BIP 157 capture agree with the labels.
func TestRegimesAgreeWithLabels(t *testing.T) {
	for _, ri := range Regimes() {
		t.Run(string(ri.Regime), func(t *testing.T) {
			_, f := generate(t, regimeOptions(t, ri.Regime, 61))
			l := labelsOfUniverse(t, f)
			checkCapture(t, l, f.capture, model.SizingCore)
			checkChain(t, l, f)
		})
	}
}

// TestChainSpendsEarlierOutputs: every input of the simulated chain
// spends an output made earlier and not spent before, and shows the key
// whose hash that output pays, as a real chain's inputs do; every block
// links to the one before.
func TestChainSpendsEarlierOutputs(t *testing.T) {
	for _, r := range []Regime{RegimeStandard, RegimeMixed} {
		unspent := map[wire.OutPoint][]byte{}
		var prev [32]byte
		inputs := 0
		check := func(h int32, b *wire.MsgBlock) error {
			if b.Header.PrevBlock != prev {
				return fmt.Errorf("block %d does not link to the one before", h)
			}
			prev = b.BlockHash()
			for i, tx := range b.Transactions {
				if i > 0 {
					for _, in := range tx.TxIn {
						pk, ok := unspent[in.PreviousOutPoint]
						if !ok {
							return fmt.Errorf("block %d tx %d spends %v, not an unspent earlier output", h, i, in.PreviousOutPoint)
						}
						delete(unspent, in.PreviousOutPoint)
						key := in.Witness
						if len(in.SignatureScript) > 0 {
							pushes, err := txscript.PushedData(in.SignatureScript)
							if err != nil {
								return err
							}
							key = pushes
						}
						_, addrs, _, err := txscript.ExtractPkScriptAddrs(pk, params)
						if err != nil || len(addrs) != 1 || !bytes.Equal(addrs[0].ScriptAddress(), btcutil.Hash160(key[len(key)-1])) {
							return fmt.Errorf("block %d tx %d: the key shown does not hash to the script spent", h, i)
						}
						inputs++
					}
				}
				for j, out := range tx.TxOut {
					unspent[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(j)}] = out.PkScript
				}
			}
			return nil
		}
		o := regimeOptions(t, r, 62)
		if _, err := generateWith(o, check); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if inputs < o.Chain.Blocks*o.Chain.TxsPerBlock {
			t.Errorf("%s: %d inputs in %d blocks", r, inputs, o.Chain.Blocks)
		}
	}
}

// TestRegimesDoWhatTheySay checks, on the labels and the index, that each
// regime breaks what it says it breaks, and that the standard regime
// does not.
func TestRegimesDoWhatTheySay(t *testing.T) {
	type regimeFacts struct {
		maxPayment, fullSmallPayees int
		reusedPayerChange           int // payer change scripts in 3 or more blocks
		heldBeyondUse               int // sessions whose filter holds keys beyond what they list
		shrunk                      int // wallets with a later session lacking an address of an earlier
		multiWallet, sharedHosts    int
		walletRatio                 float64 // largest wallet over the median
		neighbours                  float64 // share of scripts of two appearances at most 2 blocks apart
		partialScans                int     // wallet fetch sessions that start after their wallet's birth
	}
	facts := func(r Regime) regimeFacts {
		o := regimeOptions(t, r, 63)
		o.Wallets = 30
		if r == RegimeHeavyTail {
			o.Addresses.Max = 20_000
		}
		_, f := generate(t, o)
		l, err := DecodeLabels(f.labels)
		if err != nil {
			t.Fatal(err)
		}
		var x regimeFacts
		size := map[string]int{}
		for _, w := range l.Wallets {
			size[w.ID] = len(w.Addresses)
		}
		for _, p := range l.Payments {
			x.maxPayment = max(x.maxPayment, len(p.Addresses))
			if size[p.Payee] <= 6 && len(p.Addresses) == size[p.Payee] && size[p.Payee] > 3 {
				x.fullSmallPayees++
			}
		}
		byWallet := map[string][]Session{}
		hosts := map[string]map[string]bool{}
		for _, s := range l.Sessions {
			if s.Kind != KindWallet {
				continue
			}
			own := 0
			for _, a := range s.Holds {
				if l.truth.owner[a] != "" && slices.Contains(walletsOf(s.Wallet, s.Wallets), l.truth.owner[a]) {
					own++
				}
			}
			if s.Loaded+s.Added > own {
				x.heldBeyondUse++
			}
			if len(s.Wallets) > 1 {
				x.multiWallet++
			}
			host := s.Client[:len(s.Client)-6]
			if hosts[host] == nil {
				hosts[host] = map[string]bool{}
			}
			hosts[host][s.Wallet] = true
			byWallet[s.Wallet] = append(byWallet[s.Wallet], s)
		}
		for _, ws := range hosts {
			if len(ws) > 1 {
				x.sharedHosts++
			}
		}
		for _, ss := range byWallet {
			slices.SortFunc(ss, func(a, b Session) int { return int(a.Height - b.Height) })
		shrunk:
			for i, a := range ss {
				for _, b := range ss[i+1:] {
					if b.Height > a.Height && len(b.Wallets) == 0 && len(a.Wallets) == 0 {
						for _, h := range a.Holds {
							if !slices.Contains(b.Holds, h) && l.truth.owner[h] == a.Wallet {
								x.shrunk++
								break shrunk
							}
						}
					}
				}
			}
		}
		sizes := slices.Sorted(func(yield func(int) bool) {
			for _, n := range size {
				if !yield(n) {
					return
				}
			}
		})
		x.walletRatio = float64(sizes[len(sizes)-1]) / float64(sizes[len(sizes)/2])
		change := map[string]bool{}
		for _, w := range l.Fetch.Wallets {
			for _, c := range w.PayerChange {
				change[c] = true
			}
		}
		for _, s := range l.Fetch.Sessions {
			if s.Kind == KindWallet {
				birth := int32(1 << 30)
				for _, w := range walletsOf(s.Wallet, s.Wallets) {
					birth = min(birth, l.truth.fetchWallets[w].w.Birth)
				}
				if s.ScannedFrom > birth {
					x.partialScans++
				}
			}
		}
		ir, err := universe.NewIndexReader(bytes.NewReader(f.index))
		if err != nil {
			t.Fatal(err)
		}
		twice, near := 0, 0
		for {
			e, err := ir.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if change[e.Candidate] && len(e.Heights) >= 3 {
				x.reusedPayerChange++
			}
			if len(e.Heights) == 2 {
				twice++
				if e.Heights[1]-e.Heights[0] <= 2 {
					near++
				}
			}
		}
		x.neighbours = float64(near) / float64(twice)
		return x
	}
	std := facts(RegimeStandard)
	t.Logf("standard: %+v", std)
	if std.maxPayment > 3 || std.reusedPayerChange > 0 || std.heldBeyondUse > 0 || std.shrunk > 0 || std.multiWallet > 0 ||
		std.sharedHosts > 0 || std.partialScans > 0 || std.neighbours > 0.1 {
		t.Errorf("the standard regime breaks an assumption: %+v", std)
	}
	checks := []struct {
		r    Regime
		says string
		ok   func(x regimeFacts) bool
	}{
		{RegimePayments, "payments of more than 3 addresses, small payees paid in every address",
			func(x regimeFacts) bool { return x.maxPayment > 3 && x.fullSmallPayees > 0 }},
		{RegimeReuse, "payers' change reused in 3 or more blocks", func(x regimeFacts) bool { return x.reusedPayerChange > 0 }},
		{RegimeLookahead, "filters holding keys beyond what the sessions used", func(x regimeFacts) bool { return x.heldBeyondUse > 0 }},
		{RegimeClustered, "twice as many scripts spent within 2 blocks as the standard chain",
			func(x regimeFacts) bool { return x.neighbours > 2*std.neighbours }},
		{RegimeHeavyTail, "the largest wallet over the median twice the standard's ratio",
			func(x regimeFacts) bool { return x.walletRatio > 2*std.walletRatio }},
		{RegimeShrink, "later sessions without addresses earlier ones held, partial rescans",
			func(x regimeFacts) bool { return x.shrunk > 0 && x.partialScans > 0 }},
		{RegimeSharedClient, "sessions of several wallets, hosts of several wallets",
			func(x regimeFacts) bool { return x.multiWallet > 0 && x.sharedHosts > 0 }},
	}
	for _, c := range checks {
		x := facts(c.r)
		t.Logf("%s: %+v", c.r, x)
		if !c.ok(x) {
			t.Errorf("%s: want %s: %+v", c.r, c.says, x)
		}
	}
}
