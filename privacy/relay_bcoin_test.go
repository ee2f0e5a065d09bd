package privacy

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
)

// bcoinProbe is a bcoin SPV node: in-memory chain, pure-JavaScript crypto
// backend, connected only to the relay, watching one 20-byte hash (bcoin's
// regtest address prefixes differ from btcd's, so the hash is given raw).
const bcoinProbe = `
process.env.NODE_BACKEND = 'js';
const bcoin = require('bcoin');
const [relay, hash, seconds, httpPort] = process.argv.slice(2);
const node = new bcoin.SPVNode({
  network: 'regtest', memory: true, only: [relay], listen: false,
  httpHost: '127.0.0.1', httpPort: Number(httpPort),
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

// bcoinVersion is the bcoin release the test installs from npm.
const bcoinVersion = "1.0.2"

// bcoinPackageJSON pins bcoin; leveldown 5.6.0 replaces the version bcoin
// names, which does not build on current Node (the test uses bcoin's
// in-memory chain, and installs without running install scripts).
const bcoinPackageJSON = `{"name": "spvfilter-bcoin-probe", "version": "1.0.0", "private": true,
  "dependencies": {"bcoin": "` + bcoinVersion + `"}, "overrides": {"leveldown": "5.6.0"}}
`

// bcoinDir returns a directory whose node_modules holds bcoin: the one
// SPVFILTER_BCOIN_DIR names, or one installed with npm under the user
// cache directory on first use (shared by later runs). An install goes to
// a temporary directory renamed into place, under a lock, so test
// processes running at once neither race nor see a partial install. It
// skips the test when npm cannot reach its registry.
func bcoinDir(t *testing.T, npm string) string {
	if dir := os.Getenv("SPVFILTER_BCOIN_DIR"); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil || cache == "" {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "spvfilter-test")
	dir := filepath.Join(root, "bcoin-"+bcoinVersion)
	installed := func() bool {
		_, err := os.Stat(filepath.Join(dir, "node_modules", "bcoin", "package.json"))
		return err == nil
	}
	if installed() {
		return dir
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock := lockFile(t, filepath.Join(root, "bcoin.lock"))
	defer unlock()
	if installed() { // another process installed it while we waited
		return dir
	}
	tmp, err := os.MkdirTemp(root, "bcoin-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(bcoinPackageJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel", "error")
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		for _, offline := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH"} {
			if strings.Contains(string(out), offline) {
				t.Skipf("npm cannot reach its registry to install bcoin %s (%s); set SPVFILTER_BCOIN_DIR to an installed copy", bcoinVersion, offline)
			}
		}
		t.Fatalf("npm install bcoin@%s: %v\n%s", bcoinVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatalf("installing bcoin into %s: %v", dir, err)
	}
	t.Logf("installed bcoin %s into %s", bcoinVersion, dir)
	return dir
}

// lockFile takes a lock file, waiting while another process holds it; a
// lock older than ten minutes is taken as left by a dead process.
func lockFile(t *testing.T, name string) (unlock func()) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return func() { os.Remove(name) }
		}
		if st, serr := os.Stat(name); serr == nil && time.Since(st.ModTime()) > 10*time.Minute {
			os.Remove(name)
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for the lock %s: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bcoinInstalled returns the node binary and bcoin's directory (see
// bcoinDir), and skips the test, saying why, without node or npm.
func bcoinInstalled(t *testing.T) (nodeBin, dir string) {
	t.Helper()
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not on PATH (the test runs bcoin, a JavaScript light client)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil && os.Getenv("SPVFILTER_BCOIN_DIR") == "" {
		t.Skip("skipped: npm is not on PATH (needed once to install bcoin " + bcoinVersion + ")")
	}
	return nodeBin, bcoinDir(t, npm)
}

// TestRelayWithBcoin proves the relay with a real third-party light client,
// bcoin's SPV node. It runs whenever node and npm are on PATH, installing
// bcoin from npm on first use (see bcoinDir), and is skipped otherwise.
func TestRelayWithBcoin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and a bcoin node")
	}
	nodeBin, dir := bcoinInstalled(t)
	alice := peertest.NewKey("privacy-bcoin-alice")
	btcd := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	btcd.Generate(t, 5)

	var out bytes.Buffer // read once Serve has returned
	r, err := capture.NewRelay(capture.RelayConfig{Listen: "127.0.0.1:0", Upstream: btcd.P2PAddr, Net: btcd.Params.Net, Out: &out})
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
	cmd := exec.CommandContext(ctx, nodeBin, script, r.Addr().String(), hex.EncodeToString(hash), "6", freeLoopbackPort(t))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	output, err := cmd.CombinedOutput()
	t.Logf("bcoin output:\n%s", output)
	if err != nil {
		t.Fatalf("bcoin: %v", err)
	}
	cancel()
	<-served

	recs, err := capture.Read(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := capturedFilters(recs)
	if err != nil || len(cf) == 0 {
		t.Fatalf("no filterload from bcoin (%v); capture:\n%s", err, out.String())
	}
	t.Logf("bcoin (%s) loaded a filter of %d bytes, %d hash functions, flags %d",
		recs[0].UserAgent, len(cf[0].Filter.Bits()), cf[0].Filter.HashFuncs(), cf[0].Filter.Flags())
	if !strings.Contains(recs[0].UserAgent, "bcoin") {
		t.Errorf("user agent %q, want bcoin's", recs[0].UserAgent)
	}
	universe := alice.Address(btcd.Params).EncodeAddress() + "\n" + strings.Repeat("00", 20) + "\n"
	rep, err := attack.Analyze([]*bip37.Filter{cf[0].Filter}, strings.NewReader(universe), attack.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MatchedCount < 1 || rep.Matched[0].Line != 1 {
		t.Fatalf("bcoin's filter does not reveal the watched address: %+v", rep.Matched)
	}
}

// freeLoopbackPort returns a port free on 127.0.0.1 for a bcoin node's
// HTTP server: its default (48332 on regtest, the wallet's 48334) lies in
// the range the system draws outgoing ports from, so a busy machine may
// hold it, and two bcoin nodes at once would share it.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}
