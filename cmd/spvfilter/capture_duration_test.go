package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCaptureSaysUntilWhen: privacy capture's help says that --duration
// 0, the default, runs until interrupted, and the line that says where it
// listens says until when it runs: until interrupted for --duration 0s,
// for the --duration given otherwise (with --json, "until" and
// "duration_seconds", null for no end). Before, the help said "default:
// run until interrupted" without naming 0, and the line said neither.
func TestCaptureSaysUntilWhen(t *testing.T) {
	runRows(t, []contractRow{
		{name: "help", args: []string{"privacy", "capture", "--help"}, status: exitOK,
			stdout: []string{"or with --duration 0 (the default) until\ninterrupted (Ctrl-C)", "(default: 0, which runs until interrupted with Ctrl-C)"}},
		{name: "a negative duration", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1",
			"--network", "regtest", "--out", filepath.Join(t.TempDir(), "c.jsonl"), "--duration", "-1s"}, status: exitBadInput,
			stderr: []string{"spvfilter: --duration -1s: want a duration, at least 0 (0 runs until interrupted with Ctrl-C), such as --duration 30m\n"}},
	})
	up := startVersionAnswerer(t)
	rows := []struct {
		name     string
		duration string
		json     bool
		line     string  // in the first line of standard error
		seconds  float64 // duration_seconds with --json, 0 for null
	}{
		{name: "0s", duration: "0s", line: ", until interrupted (Ctrl-C; --duration 0)\n"},
		{name: "0s, --json", duration: "0s", json: true, line: `"until":"until interrupted (Ctrl-C; --duration 0)"`},
		{name: "300ms", duration: "300ms", line: ", for --duration 300ms, or until interrupted (Ctrl-C)\n"},
		{name: "300ms, --json", duration: "300ms", json: true, line: `"until":"for --duration 300ms, or until interrupted (Ctrl-C)"`, seconds: 0.3},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			args := []string{"privacy", "capture", "--listen", freeLoopbackAddr(t), "--upstream", up, "--network", "regtest",
				"--out", filepath.Join(t.TempDir(), "c.jsonl"), "--duration", r.duration}
			if r.json {
				args = append(args, "--json")
			}
			cmd, stderr, done := startMain(t, args...)
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) && !strings.Contains(stderr.String(), "\n") {
				time.Sleep(20 * time.Millisecond)
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			first += "\n"
			if r.duration == "0s" {
				// Still running: it ends when interrupted.
				time.Sleep(500 * time.Millisecond)
				select {
				case err := <-done:
					t.Fatalf("--duration 0s ended by itself (%v); stderr %q", err, stderr.String())
				default:
				}
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running; stderr %q", stderr.String())
			}
			if !strings.Contains(first, r.line) {
				t.Errorf("first line of stderr %q lacks %q", first, r.line)
			}
			if r.json {
				var l struct {
					Until           string   `json:"until"`
					DurationSeconds *float64 `json:"duration_seconds"`
				}
				if err := json.Unmarshal([]byte(first), &l); err != nil {
					t.Fatalf("first line %q: %v", first, err)
				}
				if r.seconds == 0 && l.DurationSeconds != nil || r.seconds != 0 && (l.DurationSeconds == nil || *l.DurationSeconds != r.seconds) {
					t.Errorf("duration_seconds %v, want %v (0 for null)", l.DurationSeconds, r.seconds)
				}
			}
		})
	}
}
