package privacy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// bcoinWallet is a bcoin SPV node with its wallet plugin, whose wallets
// are made from known mnemonics. With "keys" it prints, per wallet, the
// HASH160s of its first receive keys and exits; with "sync" it connects
// to the relay only, lets the wallet load its filter and syncs for the
// seconds given.
const bcoinWallet = `
process.env.NODE_BACKEND = 'js';
const bcoin = require('bcoin');
const [mode, relay, seconds, httpPort, walletPort, ...phrases] = process.argv.slice(2);
const node = new bcoin.SPVNode({
  network: 'regtest', memory: true, only: [relay], listen: false,
  httpHost: '127.0.0.1', httpPort: Number(httpPort),
  walletHttpHost: '127.0.0.1', walletHttpPort: Number(walletPort),
  logLevel: 'warning', logConsole: true
});
node.use(bcoin.wallet.plugin);
(async () => {
  await node.open();
  const wdb = node.require('walletdb').wdb;
  const keys = {};
  for (const [i, phrase] of phrases.entries()) {
    const w = await wdb.create({id: 'w' + i, mnemonic: phrase});
    const acct = await w.getAccount(0);
    keys[phrase] = [];
    for (let j = 0; j < 12; j++)
      keys[phrase].push(acct.deriveReceive(j).getKeyHash('hex'));
  }
  console.log('KEYS ' + JSON.stringify(keys));
  if (mode === 'keys') {
    await node.close();
    process.exit(0);
  }
  await node.connect();
  node.startSync();
  setTimeout(async () => {
    await node.disconnect();
    await node.close();
    process.exit(0);
  }, Number(seconds) * 1000);
})().catch((e) => { console.error(e); process.exit(1); });
`

// bcoinMnemonics are the scripted wallets' seeds (BIP 39 test vectors'
// phrases: known keys).
var bcoinMnemonics = []string{
	"abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
	"legal winner thank year wave sausage worth useful legal winner thank yellow",
}

// runBcoinWallet runs the script and returns the keys it printed.
func runBcoinWallet(t *testing.T, ctx context.Context, nodeBin, dir, script, mode, relay string, phrases ...string) map[string][]string {
	t.Helper()
	args := []string{script, mode, relay, "3", freeLoopbackPort(t), freeLoopbackPort(t)}
	cmd := exec.CommandContext(ctx, nodeBin, append(args, phrases...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bcoin %s: %v\n%s", mode, err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "KEYS "); ok {
			keys := map[string][]string{}
			if err := json.Unmarshal([]byte(line), &keys); err != nil {
				t.Fatal(err)
			}
			return keys
		}
	}
	t.Fatalf("bcoin %s printed no keys:\n%s", mode, out)
	return nil
}

