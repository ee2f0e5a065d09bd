package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs/lab"
)

// chainFile writes a block file of n regtest blocks from height first,
// each with a coinbase paying to outs new scripts, and returns its path.
func chainFile(t *testing.T, first int32, n, outs int) string {
	t.Helper()
	var buf bytes.Buffer
	w := lab.NewBlockFileWriter(&buf, wire.TestNet)
	var prev wire.BlockHeader
	for i := range n {
		cb := wire.NewMsgTx(1)
		cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{byte(i), 1}})
		for k := range outs {
			cb.AddTxOut(wire.NewTxOut(1, []byte{0x00, 0x14, byte(i), byte(k), byte(k >> 8), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}))
		}
		b := &wire.MsgBlock{Header: wire.BlockHeader{Version: 1, Nonce: uint32(i)}}
		if i > 0 {
			b.Header.PrevBlock = prev.BlockHash()
		}
		b.AddTransaction(cb)
		b.Header.MerkleRoot = blockchain.CalcMerkleRoot([]*btcutil.Tx{btcutil.NewTx(cb)}, false)
		if err := w.Add(first+int32(i), b); err != nil {
			t.Fatal(err)
		}
		prev = b.Header
	}
	path := filepath.Join(t.TempDir(), "chain.blocks")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBlockFile runs the lab on a block file: the blocks and elements it
// holds are measured, with the cuckoo filter among the designs.
func TestBlockFile(t *testing.T) {
	path := chainFile(t, 5, 3, 40)
	var out bytes.Buffer
	if err := run([]string{"--blocks", path, "--probes", "1000", "--timing", "0"}, &out); err != nil {
		t.Fatal(err)
	}
	want := "regtest blocks 5..7 from " + path + ": 3 blocks, 120 elements"
	if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "\ncuckoo") {
		t.Errorf("output %.300q, want it to start %q and measure the cuckoo filter", out.String(), want)
	}
}

// TestBadInput: a damaged block file, a missing one, and the flags that
// would need a node are bad input naming the flag (and the file).
func TestBadInput(t *testing.T) {
	path := chainFile(t, 0, 2, 3)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.blocks")
	if err := os.WriteFile(cut, raw[:len(raw)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"cut", []string{"--blocks", cut}, "--blocks " + cut + ": lab: bad block file: block 2 (height 1)"},
		{"missing", []string{"--blocks", cut + "x"}, "--blocks: open " + cut + "x"},
		{"no source", nil, "give --vectors FILE or --blocks FILE"},
		{"two sources", []string{"--blocks", path, "--vectors", path}, "give --vectors FILE or --blocks FILE"},
		{"connect", []string{"--connect", "127.0.0.1:18444"}, "--save-blocks FILE\", then give --blocks FILE"},
		{"from", []string{"--blocks", path, "--from", "3"}, "cuckoolab connects to no node"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(c.args, &out)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) || out.Len() != 0 {
				t.Errorf("error %v, output %q; want usage saying %q", err, out.String(), c.want)
			}
		})
	}
}
