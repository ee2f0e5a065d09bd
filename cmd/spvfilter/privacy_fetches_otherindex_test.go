package main

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestPrivacyFetchesIndexOfAnotherChain: an index none of whose blocks a
// capture's sessions scanned or asked for (another simulation's, another
// chain's) is bad input naming both files and the index's blocks, not a
// report of every session saying "nothing to say" with exit status 0.
func TestPrivacyFetchesIndexOfAnotherChain(t *testing.T) {
	capturePath, index := writeFetchFixture(t)
	dir := t.TempDir()
	ix := universe.NewIndexWriter(dir, 0)
	defer ix.Close()
	ix.Add("wallet", 10)
	other := writeIndexFile(t, dir, ix, 1000, func(h int32) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint("other", h))) })
	refused := fmt.Sprintf("--index %s: none of the 3 blocks the sessions of --capture %s asked for is in its chain (regtest blocks 0..999)", other, capturePath)
	runRows(t, []contractRow{
		{name: "another chain", args: []string{"privacy", "fetches", "--capture", capturePath, "--index", other},
			status: exitBadInput, stderr: []string{refused, "privacy universe --index"}},
		{name: "another chain, intersected", args: []string{"privacy", "fetches", "--capture", capturePath, "--index", other, "--intersect"},
			status: exitBadInput, stderr: []string{refused}},
		{name: "another chain, json", args: []string{"privacy", "fetches", "--capture", capturePath, "--index", other, "--json"},
			status: exitBadInput, stderr: []string{refused}},
		{name: "its own chain", args: []string{"privacy", "fetches", "--capture", capturePath, "--index", index},
			status: exitOK, stdout: []string{"fetched F = 3"}, notInErr: []string{"none of the"}},
	})
}
