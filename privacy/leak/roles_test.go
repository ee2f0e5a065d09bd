package leak

import (
	"bytes"
	"io"
	"math"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

const (
	paid  = universe.RolePaid
	spent = universe.RoleSpent
)

// withRoles gives entry e the roles of an index of version 4: roles[i]
// for every transaction of its appearance i.
func withRoles(e universe.IndexEntry, roles ...universe.Role) universe.IndexEntry {
	for i, txs := range e.Txs {
		rs := make([]universe.Role, len(txs))
		for j := range rs {
			rs[j] = roles[i]
		}
		e.Roles = append(e.Roles, rs)
	}
	return e
}

// besideEntries are w, in 10 (transaction 1) and 100 (transaction 2) in
// the roles given, and beside it in 10 c, paid there, and p, paid there
// and spent in 50.
func besideEntries(first, second universe.Role) []universe.IndexEntry {
	return []universe.IndexEntry{
		withRoles(universe.IndexEntry{Candidate: "w", Heights: []int32{10, 100}, Txs: oneTx(1, 2)}, first, second),
		withRoles(universe.IndexEntry{Candidate: "c", Heights: []int32{10}, Txs: oneTx(1)}, paid),
		withRoles(universe.IndexEntry{Candidate: "p", Heights: []int32{10, 50}, Txs: oneTx(1, 3)}, paid, spent),
	}
}

// withoutRoles drops the roles of entries, as an index before version 4
// gives them.
func withoutRoles(entries []universe.IndexEntry) []universe.IndexEntry {
	for i := range entries {
		entries[i].Roles = nil
	}
	return entries
}

// payerEntries are the wallet's w, paid in 10, 30 and 40 and spent in 20,
// a payer's change c beside it in 40, paid by a transaction spending pin,
// and z riding beside w and pf, paid in 10, in 20 (as in TestPaidMember).
func payerEntries(pin universe.IndexEntry) []universe.IndexEntry {
	return []universe.IndexEntry{
		withRoles(universe.IndexEntry{Candidate: "w", Heights: []int32{10, 20, 30, 40}, Txs: oneTx(1, 1, 1, 1)}, paid, spent, paid, paid),
		withRoles(universe.IndexEntry{Candidate: "c", Heights: []int32{40}, Txs: oneTx(1)}, paid),
		withRoles(universe.IndexEntry{Candidate: "z", Heights: []int32{20}, Txs: oneTx(1)}, paid),
		withRoles(universe.IndexEntry{Candidate: "pf", Heights: []int32{10, 20}, Txs: oneTx(2, 1)}, paid, spent),
		pin,
	}
}

// TestRolesOfAppearances: what a rider beside a match has when the index
// records whether each appearance pays or spends the script (version 4),
// as an index made from a block after the wallet's coins were paid
// (privacy universe --from H) holds them: their first appearance there
// is a spend, not their creation. The session fetched 10, 20, 30, 40,
// 100 and 120 of 0..199 (evidenceReport).
func TestRolesOfAppearances(t *testing.T) {
	type want struct {
		share                 float64
		settled, beside, paid bool
	}
	settledRider := want{share: settledShare, settled: true}
	besideRider := want{share: paidShare, beside: true}
	paidRider := want{share: paidShare, paid: true}
	for _, c := range []struct {
		name    string
		entries []universe.IndexEntry
		want    map[string]want
	}{{
		// A payer pays the wallet's fresh w in 10 (transaction 1) beside
		// its change c and a payee p, spent in 50, which the session
		// scanned and did not fetch; the wallet spends w in 100. The
		// index made from the genesis block: c is beside a payment, as
		// without the roles (TestBesidePaymentMember).
		name:    "genesis: beside a payment",
		entries: besideEntries(paid, spent),
		want:    map[string]want{"c": besideRider},
	}, {
		// The wallet's w, paid before the index's first block, is spent
		// in 10 with its change c and the payee p (spent in 50), and
		// paid again in 100. Its first appearance in the index is the
		// wallet's spend, not a payment: c is the wallet's change,
		// settled by p.
		name:    "from H: the wallet's spend of a coin paid before",
		entries: besideEntries(spent, paid),
		want:    map[string]want{"c": settledRider},
	}, {
		// The same in an index of version 3, which cannot tell the spend
		// from a payment: c is beside a payment, as it always was.
		name:    "from H, version 3: cannot tell",
		entries: withoutRoles(besideEntries(spent, paid)),
		want:    map[string]want{"c": besideRider},
	}, {
		// a is paid in 10's transaction 1 and spent in its transaction
		// 4, beside c2 and p2 (spent in 60), and paid again in 100: a
		// coin spent in the block that paid it is mostly a payer's change
		// chained into its next payment, and c2 is beside a payment, as
		// without the roles.
		name: "created and spent in one block",
		entries: []universe.IndexEntry{
			{Candidate: "a", Heights: []int32{10, 100}, Txs: [][]uint32{{1, 4}, {2}}, Roles: [][]universe.Role{{paid, spent}, {paid}}},
			withRoles(universe.IndexEntry{Candidate: "c2", Heights: []int32{10}, Txs: oneTx(4)}, paid),
			withRoles(universe.IndexEntry{Candidate: "p2", Heights: []int32{10, 60}, Txs: oneTx(4, 3)}, paid, spent),
		},
		want: map[string]want{"c2": besideRider},
	}, {
		// A payer spends its coin pin, paid before the index's first
		// block and paid again in 45 (scanned, not fetched), to pay the
		// wallet's w in 40 with its change c: the transaction spends a
		// coin no match holds, so c is paid. Read as pin's creation, the
		// spend left c settled by pin's appearance in 45.
		name:    "from H: a payer's coin paid before",
		entries: payerEntries(withRoles(universe.IndexEntry{Candidate: "pin", Heights: []int32{40, 45}, Txs: oneTx(1, 3)}, spent, paid)),
		want:    map[string]want{"c": paidRider},
	}, {
		// The same from the genesis block: pin paid in 5, which the
		// session did not fetch, and spent in 40 (TestPaidMember).
		name:    "genesis: a payer's coin",
		entries: payerEntries(withRoles(universe.IndexEntry{Candidate: "pin", Heights: []int32{5, 40}, Txs: oneTx(3, 1)}, paid, spent)),
		want:    map[string]want{"c": paidRider},
	}} {
		t.Run(c.name, func(t *testing.T) {
			r := evidenceReport(c.entries)
			found := 0
			for _, m := range r.Matched {
				w, ok := c.want[m.Candidate]
				if !ok {
					continue
				}
				found++
				if m.Group == 0 {
					t.Fatalf("%s in no group", m.Candidate)
				}
				g := r.Groups[m.Group-1]
				if math.Abs(m.Probability-g.Probability*w.share) > 1e-9 || m.Settled != w.settled || m.BesidePayment != w.beside || m.Paid != w.paid {
					t.Errorf("%s: P %.4f (group %.4f) settled %v, beside a payment %v, paid %v: want %.2f of the group's, settled %v, beside %v, paid %v",
						m.Candidate, m.Probability, g.Probability, m.Settled, m.BesidePayment, m.Paid, w.share, w.settled, w.beside, w.paid)
				}
			}
			if found != len(c.want) {
				t.Errorf("%d of %d riders matched", found, len(c.want))
			}
		})
	}
}

// rolesChain is a chain of 200 blocks, each a coinbase, in which the
// wallet's coin w is paid in block 5, spent in block 10 (transaction 1)
// to a payee p and the wallet's change c, and paid again in 100; p is
// spent in 50.
func rolesChain(t *testing.T) (blocks []*wire.MsgBlock, c string) {
	t.Helper()
	params := &chaincfg.RegressionNetParams
	key := func(n byte) ([]byte, []byte, string) {
		pub := make([]byte, 33)
		pub[0] = 2
		for i := 1; i < 33; i++ {
			pub[i] = n + byte(i)
		}
		a, err := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(pub), params)
		if err != nil {
			t.Fatal(err)
		}
		s, err := txscript.PayToAddrScript(a)
		if err != nil {
			t.Fatal(err)
		}
		return pub, s, a.EncodeAddress()
	}
	wPub, wScript, _ := key(1)
	pPub, pScript, _ := key(2)
	_, cScript, c := key(3)
	pay := func(spend []byte, outs ...[]byte) *wire.MsgTx {
		tx := wire.NewMsgTx(2)
		in := &wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: uint32(len(blocks))}, SignatureScript: []byte{0x51}}
		if spend != nil {
			in = &wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: uint32(len(blocks))}, Witness: wire.TxWitness{make([]byte, 71), spend}}
		}
		tx.AddTxIn(in)
		for _, o := range outs {
			tx.AddTxOut(wire.NewTxOut(1, o))
		}
		return tx
	}
	for h := range 200 {
		cb := wire.NewMsgTx(1)
		cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{byte(h), 1}})
		b := &wire.MsgBlock{Header: wire.BlockHeader{Nonce: uint32(h)}, Transactions: []*wire.MsgTx{cb}}
		switch h {
		case 5, 100:
			b.Transactions = append(b.Transactions, pay(nil, wScript))
		case 10:
			b.Transactions = append(b.Transactions, pay(wPub, pScript, cScript))
		case 50:
			b.Transactions = append(b.Transactions, pay(pPub))
		}
		blocks = append(blocks, b)
	}
	return blocks, c
}

