// Package peertest starts real btcd nodes for integration tests: it builds
// btcd from the module version pinned in go.mod (once, cached across test
// processes), runs it on regtest with loopback-only ports and a temporary
// data directory, mines blocks and creates signed transactions without a
// wallet.
//
// A test starts a node with StartBtcd, which stops it when the test ends;
// a TestMain that shares one node among tests uses Start and Node.Stop.
// BuildLabelledChain mines a chain of wallets whose keys the test knows,
// the ground truth that measurements of what a client reveals score
// against.
package peertest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
)

const btcdModule = "github.com/btcsuite/btcd"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// btcdBinary returns the path of a btcd executable built from the pinned
// module. The binary is cached in the user cache directory under the module
// version; a build goes to a temporary name and is renamed into place, so
// test processes of several packages running at once never see a partial
// file.
func btcdBinary() (string, error) {
	buildOnce.Do(func() { buildPath, buildErr = buildBtcd() })
	return buildPath, buildErr
}

func buildBtcd() (string, error) {
	goTool, err := goCommand()
	if err != nil {
		return "", err
	}
	// Build inside our module so that go.mod's pinned version is used.
	out, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("peertest: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("peertest: not inside a Go module; cannot build btcd")
	}
	modDir := filepath.Dir(gomod)
	list := exec.Command(goTool, "list", "-m", "-f", "{{.Version}}", btcdModule)
	list.Dir = modDir
	out, err = list.Output()
	if err != nil {
		return "", fmt.Errorf("peertest: go list -m %s: %w", btcdModule, err)
	}
	version := strings.TrimSpace(string(out))
	cache, err := os.UserCacheDir()
	if err != nil || cache == "" {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "spvfilter-test", "btcd-"+version+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	exe := filepath.Join(dir, "btcd")
	if st, err := os.Stat(exe); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("peertest: creating btcd cache dir: %w", err)
	}
	// Test processes of several packages start at once: one builds, the
	// others wait for its result instead of building too.
	unlock := lockDir(dir)
	defer unlock()
	if st, err := os.Stat(exe); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return exe, nil
	}
	tmp, err := os.CreateTemp(dir, "btcd-build-*")
	if err != nil {
		return "", fmt.Errorf("peertest: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	cmd := exec.Command(goTool, "build", "-o", tmpName, btcdModule)
	cmd.Dir = modDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("peertest: building btcd: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmpName, exe); err != nil {
		return "", fmt.Errorf("peertest: installing btcd: %w", err)
	}
	return exe, nil
}

// lockDir takes a lock file in dir, waiting while another process holds
// it; a lock older than buildLockStale is taken as left by a dead process.
// The lock only saves duplicate builds: installing by rename is safe
// without it.
func lockDir(dir string) (unlock func()) {
	name := filepath.Join(dir, "build.lock")
	deadline := time.Now().Add(buildLockStale)
	for {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(name) }
		}
		if st, serr := os.Stat(name); serr == nil && time.Since(st.ModTime()) > buildLockStale {
			os.Remove(name)
			continue
		}
		if time.Now().After(deadline) {
			return func() {}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// buildLockStale bounds how long a btcd build may hold the lock.
const buildLockStale = 5 * time.Minute

// Option changes how a node is started.
type Option func(*options)

type options struct {
	args      []string
	miningKey *Key
	miningAdr string
}

// WithArgs passes extra command-line flags to btcd, such as
// "--nopeerbloomfilters", "--nocfilters" or "--nobanning".
func WithArgs(args ...string) Option {
	return func(o *options) { o.args = append(o.args, args...) }
}

// WithMiningAddr makes generated blocks pay to addr (an encoded regtest
// address) instead of the node's MinerKey; the coinbase helpers can then
// no longer spend them.
func WithMiningAddr(addr string) Option {
	return func(o *options) { o.miningAdr = addr }
}

// WithMiningKey makes generated blocks pay to k's P2PKH address.
func WithMiningKey(k *Key) Option {
	return func(o *options) { o.miningKey = k }
}

// Node is a running btcd regtest node listening on loopback.
type Node struct {
	// P2PAddr and RPCAddr are the node's peer-to-peer and RPC listen
	// addresses (127.0.0.1:port).
	P2PAddr, RPCAddr string
	// Params are the regtest chain parameters.
	Params *chaincfg.Params
	// DataDir holds the node's data, logs and output.
	DataDir string
	// MinerKey receives the coinbase of generated blocks, unless the node
	// was started WithMiningAddr.
	MinerKey *Key

	cmd     *exec.Cmd
	exited  chan struct{}
	rpc     *rpcclient.Client
	logPath string
	ownDir  bool

	mu        sync.Mutex
	spent     map[int64]bool // coinbase heights already spent
	stopOnce  sync.Once
	stopError error
}

// StartBtcd starts a btcd regtest node for the test and stops it (and
// removes its data) when the test and its subtests end. If the test failed,
// the tail of btcd's output is logged.
func StartBtcd(t testing.TB, opts ...Option) *Node {
	t.Helper()
	n, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("btcd output (tail):\n%s", n.LogTail(40))
		}
		if err := n.Stop(); err != nil {
			t.Errorf("stopping btcd: %v", err)
		}
	})
	return n
}

