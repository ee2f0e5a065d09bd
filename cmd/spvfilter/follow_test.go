package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The test binary runs as spvfilter itself when asked: the follow test
// needs a real process to interrupt. With rssFileEnv set, it writes its
// peak RSS there before it exits (see scanProcess).
func init() {
	if os.Getenv("SPVFILTER_TEST_AS_MAIN") == "1" {
		code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		if name := os.Getenv(rssFileEnv); name != "" {
			if rss, ok := peertest.PeakRSS(); ok {
				os.WriteFile(name, []byte(strconv.FormatUint(rss, 10)), 0o600)
			}
		}
		os.Exit(code)
	}
}

// rssFileEnv names the file a scan process run by the tests writes its
// peak RSS to.
const rssFileEnv = "SPVFILTER_TEST_RSS_FILE"

// followProcess is scan --follow running as a process of its own (the
// test binary as spvfilter), its JSON lines read as they come.
type followProcess struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	lines  chan map[string]any
	got    []map[string]any // the lines read so far
	waited bool
}

// lockedBuffer is a buffer that the process writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startFollow starts scan --follow with args; the process is killed when
// the test ends. A line that is not JSON is read as the event "bad line".
func startFollow(t *testing.T, args ...string) *followProcess {
	t.Helper()
	p := &followProcess{lines: make(chan map[string]any, 1000)}
	p.cmd = exec.Command(os.Args[0], append([]string{"scan", "--follow"}, args...)...)
	p.cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
	p.cmd.Stderr = &p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.waited {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"event": "bad line", "line": sc.Text()}
			}
			p.lines <- m
		}
	}()
	return p
}

// waitFor reads lines until one meets cond; it fails, saying why, when
// the output ends or d passes first.
func (p *followProcess) waitFor(what string, d time.Duration, cond func(map[string]any) bool) error {
	timeout := time.After(d)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				return fmt.Errorf("output ended before %s; stderr %q", what, p.stderr.String())
			}
			p.got = append(p.got, m)
			if cond(m) {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("no %s within %v; stderr %q", what, d, p.stderr.String())
		}
	}
}

// interrupt sends SIGINT, reads the rest of the output and returns how
// the process ended.
func (p *followProcess) interrupt(t *testing.T) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for m := range p.lines {
		p.got = append(p.got, m)
	}
	p.waited = true
	return p.cmd.Wait()
}

// isEvent returns a condition on a line: the event at height.
func isEvent(event string, height float64) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["event"] == event && m["height"] == height }
}

// TestScanFollow runs scan --follow as a process while the node mines a
// payment to a watched key and then reorganizes it away and back; the
// events arrive as JSON lines, and SIGINT ends the scan with exit 0 and a
// summary line.
func TestScanFollow(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	alice := peertest.NewKey("alice")
	addr := alice.Address(node.Params).EncodeAddress()
	p := startFollow(t, "--peer", node.P2PAddr, "--network", "regtest", "--from", "100", "--watch", addr, "--timeout", "5s")
	waitFor := func(what string, cond func(map[string]any) bool) {
		t.Helper()
		if err := p.waitFor(what, 30*time.Second, cond); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("tip 105", isEvent("tip", 105))
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 106
	waitFor("the payment", func(m map[string]any) bool { return m["event"] == "match" && m["txid"] == pay.TxHash().String() })
	waitFor("block 106", isEvent("connected", 106))
	hash, _ := node.RPC().GetBlockHash(106)
	if err := node.RPC().InvalidateBlock(hash); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 2) // 106', 107': the payment again in 106'
	waitFor("tip 107", isEvent("tip", 107))
	if err := p.interrupt(t); err != nil {
		t.Fatalf("after SIGINT: %v; stderr %q", err, p.stderr.String())
	}
	var events []string
	for _, m := range p.got {
		if m["event"] != "connected" || m["height"].(float64) >= 104 {
			e := m["event"].(string)
			if h, ok := m["height"].(float64); ok {
				e = fmt.Sprintf("%s %d", e, int(h))
			}
			events = append(events, e)
		}
	}
	want := []string{"connected 104", "connected 105", "tip 105", "match 106", "connected 106", "tip 106",
		"disconnected 106", "match 106", "connected 106", "connected 107", "tip 107", "summary"}
	if !slices.Equal(events, want) {
		t.Fatalf("events %q\nwant   %q", events, want)
	}
	last := p.got[len(p.got)-1]
	if last["event"] != "summary" || last["next_height"] != float64(108) || last["matched_count"] != float64(1) {
		t.Fatalf("summary %v", last)
	}
	if !strings.Contains(p.stderr.String(), "rests on one peer") {
		t.Errorf("stderr %q lacks the one-peer warning", p.stderr.String())
	}
}

// TestFollowFetchNoteCounts: after scan --follow fetched the blocks of
// its first scan (106, 107) and then of a block it followed (108), all
// from one peer, the summary holds one note on how the fetches were
// spread, counting the 3 blocks, not the latest step's.
func TestFollowFetchNoteCounts(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	alice := peertest.NewKey("alice")
	for range 2 { // 106, 107
		node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript())))
	}
	addr := alice.Address(node.Params).EncodeAddress()
	p := startFollow(t, "--connect", node.P2PAddr, "--network", "regtest", "--from", "100", "--watch", addr, "--timeout", "5s")
	if err := p.waitFor("tip 107", 30*time.Second, isEvent("tip", 107)); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))) // 108
	if err := p.waitFor("tip 108", 30*time.Second, isEvent("tip", 108)); err != nil {
		t.Fatal(err)
	}
	if err := p.interrupt(t); err != nil {
		t.Fatalf("after SIGINT: %v; stderr %q", err, p.stderr.String())
	}
	last := p.got[len(p.got)-1]
	var notes []string
	for _, w := range last["warnings"].([]any) {
		// (WarningKindOf reads the client's words: here the peers are
		// named by their flags.)
		if s := w.(string); strings.Contains(s, "blocks fetched") || strings.Contains(s, "block fetched") {
			notes = append(notes, s)
		}
	}
	t.Logf("notes: %q", notes)
	if len(notes) != 1 || !strings.Contains(notes[0], "was asked for all 3 blocks fetched") {
		t.Errorf("summary warnings %q: want one note on the spread, one peer asked for all 3 blocks fetched", last["warnings"])
	}
}
