package btcwallet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"strings"
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
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // the wallet's "bdb" database driver
	"github.com/spvfilter/spvfilter/peer/neutrinobench"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The harness of the tests: btcd regtest nodes, wallets over a chain
// backend given as a parameter (backendCase), their state and their
// notifications. The flow itself is runWalletFlows.

// backendLife is a chain backend serving one life of a wallet.
type backendLife struct {
	client chain.Interface
	// release frees what the backend holds, once it has stopped.
	release func()
}

// openBackend starts a chain backend connected to the nodes at addrs,
// for a wallet born at birthday, with its own header sync done before
// ctx ends: ready for Wallet.SynchronizeRPC.
type openBackend func(ctx context.Context, addrs []string, birthday time.Time) (*backendLife, error)

// backendCase is a backend under test.
type backendCase struct {
	name string
	open openBackend
	// emits lists the kinds of chain notification the backend delivers
	// during the flow; no other kind may appear.
	emits []string
	// keepsHashes is set for a backend after whose reorganizations the
	// block hashes the wallet recorded are still the chain's.
	keepsHashes bool
}

// Test wallet secrets. The seed is fixed, so the same addresses come
// back in every run and in the restored wallet.
var (
	testSeed = sha256.Sum256([]byte("spvfilter btcwallet test seed"))
	pubPass  = []byte(wallet.InsecurePubPassphrase)
	privPass = []byte("spvfilter test passphrase")
	params   = &chaincfg.RegressionNetParams
)

const (
	// recoveryWindow is the look-ahead of the restored wallet's address
	// recovery (btcwallet's recovery_window).
	recoveryWindow = 20
	// received and sent are the amounts of the flow's payments.
	received btcutil.Amount = 10 * btcutil.SatoshiPerBitcoin
	sent     btcutil.Amount = 3 * btcutil.SatoshiPerBitcoin
	// feeRate is the wallet's fee rate, in satoshis per kilo-vbyte.
	feeRate = 5000
	// waitLimit bounds every wait of the flow.
	waitLimit = 90 * time.Second
)

// testChainSpec is the start of the test chain: blocks dated ten minutes
// apart from the regtest genesis, with realistic filters (neutrinobench's
// generator), so that a birthday picks a block inside it. btcwallet keeps
// a birthday 48 hours earlier than it is given (waddrmgr.Create), so the
// chain is longer than 288 blocks.
var testChainSpec = neutrinobench.ChainSpec{Blocks: 400, Elements: 20, Watched: 1, PaymentsPerScript: 1}

// restoreBirthdayHeight is the height whose block's time is the restored
// wallet's birthday: its birthday block is about 288 blocks lower.
const restoreBirthdayHeight = 350

// waitFor polls cond until it holds, failing the test with cond's last
// account of the state after limit.
func waitFor(t testing.TB, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: after %v, %s", what, limit, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testNet is the test's btcd nodes: the first mines, the others follow
// it over the peer-to-peer protocol.
type testNet struct {
	nodes []*peertest.Node
	miner *peertest.Node
}

// segwitWindow is the length of a BIP 9 period on regtest: btcd enforces
// segwit from the start of the second period after the first one whose
// blocks signal it (108 of 144), as the blocks btcd mines do.
const segwitWindow = 144

// startTestNet starts n nodes serving the chain of spec, whose blocks do
// not signal segwit, and mines on it up to the block before the first
// height where btcd enforces segwit, so that the miner's coinbases have
// matured and the wallet can spend its P2WPKH outputs.
func startTestNet(t testing.TB, spec neutrinobench.ChainSpec, n int) *testNet {
	t.Helper()
	net := startNodes(t, spec, n)
	_, height := net.tip(t)
	// The first period made of mined blocks only starts at the first
	// multiple of the window above the generated chain.
	signalled := (spec.Blocks + segwitWindow) / segwitWindow * segwitWindow
	net.mine(t, signalled+2*segwitWindow-1-int(height))
	return net
}

// startNodes starts n nodes serving the chain of spec, one block dated
// now on top (see neutrinobench.StartNodes), and stops them when the test
// ends.
func startNodes(t testing.TB, spec neutrinobench.ChainSpec, n int) *testNet {
	t.Helper()
	c, err := neutrinobench.CachedChain(spec)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := neutrinobench.StartNodes(c, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, node := range nodes {
			if t.Failed() {
				t.Logf("btcd %s output (tail):\n%s", node.P2PAddr, node.LogTail(20))
			}
			node.Stop()
		}
	})
	return &testNet{nodes: nodes, miner: nodes[0]}
}

