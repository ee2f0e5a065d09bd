package bip37

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

func TestTxidMatchesBtcd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	f := NewFilter(10, 0.01, 0, 0)
	for i := 0; i < 500; i++ {
		tx := genTx(r, true)
		if i%10 == 0 { // exercise the longer CompactSize encodings
			tx.TxOut[0].PkScript = randBytes(r, 253+r.IntN(70000))
		}
		if got, want := f.txid(tx), tx.TxHash(); got != want {
			t.Fatalf("txid %v, btcd %v", got, want)
		}
	}
}

// TestMatchTxAndUpdateAgainstBtcutil runs random wallets' filters over
// random transactions in both implementations and compares every answer and
// the filter bits after every transaction. btcutil tests the empty push of
// OP_0 (as in a P2WPKH output) where Core skips it, so a round stops early
// if the filter happens to contain the empty element.
func TestMatchTxAndUpdateAgainstBtcutil(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var compared, matched, stopped int
	for round := 0; round < 400; round++ {
		txs := make([]*wire.MsgTx, 40)
		for i := range txs {
			txs[i] = genTx(r, true)
		}
		f, err := NewFilterFromParams(make([]byte, 20+r.IntN(400)), 1+uint32(r.IntN(15)), r.Uint32(), wire.BloomUpdateType(r.IntN(3)))
		if err != nil {
			t.Fatal(err)
		}
		// A wallet's elements: pushes of a few transactions, some txids
		// and outpoints, and random noise.
		for i := 0; i < 4; i++ {
			tx := txs[r.IntN(len(txs))]
			pushes := pushesOf(tx)
			f.Add(pushes[r.IntN(len(pushes))])
		}
		txid := txs[r.IntN(len(txs))].TxHash()
		f.Add(txid[:])
		f.AddOutPoint(&txs[r.IntN(len(txs))].TxIn[0].PreviousOutPoint)
		f.Add(randBytes(r, 20))
		oracle := btcutilFilter(f)
		for i, tx := range txs {
			if f.Contains(nil) {
				stopped++
				break
			}
			got := f.MatchTxAndUpdate(tx)
			want := oracle.MatchTxAndUpdate(btcutil.NewTx(tx))
			if got != want {
				t.Fatalf("round %d tx %d: MatchTxAndUpdate = %v, btcutil %v (flags %d)", round, i, got, want, f.Flags())
			}
			if !bytes.Equal(f.Bits(), oracle.MsgFilterLoad().Filter) {
				t.Fatalf("round %d tx %d: filter bits differ after update (flags %d)", round, i, f.Flags())
			}
			if n := popCount(f.data); f.fill < f.sparseLimit && n > f.fill || f.fill >= f.sparseLimit && n < f.sparseLimit {
				t.Fatalf("round %d tx %d: fill %d, array has %d bits set", round, i, f.fill, n)
			}
			compared++
			if got {
				matched++
			}
		}
	}
	if matched < compared/20 || stopped > 100 {
		t.Fatalf("weak test: %d of %d transactions matched, %d rounds stopped", matched, compared, stopped)
	}
	t.Logf("%d transactions compared, %d matched, %d rounds stopped early", compared, matched, stopped)
}

// filterWith returns a filter holding the given elements.
func filterWith(flags wire.BloomUpdateType, elems ...[]byte) *Filter {
	f := NewFilter(10, 0.000001, 0, flags)
	for _, e := range elems {
		f.Add(e)
	}
	return f
}

func txWithOutputs(scripts ...[]byte) *wire.MsgTx {
	tx := wire.NewMsgTx(1)
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{1}, 0), nil, nil))
	for _, s := range scripts {
		tx.AddTxOut(wire.NewTxOut(1000, s))
	}
	return tx
}

