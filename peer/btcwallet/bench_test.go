//go:build linux

package btcwallet

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/neutrinobench"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The restore benchmark: a wallet restored from the test seed with a
// birthday at height 0 and at three quarters of a long chain of
// realistic filters (neutrinobench's generator: DefaultSpec, 500 filter
// elements a block), on this package's backend and on btcwallet's
// neutrino backend, each restore in a process of its own so that its CPU
// time and peak resident set size are its own. The bytes the restore
// receives are counted by a proxy in front of each node, in this process,
// the same way for both backends. The backends take turns: within a
// round, for each birthday, one backend then the other, the order
// swapped every round.
//
//	SPVFILTER_LONG=1 go test -run TestRestoreBenchmark -v -timeout 180m
//	SPVFILTER_LONG=1 SPVFILTER_BENCH_BLOCKS=1000 SPVFILTER_BENCH_ROUNDS=2 SPVFILTER_BENCH_PEERS=3 go test -run TestRestoreBenchmark -v
//	SPVFILTER_LONG=1 SPVFILTER_BENCH_PROFILE=/tmp/prof go test -run TestRestoreBenchmark -v -timeout 180m
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
	// every backend and birthday once.
	blocksEnv = "SPVFILTER_BENCH_BLOCKS"
	roundsEnv = "SPVFILTER_BENCH_ROUNDS"
	// peersEnv sets the number of nodes serving the chain (1 by default:
	// a node that syncs 20,000 generated blocks from another takes longer
	// than neutrinobench.StartNodes allows on a busy two-core machine).
	peersEnv = "SPVFILTER_BENCH_PEERS"
	// profileEnv names a directory where each restoring process writes
	// its CPU and memory profiles.
	profileEnv = "SPVFILTER_BENCH_PROFILE"
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

// benchBackends are the backends the benchmark compares, each against
// the last: this package's over a client with its default filter cache
// (filters kept on disk, up to 256 MiB, for scans over the same blocks)
// and without, and btcwallet's neutrino backend.
var benchBackends = []backendCase{
	spvfilterCase,
	{name: "spvfilter-nocache", open: openSpvfilter(client.Config{FilterCacheBytes: -1})},
	neutrinoCase,
}

// TestRestoreBenchmark measures wallet restores on each backend; it is not
// a timed test: it reports the figures and checks only what the restores
// find.
func TestRestoreBenchmark(t *testing.T) {
	if os.Getenv(longEnv) != "1" {
		t.Skipf("the restore benchmark is opt-in: %s=1 go test -run TestRestoreBenchmark -v -timeout 180m "+
			"(%s: chain length, default 20000; %s: rounds, default 1; %s: nodes, default 1)",
			longEnv, blocksEnv, roundsEnv, peersEnv)
	}
	blocks, rounds := peertest.EnvCount(t, blocksEnv, 20_000), peertest.EnvCount(t, roundsEnv, 1)
	spec := neutrinobench.DefaultSpec
	spec.Blocks = blocks
	start := time.Now()
	net := startTestNet(t, spec, peertest.EnvCount(t, peersEnv, 1))
	want := payFromSeed(t, net).sorted()
	t.Logf("%d-block chain on %d btcd node(s), wallet paid, in %v", blocks, len(net.nodes), time.Since(start).Round(time.Second))
	tip, _ := net.tip(t)
	heights := []int32{0, int32(blocks) * 3 / 4}
	costs := make(map[string][]restoreCost) // by backend and birthday
	for round := 1; round <= rounds; round++ {
		order := slices.Clone(benchBackends)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for _, height := range heights {
			for _, bc := range order {
				c := runRestore(t, bc, net, height, tip)
				if c.Birthday < height-birthdaySlack || c.Birthday > height+birthdaySlack {
					t.Errorf("%s: birthday block at %d for a birthday at the time of block %d", bc.name, c.Birthday, height)
				}
				if !reflect.DeepEqual(c.State, want) {
					t.Errorf("%s, birthday %d: restored wallet\n%v\nwant\n%v", bc.name, height, c.State, want)
				}
				t.Logf("round %d %-9s birthday %6d (block %6d): wall %7.2fs, CPU %7.2fs, peak RSS %6.1f MiB, received %7.1f MiB",
					round, bc.name, height, c.Birthday, c.Wall.Seconds(), c.CPU.Seconds(),
					float64(c.PeakRSS)/(1<<20), float64(c.Received)/(1<<20))
				key := costKey(bc.name, height)
				costs[key] = append(costs[key], c)
			}
		}
	}
	t.Logf("medians of %d round(s), %d blocks:\n%s", rounds, blocks, costTable(costs, heights))
}

func costKey(backend string, height int32) string { return fmt.Sprintf("%s@%d", backend, height) }

