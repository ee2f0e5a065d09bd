package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// spends is a chain holding, for every standard output type, a payment to
// a script of that type and, in a block of its own, the spend of it (all
// below the first filter checkpoint); then, past it, a second P2WPKH
// spend and, past the second checkpoint, a second P2TR key-path spend.
type spends struct {
	node   *peertest.Node
	script [peertest.NumScriptKinds][]byte
	pay    *wire.MsgTx // pays every script, output i of kind i
	spend  [peertest.NumScriptKinds]*wire.MsgTx
	height [peertest.NumScriptKinds]int32 // of each spend
	// The late spends, of outputs of pay after those of every kind.
	lateWPKH, lateKeyPath             *wire.MsgTx
	lateWPKHHeight, lateKeyPathHeight int32
}

// Heights of the late spends.
const (
	lateWPKHAt    = 1500
	lateKeyPathAt = 2050
)

// spendsShared is started by the first test that needs it: with a
// transaction index, for peertest.LeaveOut.
var spendsShared = peertest.NewShared(newSpends, peertest.WithArgs("--nobanning", "--txindex"))

func needSpends(t *testing.T) *spends {
	t.Helper()
	return spendsShared.Get(t)
}

func newSpends(n *peertest.Node) (*spends, error) {
	s := &spends{node: n}
	// Segwit and taproot activate on regtest after three 144-block
	// windows.
	if _, err := n.GenerateErr(500); err != nil {
		return s, err
	}
	owner, payee := peertest.NewKey("owner of every type"), peertest.NewKey("payee")
	var outs []*wire.TxOut
	for k := range peertest.NumScriptKinds {
		s.script[k] = owner.Script(k)
		outs = append(outs, wire.NewTxOut(1_000_000, s.script[k]))
	}
	outs = append(outs, wire.NewTxOut(1_000_000, s.script[peertest.P2WPKH]), wire.NewTxOut(1_000_000, s.script[peertest.P2TRKeyPath]))
	var err error
	if s.pay, err = n.SpendCoinbaseErr(outs...); err != nil {
		return s, err
	}
	if _, err := n.ConfirmErr(s.pay); err != nil {
		return s, err
	}
	// spendAt spends output i of pay in a block of its own at height at
	// (the next block if at is 0).
	spendAt := func(i uint32, at int32) (*wire.MsgTx, int32, error) {
		if at > 0 {
			tip, err := n.RPC().GetBlockCount()
			if err != nil {
				return nil, 0, err
			}
			if _, err := n.GenerateErr(int(int64(at) - tip - 1)); err != nil {
				return nil, 0, err
			}
		}
		tx, err := n.SpendErr([]peertest.Output{peertest.OutputOf(s.pay, i, owner)}, wire.NewTxOut(1_000_000-peertest.Fee, payee.P2WPKHScript()))
		if err != nil {
			return nil, 0, fmt.Errorf("spending output %d: %w", i, err)
		}
		hash, err := n.ConfirmErr(tx)
		if err != nil {
			return nil, 0, err
		}
		h, err := n.RPC().GetBlockVerbose(hash)
		if err != nil {
			return nil, 0, err
		}
		return tx, int32(h.Height), nil
	}
	for k := range peertest.NumScriptKinds {
		if s.spend[k], s.height[k], err = spendAt(uint32(k), 0); err != nil {
			return s, err
		}
	}
	if s.lateWPKH, s.lateWPKHHeight, err = spendAt(uint32(peertest.NumScriptKinds), lateWPKHAt); err != nil {
		return s, err
	}
	if s.lateKeyPath, s.lateKeyPathHeight, err = spendAt(uint32(peertest.NumScriptKinds)+1, lateKeyPathAt); err != nil {
		return s, err
	}
	_, err = n.GenerateErr(3)
	return s, err
}

// reveals reports whether a spend of the kind shows the script it spends
// if the output was standard; proven, whether consensus fixes it (P2SH
// around a witness program), so that the block proves a filter without
// it false.
func reveals(k peertest.ScriptKind) bool {
	switch k {
	case peertest.P2PK, peertest.BareMultisig, peertest.P2TRKeyPath:
		return false
	}
	return true
}

func proven(k peertest.ScriptKind) bool { return k == peertest.P2SHP2WPKH || k == peertest.P2SHP2WSH }