func (n *testNet) addrs() []string { return neutrinobench.Addrs(n.nodes) }

// tip returns the miner's best block.
func (n *testNet) tip(t testing.TB) (chainhash.Hash, int32) {
	t.Helper()
	hash, height, err := n.miner.RPC().GetBestBlock()
	if err != nil {
		t.Fatal(err)
	}
	return *hash, height
}

// mine mines count blocks and waits until every node has them.
func (n *testNet) mine(t testing.TB, count int) []*chainhash.Hash {
	t.Helper()
	hashes := n.miner.Generate(t, count)
	n.waitSame(t)
	return hashes
}

// waitSame waits until every node's best block is the miner's.
func (n *testNet) waitSame(t testing.TB) {
	t.Helper()
	want, _ := n.tip(t)
	waitFor(t, "the nodes to agree on the tip", waitLimit, func() (bool, string) {
		for _, node := range n.nodes[1:] {
			got, err := node.RPC().GetBestBlockHash()
			if err != nil || *got != want {
				return false, fmt.Sprintf("node %s at %v (%v), miner at %v", node.P2PAddr, got, err, want)
			}
		}
		return true, ""
	})
}

// waitMempool waits until the miner's mempool holds txid.
func (n *testNet) waitMempool(t testing.TB, txid chainhash.Hash) {
	t.Helper()
	waitFor(t, "the transaction in the miner's mempool", waitLimit, func() (bool, string) {
		pool, err := n.miner.RPC().GetRawMempool()
		if err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(pool, func(h *chainhash.Hash) bool { return *h == txid }),
			fmt.Sprintf("mempool %v without %v", pool, txid)
	})
}

// walletLife is a wallet open on a backend, from its start to its stop.
type walletLife struct {
	loader  *wallet.Loader
	w       *wallet.Wallet
	backend *recordingBackend
	life    *backendLife
	stopped bool
}

// harness runs wallets over one backend connected to the nodes at addrs.
type harness struct {
	t     *testing.T
	addrs []string
	bc    backendCase
	log   *notificationLog
	// limit bounds each wait for a wallet or a backend.
	limit time.Duration
	// net is the nodes when the test started them.
	net *testNet
}

// createWallet creates a wallet from the test seed in dir, born at
// birthday, recovering addresses (a restore) when recovery is not zero,
// and starts it.
func (h *harness) createWallet(dir string, birthday time.Time, recovery uint32) *walletLife {
	h.t.Helper()
	loader := wallet.NewLoader(params, dir, true, 10*time.Second, recovery)
	w, err := loader.CreateNewWallet(pubPass, privPass, testSeed[:], birthday)
	if err != nil {
		h.t.Fatalf("creating the wallet: %v", err)
	}
	return h.start(loader, w)
}

// openWallet opens the wallet in dir and starts it.
func (h *harness) openWallet(dir string) *walletLife {
	h.t.Helper()
	loader := wallet.NewLoader(params, dir, true, 10*time.Second, 0)
	w, err := loader.OpenExistingWallet(pubPass, false)
	if err != nil {
		h.t.Fatalf("opening the wallet: %v", err)
	}
	return h.start(loader, w)
}

