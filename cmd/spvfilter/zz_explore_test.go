package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

func TestZZExplore(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	dir := t.TempDir()
	regAddr := peertest.NewKey("a").Address(node.Params).EncodeAddress()
	mainAddr := peertest.NewKey("a").Address(&chaincfg.MainNetParams).EncodeAddress()
	tnAddr := peertest.NewKey("a").Address(&chaincfg.TestNet3Params).EncodeAddress()
	os.WriteFile(filepath.Join(dir, "w.txt"), []byte(regAddr+"\nnotanaddress\n"), 0o644)
	n := node.P2PAddr
	cases := [][]string{
		{"scan", "--connect", n, "--network", "testnet4", "--watch", regAddr},
		{"scan", "--connect", n, "--network", "mainnet", "--watch", mainAddr, "--timeout", "3s"},
		{"scan", "--connect", n, "--network", "regtest", "--watch", mainAddr},
		{"scan", "--connect", n, "--network", "regtest", "--watch", tnAddr},
		{"scan", "--connect", n, "--network", "regtest", "--watch", "@" + filepath.Join(dir, "w.txt")},
		{"scan", "--connect", n, "--network", "regtest", "--watch", regAddr, "--from", "200"},
		{"scan", "--connect", n, "--network", "regtest", "--watch", regAddr, "--from", "50", "--to", "20"},
		{"scan", "--connect", n, "--network", "regtest", "--watch", regAddr, "--mode", "bip38"},
		{"scan", "--connect", n, "--network", "regtest", "--watch", regAddr, "--mode", "bip37", "--flags", "p2pubkey"},
		{"scan", "--connect", n, "--network", "regtest", "--watch", regAddr, "--timeout", "0"},
		{"scan", "--connect", n, "--network", "regtest"},
		{"scan", "--connect", "127.0.0.1", "--network", "regtest", "--watch", regAddr},
		{"peers", "--connect", n, "--network", "regtest", "--datadir", filepath.Join(dir, "w.txt")},
		{"peers", "--connect", n, "--network", "signet", "--timeout", "3s"},
		{"lab", "--connect", n, "--network", "regtest", "--from", "100", "--to", "120", "--probes", "10"},
		{"lab", "--connect", n, "--network", "regtest", "--wallets", "abc", "--probes", "10"},
		{"lab", "--vectors", filepath.Join(dir, "w.txt")},
		{"lab", "--blocks", filepath.Join(dir, "w.txt"), "--probes", "0"},
		{"privacy", "universe", "--peer", n, "--network", "regtest", "--out", filepath.Join(dir, "nodir", "u.txt")},
		{"privacy", "universe", "--peer", n, "--network", "regtest", "--from", "105", "--to", "300", "--out", filepath.Join(dir, "u.txt")},
		{"send", "--connect", n, "--network", "testnet3", coreTx},
		{"send", "--connect", n, "--network", "regtest", "--timeout", "-1s", coreTx},
	}
	for _, args := range cases {
		stdout, stderr, status := runCLI(t, "", args...)
		if len(stdout) > 300 {
			stdout = stdout[:300]
		}
		t.Logf("\n$ %q\n[exit %d] %s\nERR: %s", args, status, stdout, stderr)
	}
}