// TestMatchCoreRules pins down Core's IsRelevantAndUpdate on the cases
// where a simpler reading (or btcutil) differs. wantBtcutil records
// btcutil's answer where it differs from Core's.
func TestMatchCoreRules(t *testing.T) {
	elem := bytes.Repeat([]byte{0xab}, 20)
	other := bytes.Repeat([]byte{0xcd}, 20)
	push := func(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }
	witnessTx := txWithOutputs(p2pkhScript(other))
	witnessTx.TxIn[0].Witness = wire.TxWitness{elem}
	scriptSigTx := txWithOutputs(p2pkhScript(other))
	scriptSigTx.TxIn[0].SignatureScript = append(push(other), push(elem)...)
	emptySigTx := txWithOutputs(p2pkhScript(other))
	emptySigTx.TxIn[0].SignatureScript = []byte{0x00, 0x00}
	tests := []struct {
		name        string
		filter      *Filter
		tx          *wire.MsgTx
		want        bool
		wantBtcutil *bool
	}{
		{"output push", filterWith(0, elem), txWithOutputs(p2pkhScript(elem)), true, nil},
		{"no match", filterWith(0, elem), txWithOutputs(p2pkhScript(other)), false, nil},
		// Core skips empty pushes; btcutil tests OP_0's empty data.
		{"empty push skipped", filterWith(0, []byte{}), txWithOutputs([]byte{0x00}), false, ptr(true)},
		// Core tests the pushes before a malformed one; btcutil drops the
		// whole script.
		{"push before a malformed push counts", filterWith(0, elem), txWithOutputs(append(push(elem), 0x4c)), true, ptr(false)},
		{"push after a malformed push is not reached", filterWith(0, elem), txWithOutputs(append([]byte{0x05, 0x01}, push(elem)...)), false, nil},
		{"scriptSig push", filterWith(0, elem), scriptSigTx, true, nil},
		{"empty scriptSig push skipped", filterWith(0, []byte{}), emptySigTx, false, ptr(true)},
		{"witness is never examined", filterWith(0, elem), witnessTx, false, nil},
		{"OP_1..OP_16 are not data", filterWith(0, []byte{1}), txWithOutputs([]byte{op1}), false, nil},
		{"PUSHDATA1 data", filterWith(0, elem), txWithOutputs(append([]byte{opPushData1, 20}, elem...)), true, nil},
		{"PUSHDATA2 data", filterWith(0, elem), txWithOutputs(append([]byte{opPushData2, 20, 0}, elem...)), true, nil},
		{"PUSHDATA4 data", filterWith(0, elem), txWithOutputs(append([]byte{opPushData4, 20, 0, 0, 0}, elem...)), true, nil},
		{"PUSHDATA4 length beyond the script", filterWith(0, elem), txWithOutputs(append([]byte{opPushData4, 20, 0, 0, 1}, elem...)), false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oracle := btcutilFilter(tt.filter)
			if got := tt.filter.MatchTxAndUpdate(tt.tx); got != tt.want {
				t.Errorf("MatchTxAndUpdate = %v, want %v", got, tt.want)
			}
			wantB := tt.want
			if tt.wantBtcutil != nil {
				wantB = *tt.wantBtcutil
			}
			if got := oracle.MatchTxAndUpdate(btcutil.NewTx(tt.tx)); got != wantB {
				t.Errorf("btcutil says %v, the table expects %v", got, wantB)
			}
		})
	}
}

func TestMatchUpdateFlags(t *testing.T) {
	pub := genPubKey(rand.New(rand.NewPCG(1, 1)), true)
	hash := bytes.Repeat([]byte{0x11}, 20)
	tests := []struct {
		name    string
		flags   wire.BloomUpdateType
		script  []byte
		elem    []byte
		outAdds bool
	}{
		{"none p2pkh", wire.BloomUpdateNone, p2pkhScript(hash), hash, false},
		{"all p2pkh", wire.BloomUpdateAll, p2pkhScript(hash), hash, true},
		{"p2pubkey-only p2pkh", wire.BloomUpdateP2PubkeyOnly, p2pkhScript(hash), hash, false},
		{"p2pubkey-only p2pk", wire.BloomUpdateP2PubkeyOnly, p2pkScript(pub), pub, true},
		{"p2pubkey-only multisig", wire.BloomUpdateP2PubkeyOnly, multisigScript(1, [][]byte{pub}), pub, true},
		{"none p2pk", wire.BloomUpdateNone, p2pkScript(pub), pub, false},
		// Core masks the flags with 3: 3 is no rule, 5 is "all".
		{"flags 3 update nothing", 3, p2pkhScript(hash), hash, false},
		{"flags 5 act as all", 5, p2pkhScript(hash), hash, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filterWith(tt.flags, tt.elem)
			tx := txWithOutputs(p2pkhScript(bytes.Repeat([]byte{0x22}, 20)), tt.script)
			if !f.MatchTxAndUpdate(tx) {
				t.Fatal("no match")
			}
			txid := tx.TxHash()
			if got := f.ContainsOutPoint(wire.NewOutPoint(&txid, 1)); got != tt.outAdds {
				t.Errorf("outpoint added = %v, want %v", got, tt.outAdds)
			}
		})
	}
}

