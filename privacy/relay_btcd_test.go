package privacy

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
)

// TestRelayWithBtcdAndPeer runs our light client through the relay to a
// real btcd: the scan must work as if connected directly, and the capture
// must hold the filter the client loaded, ready for Analyze.
func TestRelayWithBtcdAndPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	alice, bob := peertest.NewKey("privacy-alice"), peertest.NewKey("privacy-bob")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	node.Generate(t, 6)

	var out bytes.Buffer // read once Serve has returned
	r, err := capture.NewRelay(capture.RelayConfig{Listen: "127.0.0.1:0", Upstream: node.P2PAddr, Net: node.Params.Net, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	p, err := peer.Dial(ctx, peer.Config{Addr: r.Addr().String(), Params: node.Params, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := chain.New(node.Params)
	if _, err := p.SyncHeaders(ctx, c); err != nil {
		t.Fatal(err)
	}
	// The filter a wallet watching alice's P2PKH output would load.
	f := bip37.NewFilter(10, 0.0001, 12345, wire.BloomUpdateAll)
	f.Add(alice.Address(node.Params).ScriptAddress())
	if err := p.LoadFilter(ctx, f); err != nil {
		t.Fatal(err)
	}
	var hashes []chainhash.Hash
	for h := int32(1); h <= c.Height(); h++ {
		hashes = append(hashes, c.Hash(h))
	}
	matches := 0
	for len(hashes) > 0 {
		n := min(len(hashes), peer.MaxFilteredBlocksPerRequest)
		blocks, err := p.GetFilteredBlocks(ctx, hashes[:n])
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			matches += len(b.Txs)
		}
		hashes = hashes[n:]
	}
	if matches < 6 {
		t.Fatalf("%d matches through the relay, want the 6 coinbases", matches)
	}
	p.Close()
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}

	recs, err := capture.Read(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := capturedFilters(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(cf) != 1 {
		t.Fatalf("%d filters captured, want 1 (records: %s)", len(cf), out.String())
	}
	want := f.MsgFilterLoad()
	got := cf[0].Filter.MsgFilterLoad()
	if !bytes.Equal(got.Filter, want.Filter) || got.HashFuncs != want.HashFuncs || got.Tweak != want.Tweak || got.Flags != want.Flags {
		t.Fatalf("captured filter differs from the one loaded")
	}
	if recs[0].Command != capture.CmdVersion || !strings.Contains(recs[0].UserAgent, "/") {
		t.Errorf("first record %+v, want the client's version", recs[0])
	}

	universe := fmt.Sprintf("%s\n%s\n", alice.Address(node.Params).EncodeAddress(), bob.Address(node.Params).EncodeAddress())
	rep, err := attack.Analyze([]*bip37.Filter{cf[0].Filter}, strings.NewReader(universe), attack.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MatchedCount != 1 || rep.Matched[0].Line != 1 {
		t.Fatalf("matched %+v, want alice's address alone", rep.Matched)
	}
}

// capturedFilters are the filters of every session of the records.
func capturedFilters(recs []capture.Record) ([]*capture.Filter, error) {
	sessions, err := capture.Sessions(recs)
	var out []*capture.Filter
	for _, s := range sessions {
		out = append(out, s.Filters...)
	}
	return out, err
}
