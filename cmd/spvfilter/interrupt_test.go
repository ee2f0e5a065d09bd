package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptExitStatus checks that Ctrl-C ends a command waiting on a
// node with exit status 130 and one line naming the command, for every
// command that talks to nodes: the node here accepts connections and
// never answers, so each command is still waiting when the signal comes.
func TestInterruptExitStatus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var conns []net.Conn // silent until the listener closes
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	node := ln.Addr().String()
	addr := "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
	outDir := t.TempDir()
	universeFile, indexFile := filepath.Join(outDir, "universe.txt"), filepath.Join(outDir, "universe.idx")
	datadir, cache := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // signet's default data directory
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// A scan says where what it stored is kept, or that nothing is.
		{"scan", []string{"scan", "--connect", node, "--network", "regtest", "--watch", addr, "--timeout", "2m", "--datadir", datadir},
			"scan interrupted: what it verified and stored so far is kept in " + filepath.Join(datadir, "regtest") + ", and the next scan with this data directory resumes from it"},
		{"scan, the default data directory", []string{"scan", "--connect", node, "--network", "signet", "--watch", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "--timeout", "2m"},
			"scan interrupted: what it verified and stored so far is kept in " + filepath.Join(cache, "spvfilter", "signet") + ", and the next scan with this data directory resumes from it"},
		{"scan, no data directory", []string{"scan", "--connect", node, "--network", "regtest", "--watch", addr, "--timeout", "2m"},
			"scan interrupted: nothing it verified is kept, there being no data directory (regtest keeps none by default): give --datadir DIR for the next scan to resume from what it stores there"},
		{"scan, --datadir ''", []string{"scan", "--connect", node, "--network", "signet", "--watch", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "--timeout", "2m", "--datadir", ""},
			"scan interrupted: nothing it verified is kept, there being no data directory (--datadir '' keeps none): give --datadir DIR for the next scan to resume from what it stores there"},
		{"peers", []string{"peers", "--connect", node, "--network", "regtest", "--timeout", "2m", "--datadir", t.TempDir()}, "peers interrupted"},
		{"privacy universe", []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--timeout", "2m", "--out", universeFile, "--index", indexFile},
			"privacy universe interrupted: --out " + universeFile + " and --index " + indexFile + " not written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stderr, done := startMain(t, tc.args...)
			time.Sleep(time.Second) // connected and waiting
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			endsInterrupted(t, cmd, done, 30*time.Second, stderr)
			if got := strings.TrimSpace(stderr.String()); !strings.HasSuffix(got, "spvfilter: "+tc.want) {
				t.Errorf("stderr %q, want it to end with %q", got, "spvfilter: "+tc.want)
			}
			if entries, err := os.ReadDir(outDir); err != nil || len(entries) != 0 {
				t.Errorf("files left behind: %v (%v)", entries, err)
			}
		})
	}
}

// TestInterruptOfflineWork: Ctrl-C or SIGTERM ends a command that works
// without nodes, still at work, as it ends one that talks to nodes:
// status 130 and one line, or with --json one JSON object, saying so.
// Before, the signal killed it without a word, and SIGTERM gave 143.
func TestInterruptOfflineWork(t *testing.T) {
	model := []string{"privacy", "model", "--addresses", "200", "--monte-carlo", "1000000"} // minutes of trials
	for _, tc := range []struct {
		name string
		args []string
		sig  syscall.Signal
		want string
	}{
		{"Ctrl-C", model, syscall.SIGINT, "spvfilter: privacy model interrupted"},
		{"SIGTERM", model, syscall.SIGTERM, "spvfilter: privacy model interrupted"},
		{"SIGTERM with --json", append(model, "--json"), syscall.SIGTERM, `{"error":"privacy model interrupted","exit_code":130}`},
		// lab watches for signals itself while it downloads; measuring
		// vectors' blocks it ends as any command.
		{"lab measuring", []string{"lab", "--vectors", "../../testvectors/bip158/testnet-19.json"}, syscall.SIGTERM, "spvfilter: lab interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tc.args...)
			cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // at work
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			endsInterrupted(t, cmd, done, 30*time.Second, &stderr)
			if got := strings.TrimSpace(stderr.String()); got != tc.want || stdout.String() != "" {
				t.Errorf("stderr %q, stdout %q; want stderr %q and no output", got, stdout.String(), tc.want)
			}
		})
	}
}

// startMain starts this test binary as spvfilter with args, its
// standard error kept, and returns it, its standard error, and the
// channel that receives its Wait's error once it ends.
func startMain(t *testing.T, args ...string) (*exec.Cmd, *lockedBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, stderr, done
}

// endsInterrupted waits up to within for cmd, whose Wait's error done
// receives, to end after a signal, killing it if it has not, and fails
// the test unless it exited with status exitInterrupted.
func endsInterrupted(t *testing.T, cmd *exec.Cmd, done <-chan error, within time.Duration, stderr *lockedBuffer) {
	t.Helper()
	var err error
	select {
	case err = <-done:
	case <-time.After(within):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running %v after the signal; stderr %q", within, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("ended with %v, want exit status %d; stderr %q", err, exitInterrupted, stderr.String())
	}
}