// start unlocks w and connects it to a new backend, as btcwallet's own
// daemon does: the backend started, then given to SynchronizeRPC.
func (h *harness) start(loader *wallet.Loader, w *wallet.Wallet) *walletLife {
	h.t.Helper()
	l := &walletLife{loader: loader, w: w}
	h.t.Cleanup(func() { l.stop(h.t) })
	if err := w.Unlock(privPass, nil); err != nil {
		h.t.Fatalf("unlocking the wallet: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.limit)
	defer cancel()
	life, err := h.bc.open(ctx, h.addrs, w.Manager.Birthday())
	if err != nil {
		h.t.Fatalf("starting the %s backend: %v", h.bc.name, err)
	}
	l.life = life
	l.backend = newRecordingBackend(life.client, h.log)
	if err := l.backend.Start(); err != nil {
		h.t.Fatalf("starting the %s backend: %v", h.bc.name, err)
	}
	w.SynchronizeRPC(l.backend)
	return l
}

// stop stops the wallet and its backend and closes the database. The
// wallet forgets its backend when it stops, without waiting for it: the
// backend is waited for here.
func (l *walletLife) stop(t testing.TB) {
	if l.stopped {
		return
	}
	l.stopped = true
	if err := l.loader.UnloadWallet(); err != nil {
		t.Errorf("unloading the wallet: %v", err)
	}
	if l.backend != nil {
		l.backend.Stop()
		l.backend.WaitForShutdown()
	}
	if l.life != nil {
		l.life.release()
	}
}

// waitSynced waits until the wallet has finished its rescan and is synced
// to the block tip, and for cond, if not nil, to hold on its state.
func (h *harness) waitSynced(l *walletLife, what string, tip chainhash.Hash, cond func(walletState) bool) walletState {
	h.t.Helper()
	var st walletState
	waitFor(h.t, what, h.limit, func() (bool, string) {
		synced := l.w.Manager.SyncedTo()
		if !l.w.ChainSynced() || synced.Hash != tip {
			return false, fmt.Sprintf("wallet synced to %v at %d (chain synced %v), tip %v; notifications:\n%v",
				synced.Hash, synced.Height, l.w.ChainSynced(), tip, h.log)
		}
		var err error
		if st, err = snapshot(l.w); err != nil {
			h.t.Fatalf("%s: %v; notifications:\n%v", what, err, h.log)
		}
		return cond == nil || cond(st), fmt.Sprintf("wallet state %v", st)
	})
	return st
}

// snapshot returns the wallet's state.
func (h *harness) snapshot(l *walletLife) walletState {
	h.t.Helper()
	st, err := snapshot(l.w)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// walletState is what a wallet knows, in a form two wallets can be
// compared in.
type walletState struct {
	Tip       int32
	Confirmed btcutil.Amount // at least one confirmation
	Total     btcutil.Amount // mempool included
	History   []txEntry      // by height (unmined last), then txid
	UTXOs     []utxoEntry    // by outpoint
}

// txEntry is a transaction of the wallet's history.
type txEntry struct {
	Txid   chainhash.Hash
	Height int32          // -1 when unmined
	Block  chainhash.Hash // zero when unmined
	Debit  btcutil.Amount // the wallet's outputs it spends
	Credit btcutil.Amount // its outputs paying the wallet
}

// utxoEntry is an unspent output of the wallet.
type utxoEntry struct {
	OutPoint wire.OutPoint
	Value    btcutil.Amount
	Height   int32 // -1 when unmined
	Block    chainhash.Hash
}

func (s walletState) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tip %d, confirmed %v, total %v", s.Tip, s.Confirmed, s.Total)
	for _, e := range s.History {
		fmt.Fprintf(&b, "\n  tx %v at %d (%v) debit %v credit %v", e.Txid, e.Height, e.Block, e.Debit, e.Credit)
	}
	for _, u := range s.UTXOs {
		fmt.Fprintf(&b, "\n  utxo %v %v at %d (%v)", u.OutPoint, u.Value, u.Height, u.Block)
	}
	return b.String()
}

// snapshot reads the wallet's state.
func snapshot(w *wallet.Wallet) (walletState, error) {
	st := walletState{Tip: w.Manager.SyncedTo().Height}
	var err error
	if st.Confirmed, err = w.CalculateBalance(1); err != nil {
		return st, fmt.Errorf("wallet balance: %w", err)
	}
	if st.Total, err = w.CalculateBalance(0); err != nil {
		return st, fmt.Errorf("wallet balance: %w", err)
	}
	res, err := w.GetTransactions(wallet.NewBlockIdentifierFromHeight(0), wallet.NewBlockIdentifierFromHeight(-1), "", nil)
	if err != nil {
		return st, fmt.Errorf("wallet history: %w", err)
	}
	for _, b := range res.MinedTransactions {
		for _, s := range b.Transactions {
			e, err := historyEntry(s, b.Height, *b.Hash)
			if err != nil {
				return st, err
			}
			st.History = append(st.History, e)
		}
	}
	for _, s := range res.UnminedTransactions {
		e, err := historyEntry(s, -1, chainhash.Hash{})
		if err != nil {
			return st, err
		}
		st.History = append(st.History, e)
	}
	outs, err := w.UnspentOutputs(wallet.OutputSelectionPolicy{Account: waddrmgr.DefaultAccountNum})
	if err != nil {
		return st, fmt.Errorf("wallet outputs: %w", err)
	}
	for _, o := range outs {
		u := utxoEntry{OutPoint: o.OutPoint, Value: btcutil.Amount(o.Output.Value), Height: -1}
		if !o.ContainingBlock.None() {
			u.Height, u.Block = o.ContainingBlock.Height, o.ContainingBlock.Hash
		}
		st.UTXOs = append(st.UTXOs, u)
	}
	return st.sorted(), nil
}

// sorted returns a copy of s with its history and outputs in order.
func (s walletState) sorted() walletState {
	s.History = slices.Clone(s.History)
	slices.SortStableFunc(s.History, func(a, b txEntry) int {
		if c := cmpHeight(a.Height, b.Height); c != 0 {
			return c
		}
		return bytes.Compare(a.Txid[:], b.Txid[:])
	})
	s.UTXOs = slices.Clone(s.UTXOs)
	slices.SortFunc(s.UTXOs, func(a, b utxoEntry) int {
		if c := bytes.Compare(a.OutPoint.Hash[:], b.OutPoint.Hash[:]); c != 0 {
			return c
		}
		return int(a.OutPoint.Index) - int(b.OutPoint.Index)
	})
	return s
}

// cmpHeight orders heights with unmined (-1) last.
func cmpHeight(a, b int32) int {
	if a < 0 {
		a = 1 << 30
	}
	if b < 0 {
		b = 1 << 30
	}
	return int(a - b)
}

func historyEntry(s wallet.TransactionSummary, height int32, block chainhash.Hash) (txEntry, error) {
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(s.Transaction)); err != nil {
		return txEntry{}, fmt.Errorf("transaction %v of the wallet's history: %w", s.Hash, err)
	}
	e := txEntry{Txid: *s.Hash, Height: height, Block: block}
	for _, in := range s.MyInputs {
		e.Debit += in.PreviousAmount
	}
	for _, out := range s.MyOutputs {
		e.Credit += btcutil.Amount(tx.TxOut[out.Index].Value)
	}
	return e, nil
}

// waddrmgrNamespace is the key of the address manager's bucket in the
// wallet's database (unexported in package wallet).
var waddrmgrNamespace = []byte("waddrmgr")

// birthdayBlock returns the height of the wallet's birthday block.
func (h *harness) birthdayBlock(l *walletLife) int32 {
	h.t.Helper()
	var bs waddrmgr.BlockStamp
	err := walletdb.View(l.w.Database(), func(tx walletdb.ReadTx) error {
		var err error
		bs, _, err = l.w.Manager.BirthdayBlock(tx.ReadBucket(waddrmgrNamespace))
		return err
	})
	if err != nil {
		h.t.Fatalf("the wallet's birthday block: %v", err)
	}
	return bs.Height
}

// changeOutput checks that tx spends the payment's output alone, pays
// sent to external and the rest, less a fee, to one change output, whose
// index it returns.
func changeOutput(t testing.TB, tx, pay *wire.MsgTx, external []byte) uint32 {
	t.Helper()
	if len(tx.TxIn) != 1 || tx.TxIn[0].PreviousOutPoint != (wire.OutPoint{Hash: pay.TxHash(), Index: 0}) || len(tx.TxOut) != 2 {
		t.Fatalf("the spend %v does not spend the payment to one output and change", tx.TxHash())
	}
	for i, out := range tx.TxOut {
		if bytes.Equal(out.PkScript, external) {
			if out.Value != int64(sent) {
				t.Fatalf("the spend pays %d to the external script, want %d", out.Value, sent)
			}
			change := uint32(1 - i)
			if fee := int64(received-sent) - tx.TxOut[change].Value; fee <= 0 || fee > 10_000 {
				t.Fatalf("the spend's fee is %d satoshis", fee)
			}
			return change
		}
	}
	t.Fatalf("the spend %v does not pay the external script", tx.TxHash())
	return 0
}

// expectState fails the test unless got is want.
func (h *harness) expectState(got, want walletState) {
	h.t.Helper()
	if want = want.sorted(); !reflect.DeepEqual(got, want) {
		h.t.Fatalf("wallet state:\n%v\nwant:\n%v", got, want)
	}
}

// anyoneCanSpend is the script of the generated chain's coinbases.
var anyoneCanSpend = []byte{txscript.OP_TRUE}

// spendGenerated spends the coinbase of the generated chain's block at
// height, an OP_TRUE output, to out, the rest less peertest.Fee to an
// external key, and submits the transaction. The miner's own coinbases
// are worth nothing on a long regtest chain (the subsidy halves every 150
// blocks), the early generated ones 50 BTC.
func spendGenerated(t *testing.T, net *testNet, height int32, out *wire.TxOut) *wire.MsgTx {
	t.Helper()
	tx := buildGenerated(t, net, height, out)
	if _, err := net.miner.RPC().SendRawTransaction(tx, true); err != nil {
		t.Fatalf("spending the coinbase of generated block %d: %v", height, err)
	}
	return tx
}

// buildGenerated is spendGenerated without submitting the transaction.
func buildGenerated(t *testing.T, net *testNet, height int32, out *wire.TxOut) *wire.MsgTx {
	t.Helper()
	block, err := net.miner.RPC().GetBlock(blockHashAt(t, net, height))
	if err != nil {
		t.Fatal(err)
	}
	cb := block.Transactions[0]
	if len(cb.TxOut) == 0 || string(cb.TxOut[0].PkScript) != string(anyoneCanSpend) {
		t.Fatalf("the coinbase of generated block %d does not pay OP_TRUE", height)
	}
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: cb.TxHash(), Index: 0}, nil, nil))
	tx.AddTxOut(out)
	rest := cb.TxOut[0].Value - out.Value - peertest.Fee
	tx.AddTxOut(wire.NewTxOut(rest, peertest.NewKey("spvfilter btcwallet funding change").P2WPKHScript()))
	return tx
}

