package client

import (
	"encoding/binary"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// roundAmount is the unit a payee's amount is a multiple of, in the
// round-amount rule of changeOf: 100,000 satoshis (1 mBTC).
const roundAmount = 100_000

// ownerChains numbers the scripts of txs by owner, as a chain analyst
// reads ownership (the rule is in the covers' doc, covers.go): the
// scripts a transaction's inputs spend are one owner's, and so is its
// change (changeOf); a payee is its own, joined to another's only where
// a transaction of txs spends it. Scripts of a type the attack does not
// name are left out. It returns each script's chain, an index from 0.
func ownerChains(txs []*wire.MsgTx) map[string]int {
	ids := map[string]int{}
	var u unions
	id := func(s []byte) int {
		i, ok := ids[string(s)]
		if !ok {
			i = len(u)
			ids[string(s)] = i
			u = append(u, i)
		}
		return i
	}
	for _, tx := range txs {
		owner := -1
		join := func(s []byte) {
			if leak.TypeOf(s) == leak.TypeOther {
				return
			}
			i := id(s)
			if owner < 0 {
				owner = i
			}
			u.join(i, owner)
		}
		for _, in := range tx.TxIn {
			_, spent := gcs.SpendCandidates(in)
			for _, s := range spent {
				join(s)
			}
		}
		change := changeOf(tx)
		for j, o := range tx.TxOut {
			if j == change {
				join(o.PkScript)
			} else if leak.TypeOf(o.PkScript) != leak.TypeOther {
				id(o.PkScript)
			}
		}
	}
	out := make(map[string]int, len(ids))
	for s, i := range ids {
		out[s] = u.find(i)
	}
	return out
}

// changeOf is the index of tx's change output, as a chain analyst
// tells it without labels, or -1 where tx pays none: one output is a
// payment (or a sweep, which looks the same); of two or more, the one
// output of the type every input spends where the others are of
// another type; else the one output whose amount is not a multiple of
// roundAmount where every other is (a payee's amount is rounded, the
// change is what is left); else, no rule deciding, the output tx's
// hash picks, since then the analyst holds every reading as likely as
// the others.
func changeOf(tx *wire.MsgTx) int {
	n := len(tx.TxOut)
	if n < 2 {
		return -1
	}
	if in := inputTypes(tx); len(in) > 0 {
		if i := onlyOne(n, func(j int) bool { return in[leak.TypeOf(tx.TxOut[j].PkScript)] }); i >= 0 {
			return i
		}
	}
	if i := onlyOne(n, func(j int) bool { return tx.TxOut[j].Value%roundAmount != 0 }); i >= 0 {
		return i
	}
	h := tx.TxHash()
	return int(binary.LittleEndian.Uint64(h[:8]) % uint64(n))
}

// inputTypes are the script types every input of tx may spend, as
// its signature script or witness shows them (gcs.SpendCandidates: a
// public key may be a P2PKH's or a P2SH's): none where an input shows
// nothing.
func inputTypes(tx *wire.MsgTx) map[leak.ScriptType]bool {
	var all map[leak.ScriptType]bool
	for _, in := range tx.TxIn {
		_, spent := gcs.SpendCandidates(in)
		types := map[leak.ScriptType]bool{}
		for _, s := range spent {
			if t := leak.TypeOf(s); t != leak.TypeOther && (all == nil || all[t]) {
				types[t] = true
			}
		}
		if len(types) == 0 {
			return nil
		}
		all = types
	}
	return all
}

// onlyOne is the one j below n for which is holds, or -1 where none or
// several do.
func onlyOne(n int, is func(int) bool) int {
	found := -1
	for j := range n {
		if is(j) {
			if found >= 0 {
				return -1
			}
			found = j
		}
	}
	return found
}

// unions is a union-find of 0..n-1: each element's parent, a root its
// own.
type unions []int

func newUnions(n int) unions {
	u := make(unions, n)
	for i := range u {
		u[i] = i
	}
	return u
}

// find is x's root.
func (u unions) find(x int) int {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

// join puts a and b in one set.
func (u unions) join(a, b int) { u[u.find(a)] = u.find(b) }
