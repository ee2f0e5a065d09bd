package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestDataDirSurvivesKill9 kills scan --datadir with SIGKILL at random
// moments of its header sync, 20 times; then a scan on the same data
// directory loads what was left and completes with the node's tip. A
// flipped byte in the stored tail is then cut, reported, and synced again.
func TestDataDirSurvivesKill9(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	const tip = 6000
	node.Generate(t, tip)
	// Headers come slowly through this proxy, so the kills land during
	// the sync.
	slow := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok {
			time.Sleep(80 * time.Millisecond)
		}
		return []wire.Message{m}, false
	})
	watch := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	scan := func(dir string) scanOutput {
		t.Helper()
		stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--datadir", dir, "--watch", watch, "--peer", node.P2PAddr)
		var out scanOutput
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.To != tip {
			t.Fatalf("scan: status %d, to %d, stderr %q", status, out.To, stderr)
		}
		return out
	}
	counts := map[int64]int{}
	for i := 0; i < 20; i++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "scan", "--json", "--network", "regtest", "--datadir", dir, "--watch", watch, "--peer", slow.Addr)
		cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		n := int64(-1)
		if st, err := os.Stat(filepath.Join(dir, "regtest", "headers.bin")); err == nil {
			n = st.Size() / 80
		}
		counts[n]++
		// The restart loads what was left and completes.
		scan(dir)
	}
	t.Logf("headers stored when killed (count: runs): %v", counts)
	if len(counts) < 3 {
		t.Errorf("the kills landed at only %d distinct points of the sync", len(counts))
	}
	dir := t.TempDir()
	scan(dir)
	// Damage the last stored header: it is cut, said so, and synced again.
	path := filepath.Join(dir, "regtest", "headers.bin")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-40] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := scan(dir)
	if !strings.Contains(strings.Join(out.Warnings, "\n"), "--datadir "+dir+": ") {
		t.Errorf("warnings %q do not report the damaged chain state", out.Warnings)
	}
}
