//go:build linux

package btcwallet

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/spvfilter/spvfilter/peer/neutrinobench"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The restore benchmark: a wallet restored from the test seed with a
// birthday at height 0 and at three quarters of a long chain of
// realistic filters (neutrinobench's generator: DefaultSpec, 500 filter
// elements a block), each restore in a process of its own so that its
// CPU time and peak resident set size are its own.
//
//	SPVFILTER_LONG=1 go test -run TestRestoreBenchmark -v -timeout 180m
//	SPVFILTER_LONG=1 SPVFILTER_BENCH_BLOCKS=1000 SPVFILTER_BENCH_ROUNDS=2 SPVFILTER_BENCH_PEERS=3 go test -run TestRestoreBenchmark -v
//
// The wallet's payments are made after the generated chain (the generator
// pays its own watched scripts, not a wallet's), so both restores scan
// the generated blocks' filters and find the same three transactions at
// the top.
const (
	// longEnv set to 1 turns the benchmark on.
	longEnv = "SPVFILTER_LONG"
	// blocksEnv sets the length of the generated chain (20,000 by
	// default); roundsEnv the number of rounds (1), each of which runs
	// every backend and birthday once, one after the other.
	blocksEnv = "SPVFILTER_BENCH_BLOCKS"
	roundsEnv = "SPVFILTER_BENCH_ROUNDS"
	// peersEnv sets the number of nodes serving the chain (1 by default:
	// a node that syncs 20,000 generated blocks from another takes longer
	// than neutrinobench.StartNodes allows on a busy two-core machine).
	peersEnv = "SPVFILTER_BENCH_PEERS"
	// childEnv carries a restore request to the process that runs it.
	childEnv = "SPVFILTER_RESTORE_CHILD"
	// restoreLimit bounds one restore.
	restoreLimit = 60 * time.Minute
	// birthdayShift is how much earlier than its given birthday btcwallet
	// keeps a wallet's birthday (waddrmgr.Create, v0.16.10).
	birthdayShift = 48 * time.Hour
	// birthdaySlack is how many generated blocks (ten minutes apart) from
	// the birthday the birthday block may be: btcwallet takes the first
	// block of its search within two hours of the birthday.
	birthdaySlack = 12
)

// benchBackends are the backends the benchmark compares.
var benchBackends = []backendCase{neutrinoCase}

