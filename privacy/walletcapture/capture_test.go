package walletcapture

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wallet"
	"github.com/btcsuite/btcwallet/walletdb"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // the "bdb" driver of the wallets' and neutrino's databases
	"github.com/lightninglabs/neutrino"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// The shape of the test's chain and of its wallets' activity.
const (
	walletCount = 6
	// preMined is mined before the wallets start: past the height where
	// btcd enforces segwit on regtest (432), so that the wallets' P2WPKH
	// outputs can be spent, and with coinbases to fund payers.
	preMined = 440
	// rounds of wallet activity, each followed by blocksPerRound blocks,
	// every block with noisePer background payments.
	rounds         = 36
	blocksPerRound = 7
	noisePer       = 3
	// pSpend and pFunded are the chances per round that a wallet pays
	// (another wallet or an outside payee) and that an outsider pays it.
	pSpend  = 0.45
	pFunded = 0.25
	// pToWallet is the chance that a wallet's payment goes to another
	// wallet rather than an outside payee.
	pToWallet = 0.4
	feeRate   = btcutil.Amount(5000) // satoshis per kilo-vbyte
	// waitLimit bounds each wait for a wallet, a client or the mempool.
	waitLimit = 60 * time.Second
)

var (
	params   = &chaincfg.RegressionNetParams
	pubPass  = []byte(wallet.InsecurePubPassphrase)
	privPass = []byte("walletcapture passphrase")
)

// liveWallet is one btcwallet wallet of the test, over its own neutrino
// client dialled from its own loopback address.
type liveWallet struct {
	id     string
	source net.IP
	loader *wallet.Loader
	w      *wallet.Wallet
	cs     *neutrino.ChainService
	client *chain.NeutrinoClient
	db     walletdb.DB
	payees []string // outside addresses it paid
}

// startWallet creates wallet i from a seed of its own, born now, and
// connects it to a NeutrinoClient whose ChainService reaches only the
// relay at relay, from 127.0.0.(2+i), as btcwallet's daemon does with
// its neutrino backend.
func startWallet(ctx context.Context, t *testing.T, i int, relay string) *liveWallet {
	t.Helper()
	lw := &liveWallet{id: fmt.Sprintf("btcwallet-%d", i+1), source: net.IPv4(127, 0, 0, byte(2+i))}
	seed := sha256.Sum256([]byte(fmt.Sprintf("walletcapture wallet %d", i)))
	lw.loader = wallet.NewLoader(params, t.TempDir(), true, 10*time.Second, 0)
	w, err := lw.loader.CreateNewWallet(pubPass, privPass, seed[:], time.Now())
	if err != nil {
		t.Fatalf("%s: creating the wallet: %v", lw.id, err)
	}
	lw.w = w
	if err := w.Unlock(privPass, nil); err != nil {
		t.Fatalf("%s: unlocking: %v", lw.id, err)
	}
	dir := t.TempDir()
	if lw.db, err = walletdb.Create("bdb", filepath.Join(dir, "neutrino.db"), true, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: lw.source}}
	lw.cs, err = neutrino.NewChainService(neutrino.Config{DataDir: dir, Database: lw.db, ChainParams: *params, ConnectPeers: []string{relay},
		Dialer: func(a net.Addr) (net.Conn, error) { return dialer.DialContext(ctx, a.Network(), a.String()) }})
	if err != nil {
		t.Fatalf("%s: neutrino: %v", lw.id, err)
	}
	if err := lw.cs.Start(); err != nil {
		t.Fatalf("%s: neutrino: %v", lw.id, err)
	}
	lw.client = chain.NewNeutrinoClient(params, lw.cs)
	lw.client.SetStartTime(w.Manager.Birthday())
	if err := lw.client.Start(); err != nil {
		t.Fatalf("%s: neutrino client: %v", lw.id, err)
	}
	w.SynchronizeRPC(lw.client)
	return lw
}

