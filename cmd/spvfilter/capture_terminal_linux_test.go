package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal (through /dev/ptmx, with no
// package beyond golang.org/x/sys): its master side, which reads what is
// written to the terminal, and the path of the terminal itself.
func openTerminal(t *testing.T) (master *os.File, path string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	raw, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ioctlErr error
	if err := raw.Control(func(fd uintptr) {
		if ioctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioctlErr == nil {
			n, ioctlErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}); err != nil || ioctlErr != nil {
		t.Fatalf("pseudo-terminal: %v %v", err, ioctlErr)
	}
	path = fmt.Sprintf("/dev/pts/%d", n)
	// Held open, so that the master reads what is written, not the end
	// of the terminal, between the times the command opens it.
	held, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	return master, path
}

// TestCaptureOutTerminal: privacy capture --out takes a terminal (or a
// link to one), a device it otherwise refuses, and writes the records
// there as they come.
func TestCaptureOutTerminal(t *testing.T) {
	up := startVersionAnswerer(t)
	for _, tc := range []struct {
		name string
		out  func(t *testing.T, tty string) string
	}{
		{"the terminal", func(_ *testing.T, tty string) string { return tty }},
		{"a link to the terminal", func(t *testing.T, tty string) string {
			link := filepath.Join(t.TempDir(), "tty")
			if err := os.Symlink(tty, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master, tty := openTerminal(t)
			out := tc.out(t, tty)
			// What reaches the terminal, read as it comes (a terminal
			// nobody reads stops taking output once its buffer is full).
			seen := make(chan string, 1)
			go func() {
				var b bytes.Buffer
				buf := make([]byte, 4096)
				master.SetReadDeadline(time.Now().Add(20 * time.Second))
				for !strings.Contains(b.String(), "\n") {
					n, err := master.Read(buf)
					b.Write(buf[:n])
					if err != nil {
						b.WriteString(" [" + err.Error() + "]")
						break
					}
				}
				seen <- b.String()
			}()
			relay := freeLoopbackAddr(t)
			type result struct {
				stderr string
				status int
			}
			done := make(chan result, 1)
			go func() {
				_, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", relay, "--upstream", up,
					"--network", "regtest", "--out", out, "--duration", "2s")
				done <- result{stderr, status}
			}()
			c := dialRelay(t, relay)
			v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), 1, 0)
			v.UserAgent = "/terminal-test:1/"
			if err := wire.WriteMessage(c, v, wire.ProtocolVersion, wire.TestNet); err != nil {
				t.Fatal(err)
			}
			res := <-done
			if res.status != exitOK || !strings.Contains(res.stderr, "recording to "+out) || strings.Contains(res.stderr, "a device") {
				t.Fatalf("status %d, stderr %q: want 0, recording to %s", res.status, res.stderr, out)
			}
			if got := <-seen; !strings.Contains(got, `"user_agent":"/terminal-test:1/"`) {
				t.Errorf("the terminal showed %q, want the version record", got)
			}
		})
	}
}
