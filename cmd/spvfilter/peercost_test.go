package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestMeasurePeerCosts measures, with the built command run as a user
// runs it (a process per scan, the default 30 s timeout), what a scan pays
// for 32 addresses of its address book that never answer, and for a peer
// answering everything 5 s late, against a clean scan of two honest peers,
// on a regtest chain of SPVFILTER_BENCH_BLOCKS blocks (2,100 by default),
// one payment a hundred blocks. SPVFILTER_OLD_BIN, if set, names an older
// build measured the same way. It runs with SPVFILTER_LONG=1:
//
//	SPVFILTER_LONG=1 go test ./cmd/spvfilter -run TestMeasurePeerCosts -v -timeout 20m
func TestMeasurePeerCosts(t *testing.T) {
	if os.Getenv("SPVFILTER_LONG") == "" {
		t.Skip("a measurement: set SPVFILTER_LONG=1")
	}
	bin := filepath.Join(t.TempDir(), "spvfilter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	builds := [][2]string{{"this build", bin}}
	if old := os.Getenv("SPVFILTER_OLD_BIN"); old != "" {
		builds = append(builds, [2]string{"older build", old})
	}
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	for range peertest.EnvCount(t, "SPVFILTER_BENCH_BLOCKS", 2100) / 100 {
		node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(1_000_000, alice.PkScript())))
		node.Generate(t, 99)
	}
	watch := alice.Address(node.Params).EncodeAddress()
	h1 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr
	h2 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr
	silent := peertest.NewSilent(t, 32)
	slow := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 5 * time.Second}).Addr
	scan := func(bin, dir string, peers ...string) time.Duration {
		t.Helper()
		args := []string{"scan", "--json", "--network", "regtest", "--datadir", dir, "--watch", watch}
		for _, p := range peers {
			args = append(args, "--peer", p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
		return took
	}
	book := func() string {
		dir := t.TempDir()
		type entry struct {
			Addr     string           `json:"addr"`
			Services wire.ServiceFlag `json:"services"`
		}
		file := struct {
			Version   int     `json:"version"`
			Network   string  `json:"network"`
			Addresses []entry `json:"addresses"`
		}{Version: 1, Network: "regtest"}
		for _, a := range silent {
			file.Addresses = append(file.Addresses, entry{a, wire.SFNodeNetwork | wire.SFNodeWitness | wire.SFNodeCF})
		}
		data, _ := json.Marshal(file)
		if err := os.MkdirAll(filepath.Join(dir, "regtest"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "regtest", "peers-local.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, b := range builds {
		var clean []time.Duration
		for range 3 {
			clean = append(clean, scan(b[1], t.TempDir(), h1, h2))
		}
		slices.Sort(clean)
		c := clean[1]
		dir := book()
		silent1, silent2 := scan(b[1], dir, h1, h2), scan(b[1], dir, h1, h2)
		slowed := scan(b[1], t.TempDir(), h1, slow)
		t.Logf("%s: clean scan %v (median of 3); with 32 silent addresses in the book %v, then %v (%.1fx, %.1fx; target 2x + 5 s = %v); beside a peer 5 s late %v (%.1fx; target 3x = %v)",
			b[0], c.Round(time.Millisecond), silent1.Round(time.Millisecond), silent2.Round(time.Millisecond),
			float64(silent1)/float64(c), float64(silent2)/float64(c), (2*c + 5*time.Second).Round(time.Millisecond),
			slowed.Round(time.Millisecond), float64(slowed)/float64(c), (3 * c).Round(time.Millisecond))
		fmt.Fprintln(os.Stderr)
	}
}
