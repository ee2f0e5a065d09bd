package chain

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// mainnetHeaders returns the headers of the real mainnet blocks 0 to 14131
// that btcd v0.24.2 ships as test data (blockchain/testdata/
// blk_0_to_14131.dat, read from the module cache): records of the network
// magic, a little-endian length and the serialised block.
func mainnetHeaders(t testing.TB) []*wire.BlockHeader {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/btcsuite/btcd").Output()
	if err != nil {
		t.Fatalf("locating the btcd module: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "blockchain", "testdata", "blk_0_to_14131.dat"))
	if err != nil {
		t.Fatal(err)
	}
	var hs []*wire.BlockHeader
	for len(data) >= 8 && binary.LittleEndian.Uint32(data) == uint32(wire.MainNet) {
		n := int(binary.LittleEndian.Uint32(data[4:]))
		if n < wire.MaxBlockHeaderPayload || len(data) < 8+n {
			break
		}
		var h wire.BlockHeader
		if err := h.Deserialize(bytes.NewReader(data[8 : 8+wire.MaxBlockHeaderPayload])); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, &h)
		data = data[8+n:]
	}
	return hs
}

// TestMainnetHeaders: the real mainnet chain from the genesis block is
// accepted under the full rules (retargets every 2016 blocks, btcd's
// checkpoint at 11111), and once past that checkpoint no branch below it
// is considered, however much work it claims.
func TestMainnetHeaders(t *testing.T) {
	hs := mainnetHeaders(t)
	if len(hs) < 11200 {
		t.Fatalf("only %d headers in btcd's test data", len(hs))
	}
	params := &chaincfg.MainNetParams
	if hs[0].BlockHash() != *params.GenesisHash {
		t.Fatal("test data does not start at the genesis block")
	}
	c := New(params)
	// In getheaders-sized batches, as a peer sends them.
	for i := 1; i < len(hs); i += 2000 {
		if err := extend(c, hs[i:min(i+2000, len(hs))]); err != nil {
			t.Fatalf("batch from height %d: %v", i, err)
		}
	}
	if int(c.Height()) != len(hs)-1 {
		t.Fatalf("height %d, want %d", c.Height(), len(hs)-1)
	}
	cp := params.Checkpoints[0]
	if c.Hash(cp.Height) != *cp.Hash {
		t.Fatalf("block %d is %v, checkpoint %v", cp.Height, c.Hash(cp.Height), cp.Hash)
	}

	tests := []struct {
		name string
		fork int32 // the branch's parent
		want error
	}{
		{"fork below the checkpoint", cp.Height - 100, ErrBelowCheckpoint},
		{"fork just below the checkpoint", cp.Height - 1, ErrBelowCheckpoint},
		// At the checkpoint the branch is weighed, and one header
		// weighs less than the chain's 3020.
		{"fork at the checkpoint", cp.Height, ErrLessWork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alt := *hs[tt.fork+1]
			alt.Nonce++
			branch := []*wire.BlockHeader{&alt}
			_, err := c.Extend(branch)
			if !errors.Is(err, tt.want) || int(c.Height()) != len(hs)-1 {
				t.Fatalf("branch at %d: %v, height %d", tt.fork, err, c.Height())
			}
		})
	}
}

// TestNetworkCheckpoints: the block checkpoints the reorg rule rests on are
// there and well formed: mainnet's and testnet3's from btcd's chaincfg,
// testnet4's from Bitcoin Core.
func TestNetworkCheckpoints(t *testing.T) {
	for _, tt := range []struct {
		params *chaincfg.Params
		min    int
	}{
		{&chaincfg.MainNetParams, 10},
		{&chaincfg.TestNet3Params, 10},
		{&TestNet4Params, 2},
	} {
		cps := tt.params.Checkpoints
		if len(cps) < tt.min {
			t.Errorf("%s: %d checkpoints", tt.params.Name, len(cps))
		}
		for i := 1; i < len(cps); i++ {
			if cps[i].Height <= cps[i-1].Height {
				t.Errorf("%s: checkpoint %d at %d after %d", tt.params.Name, i, cps[i].Height, cps[i-1].Height)
			}
		}
		// Every checkpoint hash meets the network's limit (a typo
		// in a constant would almost surely not).
		for _, cp := range cps {
			if blockchain.HashToBig(cp.Hash).Cmp(tt.params.PowLimit) > 0 {
				t.Errorf("%s: checkpoint %d hash %v above the proof-of-work limit", tt.params.Name, cp.Height, cp.Hash)
			}
		}
	}
}
