package neutrinocapture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // the "bdb" driver, as neutrino's own tests use
	"github.com/lightninglabs/neutrino"
	"github.com/lightninglabs/neutrino/headerfs"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// Shape of the test's chain.
const (
	rounds   = 620 // blocks mined after the coinbases mature
	noisePer = 4   // background payments per block
	wallets  = 28  // 56 sessions: enough groups given P >= 0.95 for a Wilson lower bound of 0.93 (holdFetchTargets)
	sessions = 2   // neutrino sessions per wallet: from its birthday, and later
	later    = 80
	payments = 8   // payments each wallet receives, the last two to addresses it was paid on before
	premine  = 200 // blocks mined first, whose coinbases fund the payers' first payments
)

// TestNeutrinoCapture drives real neutrino clients of scripted wallets
// through the capture relay, runs the block-download attack on the
// capture and scores it against the truth the test knows: every script
// claimed the wallet's with probability 0.95 or more must be, and the
// score is held to the targets a capture of its size can measure
// (holdFetchTargets) and logged in the form of the tables of
// privacy/README.md.
func TestNeutrinoCapture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	miner := peertest.NewKey("neutrinocapture miner")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(miner))
	node.Generate(t, 150+premine)
	start := int32(151 + premine)
	var ws []*peertest.LabelledWallet
	plan := map[int][]peertest.WalletEvent{}
	for i := range wallets {
		w := &peertest.LabelledWallet{ID: fmt.Sprintf("n%d", i+1), Birth: start + int32(10*i)}
		w.Payers = []*peertest.Key{peertest.NewKey(fmt.Sprintf("neutrinocapture wallet %d payer 0", i)), peertest.NewKey(fmt.Sprintf("neutrinocapture wallet %d payer 1", i))}
		for j := range payments {
			key := peertest.NewKey(fmt.Sprintf("neutrinocapture wallet %d receive %d", i, j))
			if j >= payments-2 {
				key = w.Receive[2*(j-payments+2)+1] // paid again
			}
			w.Receive = append(w.Receive, key)
			w.Change = append(w.Change, peertest.NewKey(fmt.Sprintf("neutrinocapture wallet %d change %d", i, j)))
			round := 10*i + 5 + 33*j + i*3
			plan[round] = append(plan[round], peertest.WalletEvent{Wallet: w, Payment: j})
			if j%2 == 0 { // spends half of what it receives, later
				plan[round+7+i] = append(plan[round+7+i], peertest.WalletEvent{Wallet: w, Spend: true})
			}
		}
		ws = append(ws, w)
	}
	chain := peertest.BuildLabelledChain(t, node, peertest.LabelledChainSpec{Tag: "neutrinocapture", Rounds: rounds, NoisePer: noisePer, Wallets: ws, Events: plan})
	if chain.Start != start {
		t.Fatalf("the chain's rounds start at height %d, want %d", chain.Start, start)
	}
	tip := chain.Tip

	// The relay, and neutrino sessions through it.
	byClient := map[string]sessionOf{}
	raw, fetchSessions := throughRelay(ctx, t, node, func(addr string) {
		for _, w := range ws {
			watch := walletAddrs(t, node.Params, w)
			for k := range sessions {
				local := rescan(ctx, t, addr, node.Params, watch, w.Birth+int32(k*later), tip)
				byClient[local] = sessionOf{w, w.Birth + int32(k*later)}
			}
		}
	})

	// What the node saw, the index and the labels.
	index, hashes := indexChain(t, node.RPC(), tip, nil)
	labels := fetchLabels(node.Params.Name, tip, ws)
	for _, s := range fetchSessions {
		so, ok := byClient[s.Client]
		if !ok {
			t.Fatalf("session %s of client %s, which no wallet's neutrino used", s.ID, s.Client)
		}
		labels.Fetch.Sessions = append(labels.Fetch.Sessions, sessionLabel(t, s, so, chain.Heights, hashes, tip))
	}
	if len(fetchSessions) != wallets*sessions {
		t.Fatalf("%d sessions captured, want %d", len(fetchSessions), wallets*sessions)
	}
	reps := analyze(t, fetchSessions, index, 0)
	for _, r := range reps {
		// Neutrino asks for filter headers from the genesis block and
		// filters from the birthday: only the latter are the scan.
		so := byClient[r.Client]
		if r.ScannedFrom == nil || *r.ScannedFrom != so.from || *r.ScannedTo != tip {
			t.Errorf("session %s: scanned %v..%v, want the rescan's %d..%d", r.Session, r.ScannedFrom, r.ScannedTo, so.from, tip)
		}
		t.Logf("session %s (%s): B = %d, F = %d, %d matches, %d confident, %d groups; %s", r.Session, so.w.ID, r.ScannedBlocks, r.FetchedBlocks,
			r.MatchedCount, r.Confident, len(r.Groups), r.Verdict)
	}
	doc, score := evaluate(t, node.Params.Name, labels, reps)
	if dir := os.Getenv("SPVFILTER_NEUTRINO_CAPTURE_DIR"); dir != "" {
		writeFiles(t, dir, raw, index, labels, doc)
	}
	// Its wallets do not pay each other, so no session is warned that
	// they look as if they did, from whichever addresses their clients
	// came: each wallet's from an address of its own too.
	walletAt := map[*peertest.LabelledWallet]int{}
	for i, w := range ws {
		walletAt[w] = i
	}
	apart := make([]*capture.FetchSession, len(fetchSessions))
	for i, s := range fetchSessions {
		c := *s
		_, port, err := net.SplitHostPort(s.Client)
		if err != nil {
			t.Fatalf("client %q: %v", s.Client, err)
		}
		c.Client = net.JoinHostPort(fmt.Sprintf("127.0.1.%d", 1+walletAt[byClient[s.Client].w]), port)
		apart[i] = &c
	}
	for _, r := range analyze(t, apart, index, 0) {
		if w := strings.Join(r.Warnings, "\n"); strings.Contains(w, leak.PayEachOther) {
			t.Errorf("session %s, each wallet's client from an address of its own: warned that %s: %s", r.Session, leak.PayEachOther, w)
		}
	}
	logScore(t, score)
	holdFetchTargets(t, score, reps)
	for _, m := range score.Mistakes {
		if m.Probability >= simulate.ConfidentP {
			t.Errorf("wrong at P %.4f: %s %s of %v (really %s)", m.Probability, m.Kind, m.Candidate, m.Wallets, m.Owner)
		}
	}
	if score.Candidates.Confident.Count+score.CandidateGroups.Confident.Count == 0 {
		t.Error("nothing claimed with P >= 0.95: the wallets' blocks were not found")
	}
}