// TestDisputesDecidedByProof: two or three colluders serve, with a
// coherent chain of filter headers, a filter of the block of one spend
// that leaves out the script it spends (hiding the spend), against one
// honest peer; for each standard output type. Where consensus fixes the
// script (P2SH-P2WPKH, P2SH-P2WSH: the witness beside one push of a
// witness program) the block proves their filter false: every colluder
// is banned with the proof, the honest peer untouched, the spend found.
// Everywhere else nobody is banned, however many colluders: the result
// reports the conflict, naming both sides, and scanned the block whole,
// so the spend is found too. Where the spend shows the script if the
// output was standard (P2PKH with a compressed or uncompressed key, P2SH,
// P2WPKH, P2WSH, P2TR script path), the warning says the block favours
// the honest peer if so: evidence, no proof, since a spend of another
// output can take the same shape. The shares are logged.
func TestDisputesDecidedByProof(t *testing.T) {
	s := needSpends(t)
	var watch []WatchItem
	for _, sc := range s.script {
		watch = append(watch, ScriptItem(sc))
	}
	var decided, favoured, undecided []string
	for k := range peertest.NumScriptKinds {
		for _, colluders := range []int{2, 3} {
			t.Run(fmt.Sprintf("%v/%d colluders", k, colluders), func(t *testing.T) {
				drop := s.script[k]
				lie := peertest.ForgeFilter(t, s.node, s.height[k], peertest.LeaveOut(t, s.node, func(p []byte) bool { return string(p) == string(drop) }))
				var liars []string
				for range colluders {
					liars = append(liars, peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, lie).Addr)
				}
				honest := peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, nil).Addr
				c := connectTo(t, s.node, 0, append(liars, honest)...)
				res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: watch, To: c.Chain().Height()})
				if err != nil {
					t.Fatal(err)
				}
				if !hasMatch(res, s.spend[k].TxHash()) {
					t.Errorf("the %v spend at height %d is missing", k, s.height[k])
				}
				if st := status(t, res, honest); st.Banned || st.Reason != "" {
					t.Errorf("the honest peer: %+v", st)
				}
				if proven(k) {
					for _, l := range liars {
						if st := status(t, res, l); !st.Banned || !strings.Contains(st.Reason, "proves it false") {
							t.Errorf("colluder %s: %+v, want banned with the proof", l, st)
						}
					}
					if len(res.Conflicts) != 0 {
						t.Errorf("conflicts %v where the block decides", res.Conflicts)
					}
					if colluders == 2 {
						decided = append(decided, k.String())
					}
					return
				}
				for _, l := range liars {
					if st := status(t, res, l); st.Banned {
						t.Errorf("colluder %s banned on what consensus does not decide: %+v", l, st)
					}
				}
				if len(res.Conflicts) != 1 || res.Conflicts[0].Height != s.height[k] || len(res.Conflicts[0].Sides) != 2 ||
					!slices.Contains(slices.Concat(res.Conflicts[0].Sides...), honest) || !hasWarning(res.Warnings, "cannot decide", honest) {
					t.Errorf("conflicts %+v, warnings %q: want the conflict at %d naming both sides", res.Conflicts, res.Warnings, s.height[k])
				}
				favours := hasWarning(res.Warnings, "cannot decide", "if the outputs they spend were standard, the block favours "+honest+":", "no proof")
				if favours != reveals(k) {
					t.Errorf("warnings %q: favouring the honest peer if the spent outputs were standard: %v, want %v", res.Warnings, favours, reveals(k))
				}
				switch {
				case colluders != 2:
				case reveals(k):
					favoured = append(favoured, k.String())
				default:
					undecided = append(undecided, k.String())
				}
			})
		}
	}
	t.Logf("of %d standard output types, disputes decided by the block's proof: %d (%s); favoured by the block if the spent output was standard, no proof: %d (%s); undecided: %d (%s)",
		peertest.NumScriptKinds, len(decided), strings.Join(decided, ", "), len(favoured), strings.Join(favoured, ", "),
		len(undecided), strings.Join(undecided, ", "))
}