// stop stops the wallet, its client and its ChainService, and closes the
// databases.
func (lw *liveWallet) stop(t *testing.T) {
	if err := lw.loader.UnloadWallet(); err != nil {
		t.Errorf("%s: unloading: %v", lw.id, err)
	}
	lw.client.Stop()
	lw.client.WaitForShutdown()
	if err := lw.cs.Stop(); err != nil {
		t.Errorf("%s: neutrino: %v", lw.id, err)
	}
	lw.db.Close()
}

// waitSynced waits until every wallet is synced to tip.
func waitSynced(t *testing.T, ws []*liveWallet, tip *chainhash.Hash) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for _, lw := range ws {
		for !lw.w.ChainSynced() || lw.w.Manager.SyncedTo().Hash != *tip {
			if time.Now().After(deadline) {
				st := lw.w.Manager.SyncedTo()
				t.Fatalf("%s: synced to %d (%v, chain synced %v), want %v", lw.id, st.Height, st.Hash, lw.w.ChainSynced(), tip)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// pay is a payment of amount to script by lw, made and signed by
// btcwallet with its own coin selection and change address (which it
// records), from its coins of one confirmation or more.
func pay(t *testing.T, lw *liveWallet, script []byte, amount btcutil.Amount) *wire.MsgTx {
	t.Helper()
	tx, err := lw.w.CreateSimpleTx(nil, waddrmgr.DefaultAccountNum, []*wire.TxOut{wire.NewTxOut(int64(amount), script)}, 1, feeRate, wallet.CoinSelectionLargest, false)
	if err != nil {
		t.Fatalf("%s: paying %v: %v", lw.id, amount, err)
	}
	return tx.Tx
}

// receiveAddr is a new receive address of lw (BIP 84, btcwallet's
// default for new addresses) and its script.
func receiveAddr(t *testing.T, lw *liveWallet) []byte {
	t.Helper()
	a, err := lw.w.NewAddress(waddrmgr.DefaultAccountNum, waddrmgr.KeyScopeBIP0084)
	if err != nil {
		t.Fatalf("%s: new address: %v", lw.id, err)
	}
	s, err := txscript.PayToAddrScript(a)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runRelay starts a privacy/capture relay in front of node; stop ends
// it and returns its capture.
func runRelay(ctx context.Context, t *testing.T, node *peertest.Node) (addr string, stop func() []byte) {
	t.Helper()
	var mu sync.Mutex
	var out bytes.Buffer
	relay, err := capture.NewRelay(capture.RelayConfig{Listen: "127.0.0.1:0", Upstream: node.P2PAddr, Net: node.Params.Net, Out: lockedWriter{&mu, &out}})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- relay.Serve(rctx) }()
	return relay.Addr().String(), func() []byte {
		cancel()
		if err := <-served; err != nil && ctx.Err() == nil && !strings.Contains(err.Error(), "context canceled") {
			t.Logf("relay: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out.Bytes())
	}
}

// lockedWriter serialises writes to a buffer.
type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// chainIndex is the chain read back from the node: its appearance index
// as package universe writes it, each block's height by hash, and the
// heights each address appears at (paid, or its output spent).
type chainIndex struct {
	index   []byte
	heights map[string][]int32
	byHash  map[chainhash.Hash]int32
}

// readChain reads blocks 0..tip from node.
func readChain(t *testing.T, node *peertest.Node, tip int32) *chainIndex {
	t.Helper()
	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	uw := universe.NewWriter(&bytes.Buffer{}, params)
	uw.SetIndex(ix)
	hd := &universe.IndexHeader{Network: params.Name}
	c := &chainIndex{heights: map[string][]int32{}, byHash: map[chainhash.Hash]int32{}}
	owner := map[wire.OutPoint]string{}
	note := func(a string, h int32) {
		if hs := c.heights[a]; len(hs) == 0 || hs[len(hs)-1] != h {
			c.heights[a] = append(hs, h)
		}
	}
	for h := range tip + 1 {
		hash, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := node.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := uw.AddBlock(h, b); err != nil {
			t.Fatal(err)
		}
		for _, tx := range b.Transactions {
			for _, in := range tx.TxIn {
				if a, ok := owner[in.PreviousOutPoint]; ok {
					note(a, h)
				}
			}
			for i, out := range tx.TxOut {
				_, addrs, _, err := txscript.ExtractPkScriptAddrs(out.PkScript, params)
				if err != nil || len(addrs) != 1 {
					continue
				}
				a := addrs[0].EncodeAddress()
				owner[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}] = a
				note(a, h)
			}
		}
		hd.Hashes = append(hd.Hashes, *hash)
		c.byHash[*hash] = h
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	c.index = buf.Bytes()
	return c
}

// onChain are the addresses of addrs that appear on the chain, as
// encoded addresses, in order.
func onChain(addrs []btcutil.Address, c *chainIndex) []string {
	var used []string
	for _, a := range addrs {
		if s := a.EncodeAddress(); len(c.heights[s]) > 0 {
			used = append(used, s)
		}
	}
	slices.Sort(used)
	return used
}

// sessionTruth labels a captured session of wallet w
// (simulate.WalletSession): it scanned from the first filter it asked
// for to tip; its wallet's blocks there, and the others it fetched, its
// filters' false positives.
func sessionTruth(t *testing.T, s *capture.FetchSession, w *simulate.FetchWallet, c *chainIndex, tip int32) simulate.FetchSession {
	t.Helper()
	from := tip + 1
	for _, r := range s.Ranges {
		if r.Command == capture.CmdGetCFilters && int32(r.StartHeight) < from {
			from = int32(r.StartHeight)
		}
	}
	fetched := make([]int32, 0, len(s.Blocks))
	for _, b := range s.Blocks {
		h, ok := c.byHash[b]
		if !ok {
			t.Fatalf("session %s fetched block %v, not of the chain", s.ID, b)
		}
		fetched = append(fetched, h)
	}
	return simulate.WalletSession(s.ID, s.Client, w.ID, w.Scripts, c.heights, from, tip, fetched)
}

// captureShape is where a round's payments go: each in one of the
// round's blocks at random, or all in its first block.
type captureShape struct {
	name     string
	together bool
}

// TestBtcwalletCaptureScored scores the block-download attack on the
// downloads of real btcwallet v0.16.10 wallets, each over btcwallet's
// own neutrino backend (chain.NeutrinoClient, neutrino v0.16.0) that
// reaches btcd only through the capture relay, from a loopback address
// of its own. The wallets are paid by outsiders on new receive
// addresses, pay outside payees and each other with btcwallet's coin
// selection and change addresses, over a few hundred blocks with
// background payments; their labels are the addresses btcwallet derived
// that appear on the chain. The capture is read as "privacy fetches"
// reads it and scored as "privacy evaluate" does. Two shapes of chain:
// each payment in a block of its round at random, and every payment of
// a round in one block (the wallets' blocks then mostly shared). Each
// fails when the scripts or groups given P >= 0.95 are measurably below
// 95% right (the upper end of their Wilson interval under 0.95) or a bin
// of the calibration says more than the upper end of its Wilson interval
// and 0.05 (over-confident) or less than the lower end and more than
// 0.05 less than its fraction right (under-confident), unless that
// shortfall is stated (statedShortfalls), when a
// stated shortfall is met, or when a session did not fetch a block of
// its wallet.
//
// With SPVFILTER_WALLET_SEEDS=A-B (or a comma-separated list of seeds
// and ranges) each chain is built on every seed named instead of the
// default one, each seed's figures logged, and the claims of all its
// seeds pooled per chain: it then fails on a pooled bin over-confident
// or pooled claims at P >= 0.95 measurably short, and logs the other
// pooled shortfalls (statedShortfalls are the default seed's).
func TestBtcwalletCaptureScored(t *testing.T) {
	seeds, varied := walletSeeds(t)
	for _, shape := range []captureShape{{name: "spread"}, {name: "together", together: true}} {
		t.Run(shape.name, func(t *testing.T) {
			if !varied {
				holdStated(t, shape.name, scoreShape(t, shape, seeds[0]))
				return
			}
			pooled := map[string]*seedTally{}
			for _, seed := range seeds {
				t.Run(fmt.Sprint(seed), func(t *testing.T) {
					score := scoreShape(t, shape, seed)
					for _, sf := range shortfalls(score) {
						t.Logf("seed %d: %s: %s", seed, sf.key, sf.detail)
					}
					for _, p := range claimParts(score) {
						if p.c == nil {
							t.Errorf("seed %d: %s not scored", seed, p.name)
							continue
						}
						if pooled[p.name] == nil {
							pooled[p.name] = &seedTally{}
						}
						pooled[p.name].add(p.c)
					}
				})
			}
			holdPooled(t, shape.name, seeds, pooled)
		})
	}
}

// walletDefaultSeed is the seed of the default suite's chains.
const walletDefaultSeed = 1

// walletSeeds are the seeds SPVFILTER_WALLET_SEEDS names ("A-B", or
// seeds and ranges separated by commas), and true; or the default seed
// and false when it is not set.
func walletSeeds(t *testing.T) ([]uint64, bool) {
	t.Helper()
	env := os.Getenv("SPVFILTER_WALLET_SEEDS")
	if env == "" {
		return []uint64{walletDefaultSeed}, false
	}
	seeds, err := simulate.ParseSeeds(env)
	if err != nil {
		t.Fatalf("SPVFILTER_WALLET_SEEDS=%q: %v", env, err)
	}
	return seeds, true
}

// holdStated fails on each shortfall of score on the named chain not in
// statedShortfalls, and on each stated one of that chain that is met.
func holdStated(t *testing.T, chain string, score *simulate.Score) {
	t.Helper()
	got := map[string]bool{}
	for _, sf := range shortfalls(score) {
		key := chain + ": " + sf.key
		got[key] = true
		if stated, ok := statedShortfalls[key]; ok {
			t.Logf("%s (stated, %s): %s", key, stated, sf.detail)
			continue
		}
		t.Errorf("%s: %s", key, sf.detail)
	}
	for key := range statedShortfalls {
		if strings.HasPrefix(key, chain+": ") && !got[key] {
			t.Errorf("%s: now met: take it out of statedShortfalls and the package's doc", key)
		}
	}
}

// seedTally is one kind of claim of several seeds' scores pooled: per
// bin of the calibration and at P >= 0.95, how many, how many right and
// the mean said.
type seedTally struct {
	claims simulate.ClaimScore
}

// add pools c's claims.
func (st *seedTally) add(c *simulate.ClaimScore) {
	if st.claims.Calibration == nil {
		for _, b := range c.Calibration {
			st.claims.Calibration = append(st.claims.Calibration, simulate.Bin{PLow: b.PLow, PHigh: b.PHigh})
		}
		st.claims.Confident = simulate.Bin{PLow: c.Confident.PLow, PHigh: c.Confident.PHigh}
	}
	for i, b := range c.Calibration {
		st.claims.Calibration[i].Pool(b)
	}
	st.claims.Confident.Pool(c.Confident)
}

// holdPooled logs the chain's claims of every seed pooled, and fails on
// a pooled bin over-confident or pooled claims at P >= 0.95 measurably
// below 95% right; it logs as not met a pooled bin under-confident and
// pooled claims at P >= 0.95 of a Wilson lower bound under 0.93.
func holdPooled(t *testing.T, chain string, seeds []uint64, pooled map[string]*seedTally) {
	t.Helper()
	if len(pooled) == 0 {
		t.Fatalf("%s: nothing scored on seeds %v", chain, seeds)
	}
	var sc simulate.Score
	if st := pooled["scripts"]; st != nil {
		sc.Candidates = &st.claims
	}
	if st := pooled["groups"]; st != nil {
		sc.CandidateGroups = &st.claims
	}
	t.Logf("%s, seeds %v pooled: said / right [Wilson] n per bin, and at P >= %g:\n%s", chain, seeds, simulate.ConfidentP, scoreTable(&sc))
	for _, sf := range shortfalls(&sc) {
		if sf.under {
			t.Logf("%s, pooled: NOT MET: %s: %s", chain, sf.key, sf.detail)
			continue
		}
		t.Errorf("%s, pooled: %s: %s", chain, sf.key, sf.detail)
	}
	for _, p := range claimParts(&sc) {
		if p.c == nil {
			continue
		}
		if cb := p.c.Confident; cb.Count > 0 && *cb.WilsonLow < simulate.TargetWilsonLow {
			t.Logf("%s, pooled: NOT MET: %s given P >= %g: %d of %d right, Wilson lower bound %.3f < %g", chain, p.name, simulate.ConfidentP,
				cb.Right, cb.Count, *cb.WilsonLow, simulate.TargetWilsonLow)
		}
	}
}

// scoreShape builds a chain of shape on seed with the wallets, captures
// their downloads, and scores the attack on the capture.
func scoreShape(t *testing.T, shape captureShape, seed uint64) *simulate.Score {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(seed, 2))
	node := peertest.StartBtcd(t, peertest.WithMiningKey(peertest.NewKey("walletcapture miner")))
	node.Generate(t, preMined)
	relayAddr, stopRelay := runRelay(ctx, t, node)
	var ws []*liveWallet
	stopped := false
	stopAll := func() {
		if stopped {
			return
		}
		stopped = true
		for _, lw := range ws {
			lw.stop(t)
		}
	}
	defer stopAll()
	for i := range walletCount {
		ws = append(ws, startWallet(ctx, t, i, relayAddr))
	}
	tipHash := func() *chainhash.Hash {
		h, err := node.RPC().GetBestBlockHash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	waitSynced(t, ws, tipHash())

	payments := map[string]int{}
	var inSync time.Duration
	noise := 0
	for round := range rounds {
		// due[b] are the transactions of the round's block b: each
		// payment goes in one of the round's blocks at random, made
		// when the round begins from what the wallets hold then.
		var due [blocksPerRound][]*wire.MsgTx
		place := func(tx *wire.MsgTx) {
			b := rng.IntN(blocksPerRound)
			if shape.together {
				b = 0
			}
			due[b] = append(due[b], tx)
		}
		for i, lw := range ws {
			// Outsiders pay it (every wallet in the first round).
			if round == 0 || rng.Float64() < pFunded {
				amount := btcutil.Amount(1+rng.IntN(20)) * btcutil.SatoshiPerBitcoin / 10
				place(node.BuildCoinbaseSpend(t, wire.NewTxOut(int64(amount), receiveAddr(t, lw))))
				payments["outside to wallet"]++
			}
			if round == 0 || rng.Float64() >= pSpend {
				continue
			}
			bal, err := lw.w.CalculateBalance(1)
			if err != nil {
				t.Fatal(err)
			}
			amount := btcutil.Amount(rng.Int64N(int64(bal)/2+1)) + btcutil.SatoshiPerBitcoin/100
			if bal < amount+btcutil.SatoshiPerBitcoin/100 {
				continue
			}
			var script []byte
			if rng.Float64() < pToWallet {
				to := ws[(i+1+rng.IntN(len(ws)-1))%len(ws)]
				script = receiveAddr(t, to)
				payments["wallet to wallet"]++
			} else {
				k := peertest.NewKey(fmt.Sprintf("walletcapture payee %d %d", round, i))
				script = k.P2WPKHScript()
				_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params)
				if err != nil {
					t.Fatal(err)
				}
				lw.payees = append(lw.payees, addrs[0].EncodeAddress())
				payments["wallet to outside"]++
			}
			place(pay(t, lw, script, amount))
		}
		for b := range blocksPerRound {
			for _, tx := range due[b] {
				if _, err := node.RPC().SendRawTransaction(tx, true); err != nil {
					t.Fatalf("round %d: sending %v: %v", round, tx.TxHash(), err)
				}
			}
			var outs []*wire.TxOut
			for j := range noisePer {
				outs = append(outs, wire.NewTxOut(200_000, peertest.NewKey(fmt.Sprintf("walletcapture noise %d %d %d", round, b, j)).P2WPKHScript()))
			}
			noise += len(outs)
			node.Confirm(t, append(due[b], node.SpendCoinbase(t, outs...))...)
		}
		t1 := time.Now()
		waitSynced(t, ws, tipHash())
		inSync += time.Since(t1)
	}
	tip, err := node.RPC().GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	built := time.Since(began)
	// Every address btcwallet derived, read before the wallets close.
	derivedAddrs := map[string][]btcutil.Address{}
	for _, lw := range ws {
		addrs, err := lw.w.AccountAddresses(waddrmgr.DefaultAccountNum)
		if err != nil {
			t.Fatalf("%s: addresses: %v", lw.id, err)
		}
		derivedAddrs[lw.id] = addrs
	}
	stopAll()
	raw := stopRelay()

	// The truth: btcwallet's own addresses that appear on the chain.
	c := readChain(t, node, int32(tip))
	labels := &simulate.Labels{Format: simulate.LabelsFormat, Version: simulate.LabelsVersion, Wallets: []simulate.Wallet{},
		Payments: []simulate.Payment{}, Sessions: []simulate.Session{}, Fetch: &simulate.FetchLabels{Network: params.Name,
			BlockCount: int(tip) + 1, Wallets: []simulate.FetchWallet{}, Sessions: []simulate.FetchSession{}}}
	bySource := map[string]*simulate.FetchWallet{}
	for _, lw := range ws {
		used := onChain(derivedAddrs[lw.id], c)
		derived := len(derivedAddrs[lw.id])
		if len(used) == 0 {
			t.Fatalf("%s: none of its %d addresses on the chain", lw.id, derived)
		}
		first := int32(tip)
		for _, a := range used {
			first = min(first, c.heights[a][0])
		}
		labels.Fetch.Wallets = append(labels.Fetch.Wallets, simulate.FetchWallet{ID: lw.id, Birth: first, Scripts: used,
			PayerChange: []string{}, Payees: lw.payees})
		t.Logf("%s: %d addresses derived, %d on the chain", lw.id, derived, len(used))
	}
	for i, lw := range ws {
		bySource[lw.source.String()] = &labels.Fetch.Wallets[i]
	}
	recs, err := capture.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.FetchSessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		host, _, err := net.SplitHostPort(s.Client)
		if err != nil {
			t.Fatal(err)
		}
		w := bySource[host]
		if w == nil {
			t.Fatalf("session %s of %s, no wallet's client", s.ID, s.Client)
		}
		fs := sessionTruth(t, s, w, c, int32(tip))
		fetched := map[int32]bool{}
		for _, b := range s.Blocks {
			fetched[c.byHash[b]] = true
		}
		// Neutrino fetches every block its filters match: its wallet's
		// among them.
		for _, h := range fs.WalletHeights {
			if !fetched[h] {
				t.Errorf("session %s (%s): block %d of its wallet not fetched", s.ID, w.ID, h)
			}
		}
		t.Logf("session %s (%s): scanned %d..%d, %d blocks fetched, %d of its wallet, %d false positives", s.ID, w.ID, fs.ScannedFrom, fs.ScannedTo,
			len(s.Blocks), len(fs.WalletHeights), len(fs.FalsePositiveHeights))
		labels.Fetch.Sessions = append(labels.Fetch.Sessions, fs)
	}
	if len(sessions) < walletCount {
		t.Fatalf("%d sessions captured, want one or more for each of %d wallets", len(sessions), walletCount)
	}

	// The attack, as "privacy fetches" runs it, and its score, as
	// "privacy evaluate" gives it.
	ir, err := universe.NewIndexReader(bytes.NewReader(c.index))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{"index": map[string]any{"network": params.Name}, "clients": reps})
	if err != nil {
		t.Fatal(err)
	}
	score, err := simulate.Evaluate(labels, doc, simulate.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("SPVFILTER_WALLET_CAPTURE_DIR"); dir != "" {
		keep(t, filepath.Join(dir, fmt.Sprintf("%s-%d", shape.name, seed)), raw, c.index, labels, doc)
	}
	for _, r := range reps {
		t.Logf("session %s: B = %d, F = %d, %d matches, %d confident, %d groups; warnings %q", r.Session, r.ScannedBlocks, r.FetchedBlocks,
			r.MatchedCount, r.Confident, len(r.Groups), r.Warnings)
	}
	t.Logf("%d blocks, payments %v, %d background outputs; built in %v (%v waiting for the wallets), all in %v", tip+1, payments, noise,
		built.Round(time.Second), inSync.Round(time.Second), time.Since(began).Round(time.Second))
	owner := map[string]string{}
	for _, w := range labels.Fetch.Wallets {
		for _, a := range w.Scripts {
			owner[a] = w.ID
		}
		for _, a := range w.Payees {
			owner[a] = "payee of " + w.ID
		}
	}
	for _, m := range score.Mistakes {
		if m.Probability >= simulate.ConfidentP {
			var whose []string
			for _, a := range strings.Fields(m.Candidate) {
				whose = append(whose, cmp.Or(owner[a], "?"))
			}
			t.Logf("wrong at P %.4f: %s %s in %v of %v, really of %v", m.Probability, m.Kind, m.Candidate, m.Sessions, m.Wallets, whose)
		}
	}
	t.Logf("seed %d: said / right [Wilson] n per bin, and at P >= %g:\n%s", seed, simulate.ConfidentP, scoreTable(score))
	return score
}

// statedShortfalls are the targets not met on the test's chains on the
// default seed, each the chain's name, the kind of claim and what falls
// short, with the figures measured: "P >= 0.95" where the claims given
// P >= 0.95 are measurably below 95% right (the upper end of their
// Wilson interval under 0.95), "[lo, hi)" for a bin over-confident (it
// says more than the upper end of its Wilson interval and 0.05) or
// under-confident (it says less than the lower end of its Wilson
// interval and more than 0.05 less than the fraction right). A
// shortfall not here fails the test, and so does one here that is met,
// so that the list stays true.
//
// Before package leak's coFetched (a unit whose every block sessions of
// other client addresses, fetching for other scripts, fetched too is
// given its share of the claims on it where they add up to more than
// 1), together fell short on the over-confident side too: groups given
// P >= 0.95 10 of 16 right [0.386, 0.815], at 0.970 said; groups [0.8,
// 0.95) 0.940 said, 9 of 14 right [0.388, 0.837]; scripts [0.8, 0.95)
// 0.866 said, 1 of 3 right [0.061, 0.792]. Every wrong claim was another
// wallet's payment (its receive address, its change, its payee) in
// blocks the session fetched for its own wallet.
var statedShortfalls = map[string]string{
	// The scripts and groups below 0.5 (0.006 to 0.072 said) are the
	// wallet's 0.13 to 0.24 of the time on both chains.
	"spread: scripts: [0, 0.5)":   "says 0.049, right 158 of 952 (0.166) [0.144, 0.191]",
	"spread: groups: [0, 0.5)":    "says 0.001, right 63 of 297 (0.212) [0.169, 0.262]",
	"together: scripts: [0, 0.5)": "says 0.055, right 191 of 1450 (0.132) [0.115, 0.150]",
	"together: groups: [0, 0.5)":  "says 0.072, right 109 of 449 (0.243) [0.205, 0.284]",
	// On the spread chain, warned that its wallets pay each other (a
	// contested share under 10% and over 6.5%), every script given 0.5 to
	// 0.8 is right, and nothing is given 0.95 or more; its scripts and
	// groups given 0.8 to 0.95 (0.912 said, 47 of 47 right; 0.917, 49 of
	// 49) were under-confident before the share that warns went from
	// 10% to 6.5%, and are met since.
	"spread: scripts: [0.5, 0.8)": "says 0.571, right 37 of 37 (1.000) [0.906, 1.000]",
}

// shortfall is a target a score does not meet: its key (the kind of
// claim and what falls short), its figures, and whether it is a bin
// under-confident.
type shortfall struct {
	key, detail string
	under       bool
}

// shortfalls are the targets the score's scripts and groups do not meet:
// the claims given P >= 0.95 measurably below 95% right (the upper end
// of their Wilson interval under simulate.TargetRight), every bin that
// says more than the upper end of its Wilson interval and
// simulate.TargetBinSlack (over-confident), and every bin that says
// less than the lower end of its Wilson interval and more than
// simulate.TargetBinSlack less than its fraction right
// (under-confident).
func shortfalls(s *simulate.Score) []shortfall {
	var out []shortfall
	for _, p := range claimParts(s) {
		if p.c == nil {
			out = append(out, shortfall{key: p.name + ": not scored", detail: "no claims scored"})
			continue
		}
		if cb := p.c.Confident; cb.Count > 0 {
			if lo, hi := simulate.Wilson(cb.Right, cb.Count); hi < simulate.TargetRight {
				out = append(out, shortfall{key: fmt.Sprintf("%s: P >= %g", p.name, simulate.ConfidentP),
					detail: fmt.Sprintf("%d of %d right [%.3f, %.3f], below %g", cb.Right, cb.Count, lo, hi, simulate.TargetRight)})
			}
		}
		for _, b := range p.c.Calibration {
			if b.Count == 0 {
				continue
			}
			key := fmt.Sprintf("%s: [%g, %g)", p.name, b.PLow, b.PHigh)
			figures := fmt.Sprintf("says %.3f, right %d of %d (%.3f) [%.3f, %.3f]", *b.MeanProbability, b.Right, b.Count, *b.FractionRight,
				*b.WilsonLow, *b.WilsonHigh)
			switch said := *b.MeanProbability; {
			case said > *b.WilsonHigh+simulate.TargetBinSlack:
				out = append(out, shortfall{key: key, detail: figures + ": over-confident"})
			case said < *b.WilsonLow && said < *b.FractionRight-simulate.TargetBinSlack:
				out = append(out, shortfall{key: key, detail: figures + ": under-confident", under: true})
			}
		}
	}
	return out
}

// claimParts are the score's claims the test holds: scripts and groups.
func claimParts(s *simulate.Score) []struct {
	name string
	c    *simulate.ClaimScore
} {
	return []struct {
		name string
		c    *simulate.ClaimScore
	}{{"scripts", s.Candidates}, {"groups", s.CandidateGroups}}
}

// scoreTable is the score's bins, one row per kind of claim.
func scoreTable(s *simulate.Score) string {
	var b strings.Builder
	for _, p := range claimParts(s) {
		if p.c == nil {
			fmt.Fprintf(&b, "| %s | none |\n", p.name)
			continue
		}
		fmt.Fprintf(&b, "| %s |", p.name)
		for _, bin := range append(slices.Clone(p.c.Calibration), p.c.Confident) {
			fmt.Fprintf(&b, " [%g, %g): %s |", bin.PLow, bin.PHigh, binCell(bin))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// binCell is a bin as said / right [Wilson interval] n.
func binCell(b simulate.Bin) string {
	if b.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f / %.3f [%.3f, %.3f] n=%d", *b.MeanProbability, *b.FractionRight, *b.WilsonLow, *b.WilsonHigh, b.Count)
}

// keep writes the capture, index, labels and report for "privacy
// fetches" and "privacy evaluate" to be run on by hand, into dir (one
// directory for each chain and seed, SPVFILTER_WALLET_CAPTURE_DIR/
// together-21 for instance).
func keep(t *testing.T, dir string, capt, index []byte, labels *simulate.Labels, report []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lb bytes.Buffer
	if err := labels.Write(&lb); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"fetch-capture.jsonl": capt, "chain.idx": index, "labels.json": lb.Bytes(), "fetches.json": report} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
