package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendInterruptedSaysGiven: a send that Ctrl-C ends says whether
// the transaction had been given to a peer (it may then reach the
// network) or to none. The peer is Core-like: it takes the transaction
// and gives no verdict, announcing it only two minutes after it came,
// so the send is still waiting once the node's mempool holds it, and is
// interrupted then.
func TestSendInterruptedSaysGiven(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeTicks(2*time.Minute))
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	cmd, stderr, done := startMain(t, "send", "--connect", core.Addr, "--network", "regtest", "--timeout", "30s", hex.EncodeToString(buf.Bytes()))
	inMempool := false
	for end := time.Now().Add(20 * time.Second); !inMempool && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		inMempool = node.InMempool(t, tx.TxHash())
	}
	if !inMempool {
		cmd.Process.Kill()
		<-done
		t.Fatalf("the node never got the transaction; stderr %q", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	endsInterrupted(t, cmd, done, 40*time.Second, stderr)
	want := "spvfilter: send interrupted: " + tx.TxHash().String() + " was given to --connect " + core.Addr + " before it ended: they may relay it"
	if got := strings.TrimSpace(stderr.String()); !strings.Contains(got, want) {
		t.Errorf("stderr %q, want it to say %q", got, want)
	}
}
