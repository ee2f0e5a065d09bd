//go:build unix

package main

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptBeforeOwnWatch: Ctrl-C or SIGTERM while a command that
// watches for signals itself (send, scan, privacy capture) has not yet
// started to (it reads an argument from a named pipe, or checks its
// upstream node) ends it with status 130 and "NAME interrupted", as
// every other command. Before, the signal killed it with no word (status
// 130 or 143 from the shell, nothing on standard error).
func TestInterruptBeforeOwnWatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(fifo, silent string) []string
		// ready reports that the command is blocked where the signal
		// is to come.
		ready string // "pipe": it holds the pipe open; "node": it connected
		sig   syscall.Signal
		want  string
	}{
		{"send reading its transaction from a pipe", func(fifo, _ string) []string {
			return []string{"send", "--network", "regtest", "--connect", "127.0.0.1:1", "@" + fifo}
		}, "pipe", syscall.SIGINT, "spvfilter: send interrupted"},
		{"scan reading --watch from a pipe", func(fifo, _ string) []string {
			return []string{"scan", "--network", "regtest", "--connect", "127.0.0.1:1", "--watch", "@" + fifo}
		}, "pipe", syscall.SIGTERM, "spvfilter: scan interrupted"},
		{"capture checking an upstream that does not answer", func(_, silent string) []string {
			return []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", silent, "--network", "regtest", "--out", "-"}
		}, "node", syscall.SIGINT, "spvfilter: privacy capture interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := makeFifo(t)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			connected := make(chan net.Conn, 1)
			go func() {
				if c, err := l.Accept(); err == nil {
					connected <- c // held open, never answered
				}
			}()
			cmd, stderr, done := startMain(t, tc.args(fifo, l.Addr().String())...)
			var writer *os.File
			defer func() {
				if writer != nil {
					writer.Close()
				}
			}()
			deadline := time.After(20 * time.Second)
			for writer == nil && tc.ready == "pipe" {
				// A writer's opening fails with ENXIO until a reader holds
				// the pipe open: then the command is reading it.
				f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				if err == nil {
					writer = f
					break
				}
				if !errors.Is(err, syscall.ENXIO) {
					t.Fatal(err)
				}
				select {
				case <-deadline:
					cmd.Process.Kill()
					t.Fatalf("the command did not open the pipe in 20s; stderr %q", stderr.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			if tc.ready == "node" {
				select {
				case c := <-connected:
					defer c.Close()
				case <-deadline:
					cmd.Process.Kill()
					t.Fatalf("the command did not connect in 20s; stderr %q", stderr.String())
				}
			}
			time.Sleep(100 * time.Millisecond) // into the read
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			endsInterrupted(t, cmd, done, 10*time.Second, stderr)
			if got := strings.TrimSpace(stderr.String()); got != tc.want {
				t.Errorf("stderr %q, want %q", got, tc.want)
			}
		})
	}
}