// TestRestoreBenchmark measures wallet restores on each backend; it is not
// a timed test: it reports the figures and checks only what the restores
// find.
func TestRestoreBenchmark(t *testing.T) {
	if os.Getenv(longEnv) != "1" {
		t.Skipf("the restore benchmark is opt-in: %s=1 go test -run TestRestoreBenchmark -v -timeout 180m "+
			"(%s: chain length, default 20000; %s: rounds, default 1; %s: nodes, default 1)",
			longEnv, blocksEnv, roundsEnv, peersEnv)
	}
	blocks, rounds := envInt(t, blocksEnv, 20_000), envInt(t, roundsEnv, 1)
	spec := neutrinobench.DefaultSpec
	spec.Blocks = blocks
	start := time.Now()
	net := startTestNet(t, spec, envInt(t, peersEnv, 1))
	want := payFromSeed(t, net)
	t.Logf("%d-block chain on %d btcd node(s), wallet paid, in %v", blocks, len(net.nodes), time.Since(start).Round(time.Second))
	tip, _ := net.tip(t)
	for round := 1; round <= rounds; round++ {
		for _, bc := range benchBackends {
			for _, height := range []int32{0, int32(blocks) * 3 / 4} {
				c := runRestore(t, bc, net, height, tip)
				if c.Birthday < height-birthdaySlack || c.Birthday > height+birthdaySlack {
					t.Errorf("%s: birthday block at %d for a birthday at the time of block %d", bc.name, c.Birthday, height)
				}
				if want := want.sorted(); !reflect.DeepEqual(c.State, want) {
					t.Errorf("%s, birthday %d: restored wallet\n%v\nwant\n%v", bc.name, height, c.State, want)
				}
				t.Logf("round %d %-9s birthday %6d (block %6d): wall %7.2fs, CPU %7.2fs, peak RSS %6.1f MiB, received %7.1f MiB",
					round, bc.name, height, c.Birthday, c.Wall.Seconds(), c.CPU.Seconds(),
					float64(c.PeakRSS)/(1<<20), float64(c.Received)/(1<<20))
			}
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// restoreRequest is a restore for a process of its own.
type restoreRequest struct {
	Backend  string
	Addrs    []string
	Birthday time.Time
	Tip      chainhash.Hash
	Out      string // where the result goes, as JSON
}

// restoreResult is what the restoring process reports.
type restoreResult struct {
	// Wall is the time from the wallet's creation to its being synced
	// to the tip, the backend's own header sync included.
	Wall time.Duration
	// Received counts the bytes the backend read from the nodes.
	Received uint64
	// Birthday is the height of the wallet's birthday block.
	Birthday int32
	State    walletState
}

// restoreCost is a restore's result and what its process used.
type restoreCost struct {
	restoreResult
	// CPU is the user and system time of the whole process.
	CPU time.Duration
	// PeakRSS is the process's peak resident set size.
	PeakRSS uint64
}

// runRestore restores the wallet on bc, with a birthday at the time of
// the block at height, in a new process running TestRestoreChild.
func runRestore(t *testing.T, bc backendCase, net *testNet, height int32, tip chainhash.Hash) restoreCost {
	t.Helper()
	header, err := net.miner.RPC().GetBlockHeader(blockHashAt(t, net, height))
	if err != nil {
		t.Fatal(err)
	}
	birthday := header.Timestamp
	if height > 0 {
		// btcwallet looks for a block near its birthday less two days.
		birthday = birthday.Add(birthdayShift)
	}
	req := restoreRequest{Backend: bc.name, Addrs: net.addrs(), Birthday: birthday, Tip: tip,
		Out: filepath.Join(t.TempDir(), "result.json")}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreChild$", "-test.v",
		"-test.timeout="+(restoreLimit+time.Minute).String())
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s restore: %v\n%s", bc.name, err, out)
	}
	var c restoreCost
	if b, err = os.ReadFile(req.Out); err == nil {
		err = json.Unmarshal(b, &c.restoreResult)
	}
	if err != nil {
		t.Fatalf("%s restore result: %v", bc.name, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatalf("no resource usage for the restoring process")
	}
	c.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	c.PeakRSS = uint64(ru.Maxrss) * 1024 // kilobytes on Linux
	return c
}

// TestRestoreChild is the restoring process of TestRestoreBenchmark; it
// does nothing in a test run of its own.
func TestRestoreChild(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("the restoring process of TestRestoreBenchmark, run by it")
	}
	var req restoreRequest
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		t.Fatalf("%s: %v", childEnv, err)
	}
	var bc backendCase
	for _, c := range benchBackends {
		if c.name == req.Backend {
			bc = c
		}
	}
	if bc.open == nil {
		t.Fatalf("no backend %q", req.Backend)
	}
	h := &harness{t: t, addrs: req.Addrs, bc: bc, log: newNotificationLog(), limit: restoreLimit}
	h.log.setPhase("restore")
	start := time.Now()
	l := h.createWallet(t.TempDir(), req.Birthday, recoveryWindow)
	res := restoreResult{State: h.waitSynced(l, "the restore", req.Tip, nil)}
	res.Wall = time.Since(start)
	res.Received = l.life.received()
	res.Birthday = h.birthdayBlock(l)
	b, err := json.Marshal(res)
	if err == nil {
		err = os.WriteFile(req.Out, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}


// payFromSeed pays the test seed's first two BIP 84 addresses and spends
// the first payment to an external script with change to the seed's first
// change address, each in a block of its own, and returns the state a
// wallet restored from the seed must end in.
func payFromSeed(t *testing.T, net *testNet) walletState {
	t.Helper()
	keys := seedKeys(t, [][2]uint32{{waddrmgr.ExternalBranch, 0}, {waddrmgr.ExternalBranch, 1}, {waddrmgr.InternalBranch, 0}})
	first, second, change := keys[0], keys[1], keys[2]
	const paid2 = btcutil.SatoshiPerBitcoin
	changeValue := received - sent - peertest.Fee
	pay := spendGenerated(t, net, 2, wire.NewTxOut(int64(received), first.P2WPKHScript()))
	payBlock := *net.miner.Confirm(t, pay)
	external := peertest.NewKey("spvfilter btcwallet external").P2WPKHScript()
	spend := net.miner.Spend(t, []peertest.Output{peertest.OutputOf(pay, 0, first)},
		wire.NewTxOut(int64(sent), external), wire.NewTxOut(int64(changeValue), change.P2WPKHScript()))
	spendBlock := *net.miner.Confirm(t, spend)
	pay2 := spendGenerated(t, net, 3, wire.NewTxOut(paid2, second.P2WPKHScript()))
	pay2Block := *net.miner.Confirm(t, pay2)
	net.waitSame(t)
	_, tip := net.tip(t)
	entry := func(tx *wire.MsgTx, block chainhash.Hash, height int32, debit, credit btcutil.Amount) txEntry {
		return txEntry{Txid: tx.TxHash(), Height: height, Block: block, Debit: debit, Credit: credit}
	}
	return walletState{
		Tip: tip, Confirmed: changeValue + paid2, Total: changeValue + paid2,
		History: []txEntry{
			entry(pay, payBlock, tip-2, 0, received),
			entry(spend, spendBlock, tip-1, received, changeValue),
			entry(pay2, pay2Block, tip, 0, paid2),
		},
		UTXOs: []utxoEntry{
			{OutPoint: wire.OutPoint{Hash: spend.TxHash(), Index: 1}, Value: changeValue, Height: tip - 1, Block: spendBlock},
			{OutPoint: wire.OutPoint{Hash: pay2.TxHash(), Index: 0}, Value: paid2, Height: tip, Block: pay2Block},
		},
	}
}