// throughRelay runs run with the address of a privacy/capture relay in
// front of node, and returns the relay's capture and the fetch sessions
// in it, as "privacy fetches" reads them.
func throughRelay(ctx context.Context, t *testing.T, node *peertest.Node, run func(addr string)) ([]byte, []*capture.FetchSession) {
	t.Helper()
	var out bytes.Buffer
	relay, err := capture.NewRelay(capture.RelayConfig{Listen: "127.0.0.1:0", Upstream: node.P2PAddr, Net: node.Params.Net, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopRelay := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- relay.Serve(rctx) }()
	run(relay.Addr().String())
	stopRelay()
	<-served
	recs, err := capture.Read(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := capture.FetchSessions(recs)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), sessions
}

// fetchLabels are the labels of ws on a chain up to tip, without
// sessions yet.
func fetchLabels(network string, tip int32, ws []*peertest.LabelledWallet) *simulate.Labels {
	l := &simulate.Labels{Format: simulate.LabelsFormat, Version: simulate.LabelsVersion, Wallets: []simulate.Wallet{},
		Payments: []simulate.Payment{}, Sessions: []simulate.Session{}, Fetch: &simulate.FetchLabels{Network: network,
			BlockCount: int(tip) + 1, Wallets: []simulate.FetchWallet{}, Sessions: []simulate.FetchSession{}}}
	for _, w := range ws {
		l.Fetch.Wallets = append(l.Fetch.Wallets, simulate.FetchWallet{ID: w.ID, Birth: w.Birth, Scripts: w.Scripts,
			PayerChange: w.PayerChange, Payees: w.Payees})
	}
	return l
}

// analyze runs the block-download attack ("privacy fetches", with
// --cover-target target when it is not 0) on the sessions with the
// chain's index.
func analyze(t *testing.T, sessions []*capture.FetchSession, index []byte, target float64) []*attack.FetchReport {
	t.Helper()
	ir, err := universe.NewIndexReader(bytes.NewReader(index))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{CoverTarget: target})
	if err != nil {
		t.Fatal(err)
	}
	return reps
}

// evaluate scores the reports against the labels, as "privacy
// evaluate" does the report "privacy fetches --json" writes, and returns
// that report too.
func evaluate(t *testing.T, network string, labels *simulate.Labels, reps []*attack.FetchReport) ([]byte, *simulate.Score) {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"index": map[string]any{"network": network}, "clients": reps})
	if err != nil {
		t.Fatal(err)
	}
	score, err := simulate.Evaluate(labels, doc, simulate.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return doc, score
}

// rescan runs one neutrino session: a ChainService with a fresh database
// connected only to addr, synced, then a Rescan of watch from the block
// below from to the block at to. It returns the local address of its
// connection (the capture names the session by it).
func rescan(ctx context.Context, t *testing.T, addr string, params *chaincfg.Params, watch []btcutil.Address, from, to int32) string {
	t.Helper()
	return rescanFrom(ctx, t, nil, addr, params, watch, from, to)
}