// TestBcoinWalletCaptureScored scores the filter attack and linking on a
// real BIP 37 client: bcoin 1.0.2's SPV node with its wallet, two
// wallets of known mnemonics, each connecting twice (a fresh node each
// time: a new filter tweak) through the capture relay to btcd. The chain
// pays some of each wallet's receive addresses; the universe is the
// chain's candidates (written by package universe, as "privacy universe"
// does) among 30,000 other addresses. The labels come from the known keys
// and the captured filters; analyze --link's report is scored by
// evaluate, and no claim given P >= 0.95 may be wrong. bcoin sizes its
// SPV filter for 20,000 elements at 0.001 whatever the wallet holds, so
// its filter matches next to nothing by chance: the attack names every
// paid address. It runs whenever node and npm are on PATH (see
// TestRelayWithBcoin), and is skipped, saying why, otherwise. With
// SPVFILTER_BCOIN_CAPTURE_DIR set it keeps the labels and the report there.
func TestBcoinWalletCaptureScored(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and bcoin nodes")
	}
	nodeBin, dir := bcoinInstalled(t)
	script := filepath.Join(t.TempDir(), "wallet.js")
	if err := os.WriteFile(script, []byte(bcoinWallet), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	keys := runBcoinWallet(t, ctx, nodeBin, dir, script, "keys", "127.0.0.1:1", bcoinMnemonics...)

	// The chain: each wallet paid on its first five receive keys.
	miner := peertest.NewKey("privacy-bcoin-wallet-miner")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(miner))
	node.Generate(t, 110)
	addrOf := func(hash string) string {
		h, err := hex.DecodeString(hash)
		if err != nil {
			t.Fatal(err)
		}
		a, err := btcutil.NewAddressPubKeyHash(h, node.Params)
		if err != nil {
			t.Fatal(err)
		}
		return a.EncodeAddress()
	}
	wallets := map[string][]string{} // wallet ID -> its paid addresses, in order
	for i, phrase := range bcoinMnemonics {
		id := fmt.Sprintf("b%d", i+1)
		for _, hash := range keys[phrase][:5] {
			a := addrOf(hash)
			addr, _ := btcutil.DecodeAddress(a, node.Params)
			pk, err := txscript.PayToAddrScript(addr)
			if err != nil {
				t.Fatal(err)
			}
			node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(1_000_000, pk)))
			wallets[id] = append(wallets[id], a)
		}
	}

	// Two sessions of each wallet through the relay.
	var out bytes.Buffer
	relay, err := capture.NewRelay(capture.RelayConfig{Listen: "127.0.0.1:0", Upstream: node.P2PAddr, Net: node.Params.Net, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopRelay := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- relay.Serve(rctx) }()
	var order []string // the wallet of each run, in order
	for range 2 {
		for i, phrase := range bcoinMnemonics {
			runBcoinWallet(t, ctx, nodeBin, dir, script, "sync", relay.Addr().String(), phrase)
			order = append(order, fmt.Sprintf("b%d", i+1))
		}
	}
	stopRelay()
	<-served
	recs, err := capture.Read(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.Sessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != len(order) {
		t.Fatalf("%d sessions captured, want %d", len(sessions), len(order))
	}

	// The universe: the chain's candidates among random addresses.
	var ub bytes.Buffer
	uw := universe.NewWriter(&ub, node.Params)
	tip, err := node.RPC().GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	for h := range tip + 1 {
		hash, err := node.RPC().GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		b, err := node.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := uw.AddBlock(int32(h), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := uw.Flush(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	var h [20]byte
	for range 30_000 {
		for i := range h {
			h[i] = byte(rng.Uint32())
		}
		a, _ := btcutil.NewAddressPubKeyHash(h[:], node.Params)
		fmt.Fprintln(&ub, a.EncodeAddress())
	}

	// The labels, from the known keys and the captured filters.
	labels := &simulate.Labels{Format: simulate.LabelsFormat, Version: simulate.LabelsVersion, Wallets: []simulate.Wallet{},
		Payments: []simulate.Payment{}, Sessions: []simulate.Session{}}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range wallets {
			if !yield(id) {
				return
			}
		}
	}) {
		labels.Wallets = append(labels.Wallets, simulate.Wallet{ID: id, FPRate: 0.001, Addresses: wallets[id]})
	}
	var groups [][]*bip37.Filter
	for i, s := range sessions {
		fs := s.BloomFilters()
		groups = append(groups, fs)
		w := order[i]
		held := []string{}
		for _, a := range wallets[w] {
			addr, _ := btcutil.DecodeAddress(a, node.Params)
			if fs[len(fs)-1].Contains(addr.ScriptAddress()) {
				held = append(held, a)
			}
		}
		if len(held) != len(wallets[w]) || !strings.Contains(s.UserAgent, "bcoin") {
			t.Fatalf("session %s (%s) holds %d of its wallet's %d paid addresses", s.ID, s.UserAgent, len(held), len(wallets[w]))
		}
		labels.Sessions = append(labels.Sessions, simulate.Session{ID: s.ID, Client: s.Client, Kind: simulate.KindWallet, Wallet: w,
			Holds: held, Loaded: len(held)})
	}
	acc, err := attack.NewAccumulator(groups, attack.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.ReadUniverse(bytes.NewReader(ub.Bytes())); err != nil {
		t.Fatal(err)
	}
	rep, err := attack.NewCaptureReport(sessions, acc, attack.ReportOptions{Link: true})
	if err != nil {
		t.Fatal(err)
	}
	labels.UniverseSize = int(rep.Clients[0].UniverseSize)
	var doc bytes.Buffer
	if err := rep.WriteJSON(&doc); err != nil {
		t.Fatal(err)
	}
	var lb bytes.Buffer
	if err := labels.Write(&lb); err != nil {
		t.Fatal(err)
	}
	l, err := simulate.DecodeLabels(lb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("SPVFILTER_BCOIN_CAPTURE_DIR"); dir != "" {
		// Kept for "privacy evaluate" by hand.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"labels.json": lb.Bytes(), "analyze.json": doc.Bytes()} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	score, err := simulate.Evaluate(l, doc.Bytes(), simulate.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := score.Candidates
	t.Logf("bcoin: %d sessions; candidates: %d listed, %d given P >= 0.95 (%d right) of %d held; links: %d pairs given P >= 0.95 (%d right) of %d true",
		len(sessions), c.ClaimCount, c.Confident.Count, c.Confident.Right, c.TruthCount, score.Links.Confident.Count, score.Links.Confident.Right, score.Links.TruthCount)
	for _, tg := range score.Targets {
		if tg.Met != nil {
			t.Logf("  met %v: %s: %.4g (want %s)", *tg.Met, tg.Name, *tg.Value, tg.Want)
		}
	}
	if c.Confident.Count != c.Confident.Right || c.Confident.Right != c.TruthCount ||
		score.Links.Confident.Count != score.Links.Confident.Right || score.Links.Confident.Right != score.Links.TruthCount {
		t.Errorf("a wrong or a missed claim: candidates %+v, links %+v; mistakes %+v", c.Counts, score.Links.Counts, score.Mistakes)
	}
}
