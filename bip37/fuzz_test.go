package bip37

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// FuzzDecodeFilterLoad feeds arbitrary payloads to the strict decoder: it
// must never panic, must fail with one of the package's sentinel errors,
// and whatever it accepts must encode back to the same bytes.
func FuzzDecodeFilterLoad(f *testing.F) {
	for _, s := range []string{
		"03614e9b050000000000000001", "03ce4299050000000100008001", "038fc16b080000000000000001",
		"00000000000000000000", "fd0300614e9b050000000000000001", "ffffffffffffffffff",
		"03614e9b330000000000000001", "03614e9b050000000000000003", "",
	} {
		f.Add(mustHex(f, s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		flt, err := DecodeFilterLoad(payload)
		if err != nil {
			for _, want := range []error{ErrTruncated, ErrTrailingData, ErrNonCanonicalSize, ErrFilterTooLarge, ErrTooManyHashFuncs} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		again, err := flt.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, payload) {
			t.Fatalf("re-encoding %x gives %x", payload, again)
		}
	})
}

// refContains is Core's CBloomFilter::contains transcribed plainly, the
// reference for the fuzzed matcher.
func refContains(bitArray []byte, k, tweak uint32, data []byte) bool {
	if len(bitArray) == 0 {
		return true
	}
	for i := uint32(0); i < k; i++ {
		idx := MurmurHash3(i*0xFBA4C795+tweak, data) % uint32(len(bitArray)*8)
		if bitArray[idx>>3]&(1<<(idx&7)) == 0 {
			return false
		}
	}
	return true
}

func refAdd(bitArray []byte, k, tweak uint32, data []byte) {
	if len(bitArray) == 0 {
		return
	}
	for i := uint32(0); i < k; i++ {
		idx := MurmurHash3(i*0xFBA4C795+tweak, data) % uint32(len(bitArray)*8)
		bitArray[idx>>3] |= 1 << (idx & 7)
	}
}

// refMatch is IsRelevantAndUpdate written independently of match.go: btcd's
// script tokenizer for the pushes (it stops at a malformed push, as Core's
// GetOp loop does) and btcd's TxHash for the txid.
func refMatch(bitArray []byte, k, tweak uint32, flags wire.BloomUpdateType, tx *wire.MsgTx) bool {
	if len(bitArray) == 0 {
		return true
	}
	contains := func(d []byte) bool { return refContains(bitArray, k, tweak, d) }
	txid := tx.TxHash()
	found := contains(txid[:])
	outpoint := func(op *wire.OutPoint) []byte {
		return binary.LittleEndian.AppendUint32(append([]byte(nil), op.Hash[:]...), op.Index)
	}
	for i, out := range tx.TxOut {
		tok := txscript.MakeScriptTokenizer(0, out.PkScript)
		for tok.Next() {
			if d := tok.Data(); len(d) == 0 || !contains(d) {
				continue
			}
			found = true
			if flags&3 == wire.BloomUpdateAll || flags&3 == wire.BloomUpdateP2PubkeyOnly && (isPayToPubKey(out.PkScript) || isMultisig(out.PkScript)) {
				refAdd(bitArray, k, tweak, outpoint(wire.NewOutPoint(&txid, uint32(i))))
			}
			break
		}
	}
	if found {
		return true
	}
	for _, in := range tx.TxIn {
		if contains(outpoint(&in.PreviousOutPoint)) {
			return true
		}
		tok := txscript.MakeScriptTokenizer(0, in.SignatureScript)
		for tok.Next() {
			if d := tok.Data(); len(d) > 0 && contains(d) {
				return true
			}
		}
	}
	return false
}

// FuzzMatchTxAndUpdate runs the optimized matcher against refMatch on
// fuzzed filters and transactions. Bytes that do not decode as a
// transaction are used as raw output and input scripts, so the script
// parser sees arbitrary input either way.
func FuzzMatchTxAndUpdate(f *testing.F) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 6; i++ {
		tx := genTx(r, true)
		var buf bytes.Buffer
		if err := tx.SerializeNoWitness(&buf); err != nil {
			f.Fatal(err)
		}
		pushes := pushesOf(tx)
		flt := NewFilter(3, 0.01, r.Uint32(), wire.BloomUpdateType(i%3))
		flt.Add(pushes[i%len(pushes)])
		payload, _ := flt.MarshalBinary()
		f.Add(payload, buf.Bytes())
	}
	f.Add(mustHex(f, "00000000000000000000"), []byte{0x00, 0x14})
	f.Add(mustHex(f, "03614e9b050000000000000001"), []byte{0x4c, 0xff, 0x01})
	f.Add(mustHex(f, "03614e9b050000000000000002"), []byte{0x51, 0x21, 0x02, 0x51, 0xae})
	f.Fuzz(func(t *testing.T, payload, txBytes []byte) {
		flt, err := DecodeFilterLoad(payload)
		if err != nil {
			return
		}
		tx := new(wire.MsgTx)
		if len(txBytes) > 100000 || tx.DeserializeNoWitness(bytes.NewReader(txBytes)) != nil {
			tx = wire.NewMsgTx(1)
			tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{}, txBytes, nil))
			tx.AddTxOut(wire.NewTxOut(0, txBytes))
		}
		ref := flt.Bits()
		want := refMatch(ref, flt.HashFuncs(), flt.Tweak(), flt.Flags(), tx)
		if got := flt.MatchTxAndUpdate(tx); got != want {
			t.Fatalf("MatchTxAndUpdate = %v, reference %v", got, want)
		}
		if !bytes.Equal(flt.Bits(), ref) {
			t.Fatal("filter bits differ from the reference after the update")
		}
	})
}