// rescanFrom is rescan with its connection dialled from the loopback
// address source (any when nil), so that a capture sees its client at
// that address.
func rescanFrom(ctx context.Context, t *testing.T, source net.IP, addr string, params *chaincfg.Params, watch []btcutil.Address, from, to int32) string {
	t.Helper()
	dialer := &net.Dialer{}
	if source != nil {
		dialer.LocalAddr = &net.TCPAddr{IP: source}
	}
	dir := t.TempDir()
	db, err := walletdb.Create("bdb", filepath.Join(dir, "neutrino.db"), true, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	local := make(chan string, 1)
	cs, err := neutrino.NewChainService(neutrino.Config{DataDir: dir, Database: db, ChainParams: *params, ConnectPeers: []string{addr},
		Dialer: func(a net.Addr) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, a.Network(), a.String())
			if err == nil {
				select {
				case local <- c.LocalAddr().String():
				default:
				}
			}
			return c, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Start(); err != nil {
		t.Fatal(err)
	}
	defer cs.Stop()
	if err := waitSynced(ctx, cs, to); err != nil {
		t.Fatal(err)
	}
	stamp := func(h int32) *headerfs.BlockStamp {
		hash, err := cs.GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		return &headerfs.BlockStamp{Height: h, Hash: *hash}
	}
	quit := make(chan struct{})
	r := neutrino.NewRescan(&neutrino.RescanChainSource{ChainService: cs}, neutrino.StartBlock(stamp(from-1)), neutrino.EndBlock(stamp(to)),
		neutrino.WatchAddrs(watch...), neutrino.QuitChan(quit), neutrino.NotificationHandlers(rpcclient.NotificationHandlers{}))
	errc := r.Start()
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = ctx.Err()
	}
	close(quit)
	r.WaitForShutdown()
	if err != nil {
		t.Fatalf("neutrino rescan: %v", err)
	}
	return <-local
}

// waitSynced waits until the service has block and filter headers up to
// the tip.
func waitSynced(ctx context.Context, cs *neutrino.ChainService, tip int32) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if best, err := cs.BestBlock(); err == nil && best.Height >= tip && cs.IsCurrent() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("neutrino: waiting for the header sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// indexChain writes the appearance index of blocks 0..tip with package
// universe's writers, from the node's blocks, and returns it with the
// blocks' hashes; visit, when not nil, is given each block as it is
// read, in order.
func indexChain(t *testing.T, rpc *rpcclient.Client, tip int32, visit func(h int32, b *wire.MsgBlock)) ([]byte, map[string]int32) {
	t.Helper()
	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	uw := universe.NewWriter(&bytes.Buffer{}, &chaincfg.RegressionNetParams)
	uw.SetIndex(ix)
	hd := &universe.IndexHeader{Network: chaincfg.RegressionNetParams.Name}
	hashes := map[string]int32{}
	for h := range tip + 1 {
		hash, err := rpc.GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := rpc.GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := uw.AddBlock(h, b); err != nil {
			t.Fatal(err)
		}
		if visit != nil {
			visit(h, b)
		}
		hd.Hashes = append(hd.Hashes, *hash)
		hashes[hash.String()] = h
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), hashes
}

// sessionOf is a neutrino session: its wallet and where its rescan began.
type sessionOf struct {
	w    *peertest.LabelledWallet
	from int32
}

// sessionLabel labels a captured session (simulate.WalletSession): its
// scan, the blocks of its wallet's scripts there and the others it
// fetched (its filters' false positives: neutrino fetches no decoy).
func sessionLabel(t *testing.T, s *capture.FetchSession, so sessionOf, heights map[string][]int32, hashes map[string]int32, tip int32) simulate.FetchSession {
	t.Helper()
	fetched := make([]int32, 0, len(s.Blocks))
	for _, b := range s.Blocks {
		h, ok := hashes[b.String()]
		if !ok {
			t.Fatalf("session %s fetched block %s, not of the chain", s.ID, b)
		}
		fetched = append(fetched, h)
	}
	return simulate.WalletSession(s.ID, s.Client, so.w.ID, so.w.Scripts, heights, so.from, tip, fetched)
}

// logScore logs the score's claims and targets.
func logScore(t *testing.T, s *simulate.Score) {
	t.Helper()
	parts := []struct {
		name string
		c    *simulate.ClaimScore
	}{{"scripts", s.Candidates}, {"groups", s.CandidateGroups}}
	for _, p := range parts {
		if p.c == nil {
			continue
		}
		var b strings.Builder
		for _, bin := range append(slices.Clone(p.c.Calibration), p.c.Confident) {
			if bin.Count > 0 {
				fmt.Fprintf(&b, " [%g: %d of %d, mean P %.3f]", bin.PLow, bin.Right, bin.Count, *bin.MeanProbability)
			}
		}
		t.Logf("%s: %d listed, %d attributed, %d right;%s", p.name, p.c.ClaimCount, p.c.AttributedCount, p.c.RightCount, b.String())
	}
	for _, tg := range s.Targets {
		met := "n/a"
		if tg.Met != nil {
			met = map[bool]string{true: "met", false: "NOT MET"}[*tg.Met]
		}
		v := "-"
		if tg.Value != nil {
			v = fmt.Sprintf("%.4g", *tg.Value)
		}
		t.Logf("  %-7s %s: %s (want %s)", met, tg.Name, v, tg.Want)
	}
}

// writeFiles keeps the capture, index, labels and report for "privacy
// fetches" and "privacy evaluate" to be run on by hand.
func writeFiles(t *testing.T, dir string, capt, index []byte, labels *simulate.Labels, report []byte) {
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
