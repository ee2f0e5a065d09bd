package store

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv names the environment variable that makes the test binary
// a crash child: it writes to the store in the directory the variable
// holds until it is killed.
const crashChildEnv = "SPVFILTER_STORE_CRASH_CHILD"

// crashChainLen is the height of the chain crash children write.
const crashChainLen = 3000

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		if err := crashChild(dir); err != nil {
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

func TestCrashKill9(t *testing.T) {
	const runs = 24
	dir := t.TempDir()
	headers := mineChain(crashChainLen, 0)
	fhs := fakeFilterHeaders(crashChainLen + 1)
	var grown, cut int
	prevHeight := int32(0)
	for run := 0; run < runs; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
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
		time.Sleep(time.Duration(rand.IntN(40)+1) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("run %d: child ended on its own (%v): %s", run, err, stderr.String())
		}

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