// TestConflictKeepsAskingEverySide: colluders lie where no block decides
// (a P2TR key-path spend at 511, below the first filter checkpoint), so
// their checkpoints differ from the honest peer's from 1000 on. Both
// sides are still asked: each states its own filter headers from there,
// compared height by height across both checkpoints. A second lie no
// block decides, past the second checkpoint, is a second conflict; a lie
// the block decides (an empty filter of the block of the P2WPKH spend),
// between them, bans the colluders with the proof. Every spend is found,
// and the honest peer is never banned.
func TestConflictKeepsAskingEverySide(t *testing.T) {
	s := needSpends(t)
	var watch []WatchItem
	for _, sc := range s.script {
		watch = append(watch, ScriptItem(sc))
	}
	keyPath := s.height[peertest.P2TRKeyPath]
	for _, tt := range []struct {
		name      string
		second    int32  // the second lie's height
		drop      []byte // the script it leaves out; nil: all (an empty filter)
		conflicts []int32
		banned    bool
	}{
		{"a second conflict", s.lateKeyPathHeight, s.script[peertest.P2TRKeyPath], []int32{keyPath, s.lateKeyPathHeight}, false},
		{"a proof after a conflict", s.lateWPKHHeight, nil, []int32{keyPath}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dropped := [][]byte{s.script[peertest.P2TRKeyPath], tt.drop}
			leaveOut := peertest.LeaveOut(t, s.node, func(p []byte) bool {
				return slices.ContainsFunc(dropped, func(d []byte) bool { return string(d) == string(p) })
			})
			second, err := s.node.RPC().GetBlockHash(int64(tt.second))
			if err != nil {
				t.Fatal(err)
			}
			lie := peertest.Forge(t, s.node, keyPath, func(h int32, _ *wire.MsgBlock) bool { return h == keyPath || h == tt.second },
				func(b *wire.MsgBlock) []byte {
					if tt.drop == nil && b.BlockHash() == *second {
						return peertest.EmptyFilter(b)
					}
					return leaveOut(b)
				})
			liars := []string{
				peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, lie).Addr,
				peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, lie).Addr,
			}
			honest := peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, nil).Addr
			c := connectTo(t, s.node, 0, append(liars, honest)...)
			res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: watch, To: c.Chain().Height()})
			if err != nil {
				t.Fatal(err)
			}
			for _, tx := range []*wire.MsgTx{s.spend[peertest.P2TRKeyPath], s.lateWPKH, s.lateKeyPath} {
				if !hasMatch(res, tx.TxHash()) {
					t.Errorf("spend %v missing", tx.TxHash())
				}
			}
			var at []int32
			for _, k := range res.Conflicts {
				at = append(at, k.Height)
			}
			if !slices.Equal(at, tt.conflicts) {
				t.Errorf("conflicts at %v, want %v", at, tt.conflicts)
			}
			if st := status(t, res, honest); st.Banned || st.Reason != "" {
				t.Errorf("the honest peer: %+v", st)
			}
			for _, l := range liars {
				st := status(t, res, l)
				if st.Banned != tt.banned || tt.banned && !strings.Contains(st.Reason, fmt.Sprintf("(height %d): the block proves it false", tt.second)) {
					t.Errorf("colluder %s: %+v, want banned %v", l, st, tt.banned)
				}
			}
			t.Logf("conflicts %v; %d warnings", at, len(res.Warnings))
		})
	}
}

// TestSpendOfEveryTypeAttributed: a scan that starts after the payments,
// watching every script of the owner and no outpoint, finds each spend
// whose input shows the script it spends (a P2TR script-path spend
// included: its leaf script and control block commit to the output key),
// attributed to that script alone; the spends that show nothing (P2PK,
// bare multisig, P2TR key path) are not attributed, and their blocks are
// named as spend-only.
func TestSpendOfEveryTypeAttributed(t *testing.T) {
	s := needSpends(t)
	var watch []WatchItem
	for _, sc := range s.script {
		watch = append(watch, ScriptItem(sc))
	}
	c := connectTo(t, s.node, 0, s.node.P2PAddr)
	from := s.height[0]
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: watch, From: from, To: s.height[peertest.NumScriptKinds-1]})
	if err != nil {
		t.Fatal(err)
	}
	got := found(res)
	for k := range peertest.NumScriptKinds {
		items, ok := got[s.spend[k].TxHash()]
		switch {
		case reveals(k) && (!ok || !slices.Equal(items, []int{int(k)})):
			t.Errorf("the %v spend at height %d: items %v (found %v), want [%d]", k, s.height[k], items, ok, k)
		case !reveals(k) && ok:
			t.Errorf("the %v spend at height %d shows no script, yet is attributed to %v", k, s.height[k], items)
		case !reveals(k) && !slices.Contains(res.SpendOnlyBlocks, s.height[k]):
			t.Errorf("the %v spend's block %d is not named spend-only: %v", k, s.height[k], res.SpendOnlyBlocks)
		}
	}
}
