package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// Blocks and expectations from Bitcoin Core's tests, as kept in
// testvectors/bip37/merkleblock.json.
const (
	block13b8a = "0000000000013b8ab2cd513b0261a14096412195a72a0c4827d229dcc7e0f7af"
	blockDc45  = "000000000000dab0130bbcc991d3d7ae6b81aa6f50a798888dfe62337458dc45"
	txid13b8a1 = "f9fc751cb7dc372406a9f8d738d5e6f8f63bab71986a39cf36ee70ee17036d07"
	txid13b8a8 = "74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20"
	txidDc45   = "63194f18be0af63f2c6bc9dc0f777cbefed3d9415c4af83f3ee3a3d669c00cb5"
	// Core's merkle_block_3_and_serialize expected payload.
	payloadDc45 = "0100000079cda856b143d9db2c1caff01d1aecc8630d30625d10e8b4b8b0000000000000b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f196367291b4d4c86041b8fa45d630100000001b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f19630101"
)

// vectorBlockHex returns the hex of a block of the merkle block vectors.
func vectorBlockHex(t *testing.T, hash string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testvectors", "bip37", "merkleblock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Blocks []struct{ Hash, Hex string } `json:"blocks"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, b := range v.Blocks {
		if b.Hash == hash {
			return b.Hex
		}
	}
	t.Fatalf("no block %s", hash)
	return ""
}

func TestMerkleBlockBuildAndVerify(t *testing.T) {
	blockHex := vectorBlockHex(t, block13b8a)
	blockFile := filepath.Join(t.TempDir(), "block.hex")
	if err := os.WriteFile(blockFile, []byte(blockHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The same proof from literal hex, @FILE and standard input.
	var payload string
	for _, in := range []struct{ arg, stdin string }{{blockHex, ""}, {"@" + blockFile, ""}, {"-", blockHex}} {
		out, errOut, status := runCLI(t, in.stdin, "merkleblock", "build", "--block", in.arg, "--txid", txid13b8a8, "--txid", txid13b8a1)
		if status != exitOK {
			t.Fatalf("build: status %d, stderr %q", status, errOut)
		}
		if strings.Count(out, "\n") != 1 {
			t.Fatalf("build printed %q, want one line", out)
		}
		if payload != "" && out != payload {
			t.Fatalf("build from %q differs", in.arg[:min(len(in.arg), 10)])
		}
		payload = out
	}

	// More txids may follow --txid as arguments.
	if out, errOut, status := runCLI(t, "", "merkleblock", "build", "--block", blockHex, "--txid", txid13b8a8, txid13b8a1); status != exitOK || out != payload {
		t.Fatalf("build --txid A B: status %d, stderr %q, payload differs: %v", status, errOut, out != payload)
	}

	out, errOut, status := runCLI(t, payload, "merkleblock", "verify", "--merkleblock", "-")
	if status != exitOK {
		t.Fatalf("verify: status %d, stderr %q", status, errOut)
	}
	want := "block " + block13b8a + "\n" +
		"merkle_root 2fda58e5959b0ee53c5253da9b9f3c0c739422ae04946966991cf55895287552 OK\n" +
		"transactions 9\nmatched 2\n" +
		"match 1 " + txid13b8a1 + "\n" +
		"match 8 " + txid13b8a8 + "\n"
	if out != want {
		t.Fatalf("verify printed\n%s\nwant\n%s", out, want)
	}

	out, _, status = runCLI(t, payload, "merkleblock", "verify", "--merkleblock", "-", "--json")
	var v struct {
		BlockHash    string `json:"block_hash"`
		Valid        bool   `json:"valid"`
		Transactions uint32 `json:"transaction_count"`
		Matched      []merkleMatchJSON
	}
	if status != exitOK || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("verify --json: status %d, %q", status, out)
	}
	if v.BlockHash != block13b8a || !v.Valid || v.Transactions != 9 || len(v.Matched) != 2 ||
		v.Matched[0] != (merkleMatchJSON{1, txid13b8a1}) || v.Matched[1] != (merkleMatchJSON{8, txid13b8a8}) {
		t.Fatalf("verify --json: %+v", v)
	}
}

// TestMerkleBlockBuildCoreVector reproduces Core's serialized merkle block
// (merkle_block_3_and_serialize) from the block and the txid.
func TestMerkleBlockBuildCoreVector(t *testing.T) {
	out, errOut, status := runCLI(t, "", "merkleblock", "build", "--block", vectorBlockHex(t, blockDc45), "--txid", txidDc45)
	if status != exitOK || out != payloadDc45+"\n" {
		t.Fatalf("status %d, stderr %q, payload\n%s\nwant\n%s", status, errOut, out, payloadDc45)
	}
}

func TestMerkleBlockBuildFilter(t *testing.T) {
	// The pubkey hash paid by output 0 of the block's last transaction.
	f := bip37.NewFilter(10, 0.000001, 0, wire.BloomUpdateAll)
	pkh, _ := hex.DecodeString("4134e75a6fcb6042034aab5e18570cf1f844f547")
	f.Add(pkh)
	load, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runCLI(t, "", "merkleblock", "build", "--json",
		"--block", vectorBlockHex(t, block13b8a), "--filter", hex.EncodeToString(load))
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var v struct {
		Payload   string            `json:"merkleblock"`
		BlockHash string            `json:"block_hash"`
		Matched   []merkleMatchJSON `json:"matched"`
		Filter    string            `json:"filterload"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.BlockHash != block13b8a || len(v.Matched) != 1 || v.Matched[0] != (merkleMatchJSON{8, txid13b8a8}) {
		t.Fatalf("build --filter --json: %+v", v)
	}
	// BloomUpdateAll: the filter now also holds the matched outpoint.
	updated, err := hex.DecodeString(v.Filter)
	if err != nil {
		t.Fatal(err)
	}
	g, err := bip37.DecodeFilterLoad(updated)
	if err != nil {
		t.Fatalf("updated filter: %v", err)
	}
	h, _ := chainhash.NewHashFromStr(txid13b8a8)
	if f.ContainsOutPoint(wire.NewOutPoint(h, 0)) || !g.ContainsOutPoint(wire.NewOutPoint(h, 0)) {
		t.Fatal("the updated filter does not hold the matched outpoint")
	}
	if out, _, status := runCLI(t, "", "merkleblock", "verify", "--merkleblock", v.Payload); status != exitOK || !strings.Contains(out, "match 8 "+txid13b8a8) {
		t.Fatalf("verify of the filter proof: %d %q", status, out)
	}
}