// costTable is the median cost of each backend's restores for each
// birthday, and the ratio of each backend's to the last one's, as a
// Markdown table.
func costTable(costs map[string][]restoreCost, heights []int32) string {
	var b strings.Builder
	b.WriteString("| birthday | backend | wall s | CPU s | peak RSS MiB | received MiB |\n|---|---|---|---|---|---|\n")
	last := benchBackends[len(benchBackends)-1]
	for _, h := range heights {
		base := medianCost(costs[costKey(last.name, h)])
		for _, bc := range benchBackends {
			m := medianCost(costs[costKey(bc.name, h)])
			fmt.Fprintf(&b, "| %d | %s | %.2f | %.2f | %.1f | %.1f |\n", h, bc.name, m[0], m[1], m[2], m[3])
		}
		for _, bc := range benchBackends[:len(benchBackends)-1] {
			m := medianCost(costs[costKey(bc.name, h)])
			fmt.Fprintf(&b, "| %d | %s / %s | %.2f | %.2f | %.2f | %.2f |\n", h, bc.name, last.name,
				m[0]/base[0], m[1]/base[1], m[2]/base[2], m[3]/base[3])
		}
	}
	return b.String()
}

// medianCost returns the medians of the wall time and CPU time in
// seconds, and of the peak RSS and bytes received in MiB.
func medianCost(cs []restoreCost) [4]float64 {
	var out [4]float64
	for i, f := range []func(restoreCost) float64{
		func(c restoreCost) float64 { return c.Wall.Seconds() },
		func(c restoreCost) float64 { return c.CPU.Seconds() },
		func(c restoreCost) float64 { return float64(c.PeakRSS) / (1 << 20) },
		func(c restoreCost) float64 { return float64(c.Received) / (1 << 20) },
	} {
		vs := make([]float64, len(cs))
		for j, c := range cs {
			vs[j] = f(c)
		}
		slices.Sort(vs)
		if n := len(vs); n > 0 {
			out[i] = (vs[(n-1)/2] + vs[n/2]) / 2
		}
	}
	return out
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
	// Birthday is the height of the wallet's birthday block.
	Birthday int32
	State    walletState
	// PeakRSS is the process's own peak resident set size (see
	// peertest.PeakRSS), zero where it cannot be read.
	PeakRSS uint64
}

// restoreCost is a restore's result and what its process used.
type restoreCost struct {
	restoreResult
	// CPU is the user and system time of the whole process.
	CPU time.Duration
	// Received counts the bytes the nodes sent the process.
	Received uint64
}

// runRestore restores the wallet on bc, with a birthday at the time of
// the block at height, in a new process running TestRestoreChild,
// connected to the nodes through meters.
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
	var meters []*meter
	var addrs []string
	for _, node := range net.nodes {
		m := newMeter(t, node.P2PAddr)
		defer m.close()
		meters = append(meters, m)
		addrs = append(addrs, m.addr())
	}
	req := restoreRequest{Backend: bc.name, Addrs: addrs, Birthday: birthday, Tip: tip,
		Out: filepath.Join(t.TempDir(), "result.json")}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^TestRestoreChild$", "-test.v", "-test.timeout=" + (restoreLimit + time.Minute).String()}
	if dir := os.Getenv(profileEnv); dir != "" {
		name := filepath.Join(dir, fmt.Sprintf("%s-%d-%s", bc.name, height, time.Now().Format("150405")))
		args = append(args, "-test.cpuprofile="+name+".cpu", "-test.memprofile="+name+".mem")
	}
	cmd := exec.Command(os.Args[0], args...)
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
	if c.PeakRSS == 0 {
		// Only where the process cannot tell its own peak: the rusage's
		// includes the RSS of this process when it started the child.
		c.PeakRSS = uint64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	for _, m := range meters {
		c.Received += m.received()
	}
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
	res.Birthday = h.birthdayBlock(l)
	res.PeakRSS, _ = peertest.PeakRSS()
	b, err := json.Marshal(res)
	if err == nil {
		err = os.WriteFile(req.Out, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// meter is a proxy on 127.0.0.1 in front of a node that counts the bytes
// the node sends through it.
type meter struct {
	ln     net.Listener
	target string
	n      atomic.Uint64
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newMeter(t *testing.T, target string) *meter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &meter{ln: ln, target: target}
	m.wg.Add(1)
	go m.serve()
	return m
}

func (m *meter) addr() string { return m.ln.Addr().String() }

// received returns the bytes the node has sent so far.
func (m *meter) received() uint64 { return m.n.Load() }

func (m *meter) serve() {
	defer m.wg.Done()
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", m.target)
		if err != nil {
			c.Close()
			continue
		}
		m.mu.Lock()
		m.conns = append(m.conns, c, up)
		m.mu.Unlock()
		m.wg.Add(2)
		go m.pipe(up, c, nil)
		go m.pipe(c, up, &m.n)
	}
}

// pipe copies from src to dst, counting into n if not nil, and closes
// both when either side ends.
func (m *meter) pipe(dst, src net.Conn, n *atomic.Uint64) {
	defer m.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if n != nil {
				n.Add(uint64(k))
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// close stops the meter and waits for its connections to end.
func (m *meter) close() {
	m.ln.Close()
	m.mu.Lock()
	for _, c := range m.conns {
		c.Close()
	}
	m.mu.Unlock()
	m.wg.Wait()
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
