package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// crashChildEnv names the environment variable that makes the test binary
// a crash child: it writes to the store in the directory the variable
// holds until it is killed.
const crashChildEnv = "SPVFILTER_STORE_CRASH_CHILD"

// crashChainLen is the height of the chain crash children write.
const crashChainLen = 3000

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		run := func() error { return crashChild(dir) }
		if seed, err := strconv.ParseUint(os.Getenv(crashChainEnv), 10, 64); err == nil {
			run = func() error { return crashChainChild(dir, seed) }
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashChild writes headers, filter headers and filters of the test chain
// in batches of random sizes, truncating now and then, with fsync on,
// forever. It says "ready" once the store is open.
func crashChild(dir string) error {
	s, err := Open(dir, regtest)
	if err != nil {
		return err
	}
	headers := mineChain(crashChainLen, 0)
	fhs := fakeFilterHeaders(crashChainLen + 1)
	fmt.Println("ready")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for {
		tip := int(s.Height())
		switch {
		case tip == crashChainLen || rng.IntN(20) == 0:
			if err := s.Truncate(int32(rng.IntN(tip + 1))); err != nil {
				return err
			}
		default:
			end := min(tip+1+rng.IntN(300), crashChainLen+1)
			if err := s.AppendHeaders(headers[tip+1 : end]); err != nil {
				return err
			}
		}
		// Filter headers trail the block headers by a little.
		if ft, top := int(s.FilterHeaderTip()), int(s.Height())-rng.IntN(5); ft < top {
			if err := s.AppendFilterHeaders(int32(ft+1), fhs[ft+1:top+1]); err != nil {
				return err
			}
			for h := ft + 1; h <= top; h += 7 {
				if err := s.PutFilter(headers[h].BlockHash(), fakeFilter(h)); err != nil {
					return err
				}
			}
		}
	}
}

// killChild starts the test binary as a crash child with env added to
// its environment, waits until it is ready, lets it run for delay and
// kills it with SIGKILL.
func killChild(t *testing.T, run int, delay time.Duration, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("run %d: child did not start: %q, %v, %s", run, line, err, stderr.String())
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("run %d: child ended on its own (%v): %s", run, err, stderr.String())
	}
}