func TestMerkleBlockErrors(t *testing.T) {
	blockHex := vectorBlockHex(t, block13b8a)
	good, _ := hex.DecodeString(payloadDc45)
	flip := func(i int) string {
		b := append([]byte(nil), good...)
		b[i] ^= 1
		return hex.EncodeToString(b)
	}
	// A proof over two identical leaves: the CVE-2012-2459 shape.
	mutated := append([]byte(nil), good[:80]...)
	leaf := good[85:117]
	root := chainhash.DoubleHashH(append(append([]byte(nil), leaf...), leaf...))
	copy(mutated[36:68], root[:])
	mutated = append(mutated, 2, 0, 0, 0, 2)
	mutated = append(append(append(mutated, leaf...), leaf...), 1, 0b111)

	tests := []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"verify: root mismatch", []string{"merkleblock", "verify", "--merkleblock", flip(90)}, exitFailure, "merkle root mismatch"},
		{"verify: mutated", []string{"merkleblock", "verify", "--merkleblock", hex.EncodeToString(mutated)}, exitFailure, "CVE-2012-2459"},
		{"verify: surplus flag byte", []string{"merkleblock", "verify", "--merkleblock", payloadDc45[:len(payloadDc45)-4] + "020100"}, exitFailure, "surplus flag bits"},
		{"verify: zero transactions", []string{"merkleblock", "verify", "--merkleblock", payloadDc45[:160] + "00000000" + payloadDc45[168:]}, exitFailure, "zero transactions"},
		{"verify: truncated", []string{"merkleblock", "verify", "--merkleblock", payloadDc45[:len(payloadDc45)-2]}, exitBadInput, "truncated"},
		{"verify: one byte", []string{"merkleblock", "verify", "--merkleblock", "00"}, exitBadInput, "--merkleblock: 1 byte, not a whole merkleblock: its header and transaction count alone take 84 bytes"},
		{"verify: a file without its @", []string{"merkleblock", "verify", "--merkleblock", "mb.hex"}, exitBadInput, "(want hex digits; a file is read with @FILE, such as @mb.hex)"},
		{"verify: trailing", []string{"merkleblock", "verify", "--merkleblock", payloadDc45 + "00"}, exitBadInput, "trailing"},
		{"verify: odd hex", []string{"merkleblock", "verify", "--merkleblock", "abc"}, exitBadInput, "odd number"},
		{"verify: no flag", []string{"merkleblock", "verify"}, exitBadInput, "merkleblock"},
		{"build: both", []string{"merkleblock", "build", "--block", blockHex, "--txid", txid13b8a8, "--filter", "00"}, exitBadInput, "not both"},
		{"build: neither", []string{"merkleblock", "build", "--block", blockHex}, exitBadInput, "--txid"},
		{"build: no block", []string{"merkleblock", "build", "--txid", txid13b8a8}, exitBadInput, "block"},
		{"build: short txid", []string{"merkleblock", "build", "--block", blockHex, "--txid", "abcd"}, exitBadInput, "--txid 1: 2 bytes"},
		{"build: bad block", []string{"merkleblock", "build", "--block", "0100", "--txid", txid13b8a8}, exitBadInput, "--block: 2 bytes, not a whole block: the data end too early"},
		{"build: block trailing", []string{"merkleblock", "build", "--block", blockHex + "00", "--txid", txid13b8a8}, exitBadInput, "after the end of the block"},
		{"build: wrong root", []string{"merkleblock", "build", "--block", blockHex[:80] + "00" + blockHex[82:], "--txid", txid13b8a8}, exitBadInput, "do not match the header"},
		{"build: bad filter", []string{"merkleblock", "build", "--block", blockHex, "--filter", "fd0100"}, exitBadInput, "--filter"},
		{"build: stdin twice", []string{"merkleblock", "build", "--block", "-", "--txid", "-"}, exitBadInput, "standard input"},
		{"build: extra argument", []string{"merkleblock", "build", "--block", blockHex, "--filter", "00000000000000000000", "extra"}, exitBadInput, `unexpected argument "extra"`},
		{"build: bad txid argument", []string{"merkleblock", "build", "--block", blockHex, "--txid", txid13b8a8, "extra"}, exitBadInput, "--txid 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Standard input holds a valid block, so that a case reading
			// it twice fails on the second read, not on the block.
			out, stderr, status := runCLI(t, blockHex, tt.args...)
			if status != tt.status {
				t.Fatalf("status %d, want %d (stderr %q)", status, tt.status, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("stderr %q does not mention %q", stderr, tt.stderr)
			}
			if strings.Count(stderr, "\n") != 1 || out != "" {
				t.Fatalf("want one error line and no output, got stderr %q stdout %q", stderr, out)
			}
		})
	}
}

