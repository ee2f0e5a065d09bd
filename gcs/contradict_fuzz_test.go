package gcs

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// FuzzCheckBasic feeds CheckBasic untrusted blocks and filters. It must
// never panic; a filter is Undecodable exactly when DecodeBasic refuses
// it; a contradiction names scripts the filter does not hold; every input
// but the coinbase's is counted once. And it must never contradict the
// filter of the block built from the block's outputs and, for each input,
// one of the scripts it may spend (SpentScripts) or, for an input that
// shows nothing, any script: what an honest node could have built.
func FuzzCheckBasic(f *testing.F) {
	for _, v := range loadVectors(f) {
		var buf bytes.Buffer
		if err := v.Block.Serialize(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), v.Filter, uint8(0))
	}
	block, prevs := spendBlock(everySpend(f))
	honest, err := BuildBasic(block, prevs)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := block.Serialize(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), honest.NBytes(), uint8(1))
	f.Fuzz(func(t *testing.T, raw, filter []byte, pick uint8) {
		if len(raw) > 200_000 {
			return
		}
		var block wire.MsgBlock
		if err := block.Deserialize(bytes.NewReader(raw)); err != nil {
			return
		}
		res := CheckBasicBytes(&block, filter)
		fl, err := DecodeBasic(filter)
		if (err != nil) != (res.Contradiction != nil && res.Contradiction.Kind == Undecodable) {
			t.Fatalf("DecodeBasic: %v; CheckBasicBytes: %v", err, res.Contradiction)
		}
		if err == nil {
			checkContradiction(t, &block, fl, res)
		}
		// An honest node's filter: never contradicted.
		var chosen [][]byte
		for i, tx := range block.Transactions {
			if i == 0 {
				continue
			}
			for j, in := range tx.TxIn {
				_, cands := SpentScripts(tx, j)
				if len(cands) > 0 {
					chosen = append(chosen, cands[int(pick)%len(cands)])
					continue
				}
				sum := sha256.Sum256(append([]byte{pick}, in.SignatureScript...))
				chosen = append(chosen, sum[:int(pick)%33])
			}
		}
		built, err := BuildBasic(&block, chosen)
		if err != nil {
			return // more items than a filter holds
		}
		got := CheckBasic(&block, built)
		if got.Contradiction != nil {
			t.Fatalf("the filter of the block's outputs and one script each input may spend is contradicted: %v", got.Contradiction)
		}
		checkContradiction(t, &block, built, got)
	})
}

// checkContradiction checks what CheckBasic said of f: the inputs
// counted, and a contradiction's scripts not in the filter.
func checkContradiction(t *testing.T, block *wire.MsgBlock, f *Filter, res BasicCheck) {
	t.Helper()
	inputs := 0
	for i, tx := range block.Transactions {
		if i > 0 {
			inputs += len(tx.TxIn)
		}
	}
	counted := 0
	for _, n := range res.Inputs {
		counted += n
	}
	if counted != inputs {
		t.Fatalf("%d inputs counted, the block has %d", counted, inputs)
	}
	c := res.Contradiction
	if c == nil {
		return
	}
	hash := block.BlockHash()
	key := BasicKey(&hash)
	switch c.Kind {
	case MissingOutput, MissingSpent:
		if len(c.Scripts) == 0 || f.MatchAny(key, c.Scripts) {
			t.Fatalf("%v: names %x, which the filter holds", c, c.Scripts)
		}
	case TooFew, TooMany:
		if int(f.N()) >= c.Min && int(f.N()) <= c.Max {
			t.Fatalf("%v: N %d is within %d..%d", c, f.N(), c.Min, c.Max)
		}
	default:
		t.Fatalf("contradiction of kind %d on a filter that decodes", c.Kind)
	}
	if c.Error() == "" {
		t.Fatal("a contradiction without a message")
	}
}
