package neutrinobench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGenerateDeterministic generates the same small chain twice: the
// blocks, the tip and the planted transactions are the same, so a cached
// chain is the chain its spec names.
func TestGenerateDeterministic(t *testing.T) {
	spec := ChainSpec{Blocks: 150, Elements: 20, Watched: 5, PaymentsPerScript: 2}
	var chains [2]*Chain
	var blocks [2][]byte
	for i := range chains {
		chains[i] = &Chain{Spec: spec, dir: t.TempDir()}
		if err := chains[i].generate(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(chains[i].dir, blocksName))
		if err != nil {
			t.Fatal(err)
		}
		blocks[i] = b
	}
	if !bytes.Equal(blocks[0], blocks[1]) || chains[0].Tip != chains[1].Tip {
		t.Fatalf("two generations differ: tips %v and %v, %d and %d bytes of blocks",
			chains[0].Tip, chains[1].Tip, len(blocks[0]), len(blocks[1]))
	}
	if len(chains[0].Planted) != len(chains[1].Planted) {
		t.Fatalf("%d and %d planted transactions", len(chains[0].Planted), len(chains[1].Planted))
	}
	payments := 0
	for i, p := range chains[0].Planted {
		if p.Txid != chains[1].Planted[i].Txid {
			t.Errorf("planted transaction %d: %v and %v", i, p.Txid, chains[1].Planted[i].Txid)
		}
		if p.Height <= firstSpendable || p.Height > int32(spec.Blocks) {
			t.Errorf("planted transaction %v at height %d, outside %d..%d", p.Txid, p.Height, firstSpendable+1, spec.Blocks)
		}
		payments += len(p.Scripts)
	}
	// Every script is paid PaymentsPerScript times; some payments are spent too.
	if want := spec.Watched * spec.PaymentsPerScript; payments < want {
		t.Errorf("%d payments and spends planted, want at least %d", payments, want)
	}
}

func TestChainSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		spec ChainSpec
		ok   bool
	}{
		{DefaultSpec, true},
		{ChainSpec{Blocks: 102, Elements: 4, Watched: 1, PaymentsPerScript: 1}, true},
		{ChainSpec{Blocks: 101, Elements: 500, Watched: 1, PaymentsPerScript: 1}, false},
		{ChainSpec{Blocks: 2000, Elements: 3, Watched: 1, PaymentsPerScript: 1}, false},
		{ChainSpec{Blocks: 2000, Elements: 500, Watched: 0, PaymentsPerScript: 1}, false},
		{ChainSpec{Blocks: 2000, Elements: 500, Watched: 1, PaymentsPerScript: 0}, false},
	} {
		if err := tc.spec.validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: validate() = %v, want ok=%v", tc.spec, err, tc.ok)
		}
	}
}
