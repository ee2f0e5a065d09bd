package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendUnsigned: a transaction sent unsigned, as createrawtransaction
// builds it (input scripts and witnesses empty), fails naming the inputs
// that are empty and asking whether it was signed, beside the node's
// reason; before, the node's script-engine words alone ("index 0 is
// invalid for stack size 0") were all there was. A signed transaction a
// node refuses for another reason gets no such words.
func TestSendUnsigned(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	pay := wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript())
	one := node.BuildCoinbaseSpend(t, pay)
	two := node.BuildCoinbaseSpend(t, pay)
	two.AddTxIn(one.TxIn[0]) // two coinbases spent
	spent := node.SpendCoinbase(t, pay)
	node.Confirm(t, spent)
	double := spent.Copy() // signed, its coinbase spent already
	double.TxOut[0].Value--
	unsigned := func(tx *wire.MsgTx, inputs ...int) *wire.MsgTx {
		tx = tx.Copy()
		for _, i := range inputs {
			tx.TxIn[i].SignatureScript, tx.TxIn[i].Witness = nil, nil
		}
		return tx
	}
	const hint = "is the transaction signed? (createrawtransaction builds it unsigned: sign it first"
	rows := []struct {
		name string
		tx   *wire.MsgTx
		want string // in stderr; "" for no hint
	}{
		{"one input, unsigned", unsigned(one, 0), "; input 0 has neither an input script nor a witness: " + hint},
		{"two inputs, both unsigned", unsigned(two, 0, 1), "; its 2 inputs have neither an input script nor a witness: " + hint},
		{"two inputs, the second unsigned", unsigned(two, 1), "; input 1 has neither an input script nor a witness: " + hint},
		{"signed, spending a spent output", double, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := r.tx.Serialize(&buf); err != nil {
				t.Fatal(err)
			}
			_, stderr, status := runCLI(t, "", "send", "--connect", node.P2PAddr, "--network", "regtest", "--timeout", "5s", hex.EncodeToString(buf.Bytes()))
			if status != exitFailure || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--connect "+node.P2PAddr) {
				t.Fatalf("status %d, stderr %q; want 1 and one line naming the node", status, stderr)
			}
			if r.want == "" && strings.Contains(stderr, "signed?") {
				t.Errorf("stderr %q asks whether a signed transaction is signed", stderr)
			}
			if r.want != "" && !strings.Contains(stderr, r.want) {
				t.Errorf("stderr %q lacks %q", stderr, r.want)
			}
		})
	}
}