func TestMerkleBlockHelp(t *testing.T) {
	for _, sub := range []string{"build", "verify"} {
		out, _, status := runCLI(t, "", "merkleblock", sub, "--help")
		if status != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "spvfilter merkleblock "+sub) {
			t.Fatalf("%s --help: status %d\n%s", sub, status, out)
		}
	}
}

// TestMerkleBlockTxidFile: --txid @FILE reads one txid per line.
func TestMerkleBlockTxidFile(t *testing.T) {
	blockHex := vectorBlockHex(t, block13b8a)
	want, _, status := runCLI(t, "", "merkleblock", "build", "--block", blockHex, "--txid", txid13b8a1, txid13b8a8)
	if status != exitOK {
		t.Fatal(status)
	}
	file := filepath.Join(t.TempDir(), "txids.txt")
	if err := os.WriteFile(file, []byte(txid13b8a1+"\r\n# the eighth\r\n"+txid13b8a8+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, stderr, status := runCLI(t, "", "merkleblock", "build", "--block", blockHex, "--txid", "@"+file)
	if status != exitOK || got != want {
		t.Fatalf("--txid @FILE: status %d, %q, stderr %q; want %q", status, got, stderr, want)
	}
	if err := os.WriteFile(file, []byte(txid13b8a1+"\n00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, status = runCLI(t, "", "merkleblock", "build", "--block", blockHex, "--txid", "@"+file)
	if status != exitBadInput || !strings.Contains(stderr, "--txid 1 (@"+file+" line 2): 1 byte, a txid has 32") {
		t.Fatalf("bad txid line: status %d, %q", status, stderr)
	}
}
