package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestCaptureOutThatKeepsNothing: privacy capture refuses, before it
// listens, an --out device that keeps no record (/dev/zero) or takes none
// (/dev/full), or a link to one, naming --out; /dev/null, given on
// purpose to keep none, is taken. Before, each was taken: /dev/zero
// swallowed the records, and /dev/full dropped every client that sent
// one while the capture went on and ended with status 0, "nothing
// captured". An --out that stops taking records while the relay runs (a
// pipe whose reader has gone) ends the capture with status 1 at its first
// record, naming --out and the cause; before, every client was dropped
// on its first message, in Go's words ("relay: writing capture: write
// ...: broken pipe"), until --duration ended with status 0.
func TestCaptureOutThatKeepsNothing(t *testing.T) {
	up := startVersionAnswerer(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "zero.jsonl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		out           func(t *testing.T) string
		readerLeaves  bool // a pipe whose reader goes before the client's first record
		status        int
		want, notWant []string
	}{
		{"/dev/zero", func(*testing.T) string { return "/dev/zero" }, false, exitBadInput,
			[]string{"--out /dev/zero: a device, not a file: the records written there could not be read back"}, []string{"listening on"}},
		{"/dev/full", func(*testing.T) string { return "/dev/full" }, false, exitBadInput,
			[]string{"--out /dev/full: a device, not a file:", "or /dev/null to keep none"}, []string{"listening on"}},
		{"link to /dev/zero", func(*testing.T) string { return link }, false, exitBadInput,
			[]string{"--out " + link + ": a link to the device /dev/zero, not a file"}, []string{"listening on"}},
		{"/dev/null", func(*testing.T) string { return os.DevNull }, false, exitOK,
			[]string{"recording to /dev/null"}, []string{"a device"}},
		{"pipe whose reader has gone", makeFifo, true, exitFailure,
			[]string{": closed: its record could not be written to --out",
				": a record could not be written: the reader of the pipe has gone: the capture stopped there, 0 records written before"},
			[]string{"relay: writing capture", "broken pipe", "nothing captured"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out(t)
			var reader *os.File
			if tc.readerLeaves {
				var err error
				if reader, err = os.OpenFile(out, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
					t.Fatal(err)
				}
				defer reader.Close()
			}
			relay := freeLoopbackAddr(t)
			type result struct {
				stdout, stderr string
				status         int
			}
			done := make(chan result, 1)
			start, duration := time.Now(), "10s"
			if tc.status == exitOK {
				duration = "1s"
			}
			go func() {
				stdout, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", relay, "--upstream", up,
					"--network", "regtest", "--out", out, "--duration", duration)
				done <- result{stdout, stderr, status}
			}()
			if tc.readerLeaves {
				// Listening, the relay holds the pipe open: its reader
				// goes, then a client sends its version, a record.
				c := dialRelay(t, relay)
				reader.Close()
				v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), 1, 0)
				if err := wire.WriteMessage(c, v, wire.ProtocolVersion, wire.TestNet); err != nil {
					t.Fatal(err)
				}
			} else if tc.status == exitOK {
				// Taken: a client connects and leaves; the capture
				// runs to --duration.
				dialRelay(t, relay).Close()
			}
			var res result
			select {
			case res = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("capture did not end")
			}
			if res.status != tc.status {
				t.Fatalf("status %d, want %d: stdout %q, stderr %q", res.status, tc.status, res.stdout, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr %q\nwant %q", res.stderr, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(res.stderr, w) {
					t.Errorf("stderr %q\nholds %q", res.stderr, w)
				}
			}
			if tc.status != exitOK && time.Since(start) > 8*time.Second {
				t.Errorf("ended after %v: want at once, not at --duration 10s", time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// TestOutputIntoStreamsAndDevices: an output file that is a stream (a
// named pipe whose reader runs, /dev/stdout on a pipe) is written in
// place, and a device is refused unless it keeps nothing on purpose
// (/dev/null). Before: privacy universe --out /dev/null or a named pipe
// was refused, "the file exists (give --force to replace it)", though
// nothing was to be replaced; --out /dev/zero was refused so too and
// taken with --force; --out /dev/full --force failed only after the
// download ("no space left on device", status 1); and /dev/stdout on a
// pipe, as `| head` or `| wc` give, was refused by universe, lab
// --save-blocks and capture as "a symbolic link to /proc/self/fd/1, which
// does not exist".
func TestOutputIntoStreamsAndDevices(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	universe := []string{"privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out"}
	for _, tc := range []struct {
		name    string
		args    []string // FIFO is a named pipe whose reader runs
		process bool     // run as a process whose standard output is a pipe
		status  int
		stderr  string // in standard error
		data    string // what the pipe's reader, or standard output, begins with
	}{
		{"universe into /dev/zero", append(universe, "/dev/zero"), false, exitBadInput,
			"--out /dev/zero: a device, not a file: the universe written there could not be read back with privacy analyze --universe", ""},
		{"universe into /dev/full, --force", append(universe, "/dev/full", "--force"), false, exitBadInput,
			"--out /dev/full: a device, not a file", ""},
		{"universe into /dev/null", append(universe, os.DevNull), false, exitOK, "", ""},
		{"universe into a named pipe", append(universe, "FIFO"), false, exitOK, "", "# candidates of regtest blocks 0..3"},
		{"universe into /dev/stdout", append(universe, "/dev/stdout"), true, exitOK, "", "# candidates of regtest blocks 0..3"},
		{"lab blocks into /dev/stdout", []string{"lab", "--connect", node.P2PAddr, "--network", "regtest", "--probes", "0", "--timing", "0",
			"--save-blocks", "/dev/stdout"}, true, exitOK, "", "spvfilter blocks 1\n"},
		{"capture into /dev/stdout", []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node.P2PAddr, "--network", "regtest",
			"--out", "/dev/stdout", "--duration", "200ms"}, true, exitOK, "recording to /dev/stdout", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			var read <-chan string
			if i := slices.Index(args, "FIFO"); i >= 0 {
				args[i] = makeFifo(t)
				read = readFifo(t, args[i])
			}
			var stdout, stderr string
			var status int
			if tc.process {
				stdout, stderr, status = runProcess(t, args...)
			} else {
				stdout, stderr, status = runCLI(t, "", args...)
			}
			if status != tc.status || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("status %d, stderr %q\nwant %d and %q", status, stderr, tc.status, tc.stderr)
			}
			if read != nil {
				stdout = <-read
			}
			if !strings.HasPrefix(stdout, tc.data) {
				t.Errorf("the output begins %q, want %q", stdout[:min(len(stdout), 80)], tc.data)
			}
		})
	}
}

// runProcess runs spvfilter with args as a process (the binary in
// SPVFILTER_TEST_BINARY, or this test binary as spvfilter) whose standard
// output is a pipe, and returns what it printed and its exit status.
func runProcess(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out bytes.Buffer
	stderr, status = runProcessTo(t, &out, args...)
	return out.String(), stderr, status
}

// runProcessTo is runProcess with the process's standard output going to
// stdout (a file, or a pipe to a writer).
func runProcessTo(t *testing.T, stdout io.Writer, args ...string) (stderr string, status int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
	if bin := os.Getenv("SPVFILTER_TEST_BINARY"); bin != "" {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %q: %v", args, err)
	}
	return errb.String(), cmd.ProcessState.ExitCode()
}