// seedKeys returns the keys of the test seed's BIP 84 addresses of the
// default account at the given branch and index pairs, derived by a
// scratch wallet created from the seed, so that they are the keys a
// wallet restored from it looks for.
func seedKeys(t *testing.T, paths [][2]uint32) []*peertest.Key {
	t.Helper()
	loader := wallet.NewLoader(params, t.TempDir(), true, 10*time.Second, 0)
	w, err := loader.CreateNewWallet(pubPass, privPass, testSeed[:], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer loader.UnloadWallet()
	if err := w.Unlock(privPass, nil); err != nil {
		t.Fatal(err)
	}
	sm, err := w.Manager.FetchScopedKeyManager(waddrmgr.KeyScopeBIP0084)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]*peertest.Key, len(paths))
	err = walletdb.View(w.Database(), func(tx walletdb.ReadTx) error {
		ns := tx.ReadBucket(waddrmgrNamespace)
		for i, p := range paths {
			addr, err := sm.DeriveFromKeyPath(ns, waddrmgr.DerivationPath{
				InternalAccount: waddrmgr.DefaultAccountNum, Account: waddrmgr.DefaultAccountNum,
				Branch: p[0], Index: p[1],
			})
			if err != nil {
				return err
			}
			pk, ok := addr.(waddrmgr.ManagedPubKeyAddress)
			if !ok {
				return fmt.Errorf("address %v is a %T", addr.Address(), addr)
			}
			priv, err := pk.PrivKey()
			if err != nil {
				return err
			}
			keys[i] = &peertest.Key{Priv: priv}
			if script, err := txscript.PayToAddrScript(addr.Address()); err != nil || string(script) != string(keys[i].P2WPKHScript()) {
				return fmt.Errorf("address %v: script %x (%v), the key's P2WPKH script %x", addr.Address(), script, err, keys[i].P2WPKHScript())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("deriving the seed's keys: %v", err)
	}
	return keys
}

// blockHashAt returns the hash of the miner's block at height.
func blockHashAt(t testing.TB, net *testNet, height int32) *chainhash.Hash {
	t.Helper()
	hash, err := net.miner.RPC().GetBlockHash(int64(height))
	if err != nil {
		t.Fatal(err)
	}
	return hash
}
