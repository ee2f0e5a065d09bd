package chain

import (
	"errors"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

func TestFilterCheckpoints(t *testing.T) {
	tests := []struct {
		params      *chaincfg.Params
		count       int
		first, last int32
	}{
		{&chaincfg.MainNetParams, 7, 100000, 660000},
		{&chaincfg.TestNet3Params, 10, 100000, 1900000},
		{&TestNet4Params, 2, 10000, 50000},
		{&chaincfg.SigNetParams, 0, 0, 0},
		{&chaincfg.RegressionNetParams, 0, 0, 0},
		{&chaincfg.SimNetParams, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.params.Name, func(t *testing.T) {
			cps := FilterCheckpoints(tt.params)
			if len(cps) != tt.count {
				t.Fatalf("%d checkpoints, want %d", len(cps), tt.count)
			}
			if tt.count == 0 {
				return
			}
			if cps[0].Height != tt.first || cps[len(cps)-1].Height != tt.last {
				t.Errorf("heights %d..%d, want %d..%d", cps[0].Height, cps[len(cps)-1].Height, tt.first, tt.last)
			}
			seen := map[chainhash.Hash]bool{}
			for i, cp := range cps {
				if cp.Height%1000 != 0 {
					t.Errorf("height %d is not at a cfcheckpt interval", cp.Height)
				}
				if i > 0 && cp.Height <= cps[i-1].Height {
					t.Errorf("height %d after %d", cp.Height, cps[i-1].Height)
				}
				if seen[cp.Header] || cp.Header == (chainhash.Hash{}) {
					t.Errorf("header at %d repeated or zero", cp.Height)
				}
				seen[cp.Header] = true
				if err := CheckFilterHeader(tt.params, cp.Height, cp.Header); err != nil {
					t.Errorf("own checkpoint refused: %v", err)
				}
				wrong := cp.Header
				wrong[0] ^= 1
				if err := CheckFilterHeader(tt.params, cp.Height, wrong); !errors.Is(err, ErrFilterCheckpoint) {
					t.Errorf("wrong header at %d: %v", cp.Height, err)
				}
				if err := CheckFilterHeader(tt.params, cp.Height+1, wrong); err != nil {
					t.Errorf("height without a checkpoint: %v", err)
				}
			}
			// The result is a copy.
			cps[0].Height = -1
			if FilterCheckpoints(tt.params)[0].Height != tt.first {
				t.Error("FilterCheckpoints exposes its table")
			}
		})
	}
}

// TestFilterCheckpointByteOrder: the headers are in wire byte order, the
// reverse of the display hex neutrino's table and RPCs show.
func TestFilterCheckpointByteOrder(t *testing.T) {
	const display = "f28cbc1ab369eb01b7b5fe8bf59763abb73a31471fe404a26a06be4153aa7fa5" // mainnet 100000, neutrino
	first := FilterCheckpoints(&chaincfg.MainNetParams)[0]
	want, err := chainhash.NewHashFromStr(display)
	if err != nil {
		t.Fatal(err)
	}
	if first.Height != 100000 || first.Header != *want || first.Header.String() != display {
		t.Fatalf("first mainnet checkpoint %d %v", first.Height, first.Header)
	}
	if first.Header[0] != 0xa5 || first.Header[31] != 0xf2 {
		t.Fatalf("bytes %x...%x, want a5...f2 (wire order)", first.Header[0], first.Header[31])
	}
	// Without checkpoints anything passes.
	if err := CheckFilterHeader(&chaincfg.RegressionNetParams, 100000, chainhash.Hash{}); err != nil {
		t.Fatal(err)
	}
}
