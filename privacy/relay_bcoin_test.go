package privacy

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// bcoinProbe is a bcoin SPV node: in-memory chain, pure-JavaScript crypto
// backend, connected only to the relay, watching one 20-byte hash (bcoin's
// regtest address prefixes differ from btcd's, so the hash is given raw).
const bcoinProbe = `
process.env.NODE_BACKEND = 'js';
const bcoin = require('bcoin');
const [relay, hash, seconds] = process.argv.slice(2);
const node = new bcoin.SPVNode({
  network: 'regtest', memory: true, only: [relay], listen: false,
  logLevel: 'warning', logConsole: true
});
(async () => {
  await node.open();
  node.pool.watch(Buffer.from(hash, 'hex'));
  await node.connect();
  node.startSync();
  setTimeout(async () => {
    console.log('bcoin: synced to height ' + node.chain.height);
    await node.disconnect();
    await node.close();
    process.exit(0);
  }, Number(seconds) * 1000);
})().catch((e) => { console.error(e); process.exit(1); });
`

// TestRelayWithBcoin proves the relay with a real third-party light client.
// It needs bcoin 1.0.2 from npm installed in the directory named by
// SPVFILTER_BCOIN_DIR (npm install bcoin@1.0.2 --ignore-scripts, with
// leveldown overridden to 5.6.0 for Node 20), and is skipped otherwise.
func TestRelayWithBcoin(t *testing.T) {
	dir := os.Getenv("SPVFILTER_BCOIN_DIR")
	if dir == "" || testing.Short() {
		t.Skip("set SPVFILTER_BCOIN_DIR to a directory where bcoin 1.0.2 is installed")
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	alice := peertest.NewKey("privacy-bcoin-alice")
	btcd := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	btcd.Generate(t, 5)

	var out syncBuffer
	r, err := NewRelay(RelayConfig{Listen: "127.0.0.1:0", Upstream: btcd.P2PAddr, Net: btcd.Params.Net, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()

	script := filepath.Join(t.TempDir(), "probe.js")
	if err := os.WriteFile(script, []byte(bcoinProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	hash := alice.Address(btcd.Params).ScriptAddress()
	cmd := exec.CommandContext(ctx, nodeBin, script, r.Addr().String(), hex.EncodeToString(hash), "8")
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	output, err := cmd.CombinedOutput()
	t.Logf("bcoin output:\n%s", output)
	if err != nil {
		t.Fatalf("bcoin: %v", err)
	}
	cancel()
	<-served

	recs, err := ReadCapture(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := CapturedFilters(recs)
	if err != nil || len(cf) == 0 {
		t.Fatalf("no filterload from bcoin (%v); capture:\n%s", err, out.String())
	}
	t.Logf("bcoin (%s) loaded a filter of %d bytes, %d hash functions, flags %d",
		recs[0].UserAgent, len(cf[0].Filter.Bits()), cf[0].Filter.HashFuncs(), cf[0].Filter.Flags())
	if !strings.Contains(recs[0].UserAgent, "bcoin") {
		t.Errorf("user agent %q, want bcoin's", recs[0].UserAgent)
	}
	universe := alice.Address(btcd.Params).EncodeAddress() + "\n" + strings.Repeat("00", 20) + "\n"
	rep, err := Analyze([]*bip37.Filter{cf[0].Filter}, strings.NewReader(universe), AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MatchedCount < 1 || rep.Matched[0].Line != 1 {
		t.Fatalf("bcoin's filter does not reveal the watched address: %+v", rep.Matched)
	}
}