// TestMatchEveryMatchingOutputAdded checks that the break after a matching
// push ends only that output's loop: each matching output adds its
// outpoint.
func TestMatchEveryMatchingOutputAdded(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, 20), bytes.Repeat([]byte{2}, 20)
	f := filterWith(wire.BloomUpdateAll, a, b)
	tx := txWithOutputs(p2pkhScript(a), p2pkhScript(bytes.Repeat([]byte{3}, 20)), p2pkhScript(b))
	f.MatchTxAndUpdate(tx)
	txid := tx.TxHash()
	for i, want := range []bool{true, false, true} {
		if got := f.ContainsOutPoint(wire.NewOutPoint(&txid, uint32(i))); got != want {
			t.Errorf("output %d: outpoint in filter = %v, want %v", i, got, want)
		}
	}
}

func TestIsPayToPubKey(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	key := func(header byte, n int) []byte { k := randBytes(r, n); k[0] = header; return k }
	tests := []struct {
		name   string
		script []byte
		want   bool
	}{
		{"compressed 02", p2pkScript(key(2, 33)), true},
		{"compressed 03", p2pkScript(key(3, 33)), true},
		{"uncompressed 04", p2pkScript(key(4, 65)), true},
		{"hybrid 06", p2pkScript(key(6, 65)), true},
		{"hybrid 07", p2pkScript(key(7, 65)), true},
		{"bad header 05", p2pkScript(key(5, 65)), false},
		{"04 header with 33 bytes", p2pkScript(key(4, 33)), false},
		{"02 header with 65 bytes", p2pkScript(key(2, 65)), false},
		{"no checksig", append(p2pkScript(key(2, 33))[:34], 0xad), false},
		{"p2pkh", p2pkhScript(make([]byte, 20)), false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := isPayToPubKey(tt.script); got != tt.want {
			t.Errorf("%s: isPayToPubKey = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsMultisig(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	keys := func(n int) [][]byte {
		var ks [][]byte
		for i := 0; i < n; i++ {
			ks = append(ks, genPubKey(r, i%2 == 0))
		}
		return ks
	}
	// pushCount builds <m via 1-byte push> keys <n via 1-byte push>
	// OP_CHECKMULTISIG, as Core allows for counts 17..20.
	pushCount := func(m, n int, ks [][]byte) []byte {
		s := []byte{1, byte(m)}
		for _, k := range ks {
			s = append(s, byte(len(k)))
			s = append(s, k...)
		}
		return append(s, 1, byte(n), opCheckMultiSig)
	}
	hybrid := randBytes(r, 65)
	hybrid[0] = 6
	tests := []struct {
		name   string
		script []byte
		want   bool
	}{
		{"1-of-1", multisigScript(1, keys(1)), true},
		{"2-of-3", multisigScript(2, keys(3)), true},
		{"16-of-16", multisigScript(16, keys(16)), true},
		{"hybrid key", multisigScript(1, [][]byte{hybrid}), true},
		{"m > n", append([]byte{op1 + 2}, multisigScript(1, keys(2))[1:]...), false},
		{"n does not count the keys", append(multisigScript(1, keys(2))[:len(multisigScript(1, keys(2)))-2], op1+2, opCheckMultiSig), false},
		{"17-of-17 with pushed counts", pushCount(17, 17, keys(17)), true},
		{"20-of-20 with pushed counts", pushCount(20, 20, keys(20)), true},
		{"21 keys", pushCount(1, 21, keys(21)), false},
		{"non-minimal pushed count 5", pushCount(5, 5, keys(5)), false},
		{"zero required", append([]byte{0x00}, multisigScript(1, keys(1))[1:]...), false},
		{"bad key size", multisigScript(1, [][]byte{make([]byte, 33)}), false},
		{"trailing op", append(multisigScript(1, keys(1))[:len(multisigScript(1, keys(1)))-1], 0x61, opCheckMultiSig), false},
		{"only checkmultisig", []byte{opCheckMultiSig}, false},
		{"truncated key", []byte{op1, 33, 2, op1, opCheckMultiSig}, false},
	}
	for _, tt := range tests {
		if got := isMultisig(tt.script); got != tt.want {
			t.Errorf("%s: isMultisig = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMatchTxAndUpdateAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	tx := genTx(r, false)
	f := NewFilter(100, 0.0001, 0, wire.BloomUpdateAll)
	f.Add([]byte("not in the transaction"))
	f.MatchTxAndUpdate(tx) // warm the buffer
	if n := testing.AllocsPerRun(100, func() { f.MatchTxAndUpdate(tx) }); n != 0 {
		t.Errorf("MatchTxAndUpdate allocates %v times per call", n)
	}
	e := make([]byte, 20)
	if n := testing.AllocsPerRun(100, func() { f.Add(e); f.Contains(e) }); n != 0 {
		t.Errorf("Add+Contains allocate %v times per call", n)
	}
}