// Start starts a btcd regtest node in a fresh temporary directory. The
// caller must call Stop.
func Start(opts ...Option) (*Node, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	exe, err := btcdBinary()
	if err != nil {
		return nil, err
	}
	var lastErr error
	// A free port found by listening and closing may be taken again
	// before btcd binds it: retry a few times.
	for attempt := 0; attempt < 3; attempt++ {
		n, err := start(exe, &o)
		if err == nil {
			return n, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// dirPattern names the nodes' data directories in the temporary directory;
// ownerFile in each holds the pid of the test process that started it.
const (
	dirPattern = "peertest-btcd-*"
	ownerFile  = "owner.pid"
)

var sweepOnce sync.Once

func start(exe string, o *options) (*Node, error) {
	sweepOnce.Do(removeOrphanDirs)
	dir, err := os.MkdirTemp("", dirPattern)
	if err != nil {
		return nil, fmt.Errorf("peertest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("peertest: %w", err)
	}
	n := &Node{
		Params:  &chaincfg.RegressionNetParams,
		DataDir: dir,
		ownDir:  true,
		exited:  make(chan struct{}),
		spent:   make(map[int64]bool),
		logPath: filepath.Join(dir, "btcd.out"),
	}
	ok := false
	defer func() {
		if !ok {
			n.Stop()
		}
	}()
	miningAddr := o.miningAdr
	if miningAddr == "" {
		n.MinerKey = o.miningKey
		if n.MinerKey == nil {
			n.MinerKey = NewKey("peertest miner")
		}
		miningAddr = n.MinerKey.Address(n.Params).EncodeAddress()
	}
	p2pPort, err := freePort()
	if err != nil {
		return nil, err
	}
	rpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	n.P2PAddr = net.JoinHostPort("127.0.0.1", p2pPort)
	n.RPCAddr = net.JoinHostPort("127.0.0.1", rpcPort)
	// An empty config file keeps any user configuration out.
	conf := filepath.Join(dir, "btcd.conf")
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		return nil, fmt.Errorf("peertest: %w", err)
	}
	args := []string{
		"--regtest",
		"--configfile=" + conf,
		"--datadir=" + filepath.Join(dir, "data"),
		"--logdir=" + filepath.Join(dir, "logs"),
		"--listen=" + n.P2PAddr,
		"--rpclisten=" + n.RPCAddr,
		"--rpcuser=peertest",
		"--rpcpass=peertest",
		"--notls",
		"--nodnsseed",
		"--noonion",
		"--trickleinterval=100ms",
		"--miningaddr=" + miningAddr,
	}
	args = append(args, o.args...)
	logFile, err := os.Create(n.logPath)
	if err != nil {
		return nil, fmt.Errorf("peertest: %w", err)
	}
	n.cmd = exec.Command(exe, args...)
	n.cmd.Stdout = logFile
	n.cmd.Stderr = logFile
	n.cmd.SysProcAttr = sysProcAttr()
	if err := n.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("peertest: starting btcd: %w", err)
	}
	go func() {
		n.cmd.Wait()
		logFile.Close()
		close(n.exited)
	}()
	n.rpc, err = rpcclient.New(n.rpcConfig(), nil)
	if err != nil {
		return nil, fmt.Errorf("peertest: rpc client: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := n.rpc.GetBlockCount(); err == nil {
			break
		} else if time.Now().After(deadline) {
			return nil, fmt.Errorf("peertest: btcd RPC did not answer: %v; output:\n%s", err, n.LogTail(20))
		}
		select {
		case <-n.exited:
			return nil, fmt.Errorf("peertest: btcd exited at start; output:\n%s", n.LogTail(20))
		case <-time.After(50 * time.Millisecond):
		}
	}
	ok = true
	return n, nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("peertest: finding a free port: %w", err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, nil
}

// RPC returns the node's RPC client (HTTP POST mode, no TLS).
func (n *Node) RPC() *rpcclient.Client { return n.rpc }

// rpcConfig is how the node's RPC clients reach it.
func (n *Node) rpcConfig() *rpcclient.ConnConfig {
	return &rpcclient.ConnConfig{
		Host:         n.RPCAddr,
		User:         "peertest",
		Pass:         "peertest",
		HTTPPostMode: true,
		DisableTLS:   true,
	}
}

// batchRPC returns a new RPC client of the node that sends its requests
// in batches (rpcclient.NewBatch); the caller shuts it down.
func (n *Node) batchRPC() (*rpcclient.Client, error) {
	c, err := rpcclient.NewBatch(n.rpcConfig())
	if err != nil {
		return nil, fmt.Errorf("peertest: batch rpc client: %w", err)
	}
	return c, nil
}

// Generate mines count blocks and returns their hashes.
func (n *Node) Generate(t testing.TB, count int) []*chainhash.Hash {
	t.Helper()
	hashes, err := n.GenerateErr(count)
	if err != nil {
		t.Fatal(err)
	}
	return hashes
}

// GenerateErr is Generate for callers without a testing.TB.
func (n *Node) GenerateErr(count int) ([]*chainhash.Hash, error) {
	var all []*chainhash.Hash
	// Mine in chunks so that one RPC call never runs into a timeout.
	for count > 0 {
		c := min(count, 200)
		hashes, err := n.rpc.Generate(uint32(c))
		if err != nil {
			return all, fmt.Errorf("peertest: generate %d: %w", c, err)
		}
		all = append(all, hashes...)
		count -= c
	}
	return all, nil
}

// CPU returns the user plus system CPU time btcd has used so far (see
// ProcessCPU); ok is false where it cannot be measured.
func (n *Node) CPU() (cpu time.Duration, ok bool) {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0, false
	}
	return ProcessCPU(n.cmd.Process.Pid)
}

// Stop stops btcd (interrupt, then kill after 10 s), waits for it to exit
// and removes its data directory. It is safe to call more than once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		if n.rpc != nil {
			n.rpc.Shutdown()
		}
		if n.cmd != nil && n.cmd.Process != nil {
			n.cmd.Process.Signal(os.Interrupt)
			select {
			case <-n.exited:
			case <-time.After(10 * time.Second):
				n.cmd.Process.Kill()
				<-n.exited
			}
		}
		if n.ownDir {
			n.stopError = os.RemoveAll(n.DataDir)
		}
	})
	return n.stopError
}

// LogTail returns the last lines of btcd's output.
func (n *Node) LogTail(lines int) string {
	f, err := os.Open(n.logPath)
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