func TestCrashKill9(t *testing.T) {
	const runs = 24
	dir := t.TempDir()
	headers := mineChain(crashChainLen, 0)
	fhs := fakeFilterHeaders(crashChainLen + 1)
	var grown, cut int
	prevHeight := int32(0)
	for run := 0; run < runs; run++ {
		killChild(t, run, time.Duration(rand.IntN(40)+1)*time.Millisecond, crashChildEnv+"="+dir)

		s, err := Open(dir, regtest)
		if err != nil {
			t.Fatalf("run %d: reopening after kill -9: %v", run, err)
		}
		checkPrefix(t, s, headers, 0)
		ft := s.FilterHeaderTip()
		if ft > s.Height() {
			t.Fatalf("run %d: filter headers reach %d above the headers' %d", run, ft, s.Height())
		}
		if ft >= 0 {
			got, err := s.FilterHeaders(0, ft)
			if err != nil || !slices.Equal(got, fhs[:ft+1]) {
				t.Fatalf("run %d: filter headers 0..%d are not those written (%v)", run, ft, err)
			}
		}
		for h := 0; h <= crashChainLen; h += 7 {
			f, ok, err := s.Filter(headers[h].BlockHash())
			if err != nil || ok && !bytes.Equal(f, fakeFilter(h)) {
				t.Fatalf("run %d: cached filter %d is %x (%v)", run, h, f, err)
			}
		}
		if s.Height() != prevHeight {
			grown++
		}
		if len(s.Recovered()) > 0 {
			cut++
			t.Logf("run %d: %q", run, s.Recovered())
		}
		prevHeight = s.Height()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d runs: the stored height changed in %d, a damaged tail was cut in %d", runs, grown, cut)
	if grown < runs/2 {
		t.Fatalf("the children changed the store in only %d of %d runs: the test exercises nothing", grown, runs)
	}
}

// crashChainEnv names the environment variable that makes the test binary
// a chain crash child: it runs crashPlan with the seed the variable holds
// through the chain of the store in the directory crashChildEnv holds.
const crashChainEnv = "SPVFILTER_STORE_CRASH_CHAIN_SEED"

// crashPlan calls step with the inputs to Extend of a header sync from the
// genesis block that grows the chain and now and then replaces up to
// 2,500 blocks with a branch of more work, and with the chain's headers
// once it succeeds, and whether the step is a reorganization; the same
// seed gives the same plan. It stops after steps steps, or when step
// fails.
func crashPlan(seed uint64, steps int, step func(in, path []wire.BlockHeader, reorg bool) error) error {
	rng := rand.New(rand.NewPCG(seed, 2))
	path := []wire.BlockHeader{regtest.GenesisBlock.Header}
	for i := 0; i < steps; i++ {
		tip := len(path) - 1
		fork, n := tip, 1+rng.IntN(300)
		if i > 0 && rng.IntN(3) == 0 {
			fork = max(0, tip-1-rng.IntN(2500))
			n += tip - fork
		}
		path = extendChain(path[:fork+1:fork+1], n, uint32(i))
		if err := step(path[fork+1:], path, fork < tip); err != nil {
			return err
		}
	}
	return nil
}

// crashChainChild runs crashPlan through the chain of the store in dir,
// with fsync on, until it is killed.
func crashChainChild(dir string, seed uint64) error {
	s, err := Open(dir, regtest)
	if err != nil {
		return err
	}
	c, err := s.Chain()
	if err != nil {
		return err
	}
	c.Now = benchClock
	fmt.Println("ready")
	return crashPlan(seed, 1000, func(in, _ []wire.BlockHeader, _ bool) error {
		_, err := c.Extend(ptrs(in))
		return err
	})
}

// TestCrashKill9Chain kills a child syncing headers through a store's
// chain, with reorganizations far below its window, at random moments;
// after each kill the store and its chain load with every header passing
// the chain's rules, and hold a chain the child had or was writing (a
// prefix of one of its chains).
func TestCrashKill9Chain(t *testing.T) {
	const runs = 20
	var reorged, cut int
	for run := 0; run < runs; run++ {
		dir := t.TempDir()
		seed := rand.Uint64()
		killChild(t, run, time.Duration(rand.IntN(150)+10)*time.Millisecond,
			crashChildEnv+"="+dir, fmt.Sprintf("%s=%d", crashChainEnv, seed))

		s, err := Open(dir, regtest)
		if err != nil {
			t.Fatalf("run %d: reopening after kill -9: %v", run, err)
		}
		c, err := s.Chain()
		if err != nil {
			t.Fatalf("run %d: the chain after kill -9: %v", run, err)
		}
		for _, r := range s.Recovered() {
			if strings.Contains(r, "invalid block header") {
				t.Fatalf("run %d: a stored header failed the chain's rules: %s", run, r)
			}
			cut++
		}
		// Find the stored tip in the child's plan: hashes link, so the
		// tip's place fixes the whole chain.
		tip, tipHash := c.Height(), c.Hash(c.Height())
		found, sawReorg := false, false
		errFound := errors.New("found")
		crashPlan(seed, 1000, func(_, path []wire.BlockHeader, reorg bool) error {
			sawReorg = sawReorg || reorg
			if int(tip) < len(path) && path[tip].BlockHash() == tipHash {
				found = true
				return errFound
			}
			return nil
		})
		if !found {
			t.Fatalf("run %d: the stored chain (tip %d %v) is none the child wrote", run, tip, tipHash)
		}
		if sawReorg {
			reorged++
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d runs: %d stopped in or after a reorganization, a damaged tail was cut in %d", runs, reorged, cut)
	if reorged < runs/4 {
		t.Fatalf("only %d of %d runs reached a reorganization: the test exercises little", reorged, runs)
	}
}