// indexEntries is the appearance index of blocks from..199, as privacy
// universe --from writes it, read back.
func indexEntries(t *testing.T, blocks []*wire.MsgBlock, from int32) []universe.IndexEntry {
	t.Helper()
	params := &chaincfg.RegressionNetParams
	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	uw := universe.NewWriter(io.Discard, params)
	uw.SetIndex(ix)
	hd := &universe.IndexHeader{Network: params.Name, First: from}
	for h := from; h < int32(len(blocks)); h++ {
		if err := uw.AddBlock(h, blocks[h]); err != nil {
			t.Fatal(err)
		}
		hd.Hashes = append(hd.Hashes, blocks[h].BlockHash())
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	ir, err := universe.NewIndexReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var entries []universe.IndexEntry
	for {
		e, err := ir.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, *e)
	}
}

// TestRolesFromHeight: on rolesChain, a session that fetched the blocks
// of the wallet's coin w (5, 10 and 100, and 20, 30, 40 and 120) and not
// 50, where p is spent, sees w's change c settled by p: on the index
// made from the genesis block, and on one made from block 8, after w was
// paid, which first sees w where it is spent, so long as the index
// records that (version 4). Read as w's creation (an index that does not
// record the roles), the spend makes c the payer's change beside a
// payment.
func TestRolesFromHeight(t *testing.T) {
	blocks, c := rolesChain(t)
	fetched := []int{5, 10, 20, 30, 40, 100, 120}
	for _, tc := range []struct {
		name            string
		entries         []universe.IndexEntry
		settled, beside bool
	}{
		{"from the genesis block", indexEntries(t, blocks, 0), true, false},
		{"from the genesis block, no roles", withoutRoles(indexEntries(t, blocks, 0)), true, false},
		{"from block 8", indexEntries(t, blocks, 8), true, false},
		{"from block 8, no roles", withoutRoles(indexEntries(t, blocks, 8)), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := scanReport("", fetched, tc.entries)
			i := slices.IndexFunc(r.Matched, func(m Match) bool { return m.Candidate == c })
			if i < 0 {
				t.Fatalf("%s not matched", c)
			}
			m := r.Matched[i]
			share := settledShare
			if tc.beside {
				share = paidShare
			}
			g := r.Groups[m.Group-1]
			if m.Settled != tc.settled || m.BesidePayment != tc.beside || math.Abs(m.Probability-g.Probability*share) > 1e-9 {
				t.Errorf("%s: P %.4f (group %.4f), settled %v, beside a payment %v; want %.2f of the group's, settled %v, beside %v",
					c, m.Probability, g.Probability, m.Settled, m.BesidePayment, share, tc.settled, tc.beside)
			}
		})
	}
}
