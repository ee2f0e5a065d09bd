package main

import (
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFileProblemSaysWrites: a full disk and a pipe whose reader has gone
// are said in the tool's words by fileProblem, whether Go's error carries
// a path or not, and so by every message built on it.
func TestFileProblemSaysWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"full disk", syscall.ENOSPC, "no space left on the device"},
		{"reader gone", syscall.EPIPE, "the reader of the pipe has gone"},
		{"full disk, with a path", &os.PathError{Op: "write", Path: "/x/u.txt", Err: syscall.ENOSPC}, "no space left on the device"},
		{"reader gone, with a path", &os.PathError{Op: "write", Path: "/x/pipe", Err: syscall.EPIPE}, "the reader of the pipe has gone"},
		{"missing", os.ErrNotExist, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fileProblem(tc.err); got != tc.want {
				t.Errorf("fileProblem = %q, want %q", got, tc.want)
			}
			if got := unnamedFileProblem(tc.err); got != tc.want {
				t.Errorf("unnamedFileProblem = %q, want %q", got, tc.want)
			}
			var pe *os.PathError
			if errors.As(tc.err, &pe) {
				if got, want := words(tc.err), pe.Path+": "+tc.want; got != want {
					t.Errorf("words = %q, want %q", got, want)
				}
			}
		})
	}
}

// TestWriteFailuresSaidAlike: a full disk (/dev/full) and a pipe whose
// reader has gone are said the same way wherever a command writes:
// privacy universe --out (standard output, a named pipe), lab
// --save-blocks (a named pipe), a result on standard output (a plot:
// TestNamedOnce). Each
// ends with status 1 naming what was written. Before, privacy capture
// alone said "no space left on the device" and "the reader of the pipe
// has gone"; the others said Go's "no space left on device" and "broken
// pipe".
func TestWriteFailuresSaidAlike(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	const (
		noSpace    = "no space left on the device"
		readerGone = "the reader of the pipe has gone"
	)
	for _, tc := range []struct {
		name string
		// args: FIFO is a named pipe whose reader goes once the command
		// has opened it; NODE is the node, reached only after that.
		args      []string
		toFull    bool // run as a process whose standard output is /dev/full
		want      string
		wantFIFO  string // want, after "FIFO: "
		wantNoise []string
	}{
		{name: "universe --out - into /dev/full", toFull: true,
			args: []string{"privacy", "universe", "--peer", "NODE", "--network", "regtest", "--out", "-"},
			want: "standard output: " + noSpace},
		{name: "universe --out a pipe whose reader goes",
			args:     []string{"privacy", "universe", "--peer", "NODE", "--network", "regtest", "--out", "FIFO"},
			wantFIFO: readerGone},
		{name: "lab --save-blocks a pipe whose reader goes",
			args: []string{"lab", "--connect", "NODE", "--network", "regtest", "--probes", "0", "--timing", "0",
				"--save-blocks", "FIFO"},
			wantFIFO: readerGone},
		{name: "a result into /dev/full", toFull: true,
			args: []string{"privacy", "model"},
			want: "standard output: " + noSpace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			gate := make(chan struct{})
			if i := slices.Index(args, "NODE"); i >= 0 {
				args[i] = gatedForward(t, node.P2PAddr, gate)
			}
			want := tc.want
			if i := slices.Index(args, "FIFO"); i >= 0 {
				args[i] = makeFifo(t)
				want = "--" + strings.TrimPrefix(args[i-1], "--") + " " + args[i] + ": " + tc.wantFIFO
				leaveOnceOpened(t, args[i], gate)
			} else {
				close(gate)
			}
			var stderr string
			var status int
			if tc.toFull {
				devFull, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer devFull.Close()
				stderr, status = runProcessTo(t, devFull, args...)
			} else {
				_, stderr, status = runCLI(t, "", args...)
			}
			if status != exitFailure || !strings.Contains(stderr, want) {
				t.Fatalf("status %d, stderr %q\nwant %d and %q", status, stderr, exitFailure, want)
			}
			t.Logf("stderr: %s", stderr)
			for _, goWords := range []string{"no space left on device", "broken pipe"} {
				if strings.Contains(stderr, goWords) {
					t.Errorf("stderr %q holds Go's %q", stderr, goWords)
				}
			}
		})
	}
}

// leaveOnceOpened opens the named pipe fifo for reading, then, in a
// goroutine, waits until a writer has opened it, closes it and opens
// gate (after 20s without a writer, it opens gate all the same).
func leaveOnceOpened(t *testing.T, fifo string, gate chan struct{}) {
	t.Helper()
	// Opened before the command runs, which refuses a pipe no process
	// reads.
	fd, err := syscall.Open(fifo, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(gate)
		defer syscall.Close(fd)
		// With no writer a read finds the end (0); with a writer and
		// nothing written yet, it would wait (EAGAIN).
		buf := make([]byte, 1)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := syscall.Read(fd, buf); errors.Is(err, syscall.EAGAIN) {
				return
			}
		}
	}()
}

// gatedForward listens on loopback and relays each connection to target
// once gate is closed; it returns the address it listens on.
func gatedForward(t *testing.T, target string, gate <-chan struct{}) string {
	t.Helper()
	return listenLoopback(t, func(c net.Conn) {
		defer c.Close()
		<-gate
		up, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer up.Close()
		go func() { io.Copy(up, c); up.Close() }()
		io.Copy(c, up)
	})
}
