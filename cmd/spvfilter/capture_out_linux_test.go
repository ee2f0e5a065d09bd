package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
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
