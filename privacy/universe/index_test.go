package universe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// buildIndex writes an index of the appearances with a small memory
// limit, so that runs are spilled and merged.
func buildIndex(t *testing.T, first int32, nblocks int, apps map[string][]int32, memory int) []byte {
	t.Helper()
	ix := NewIndexWriter(t.TempDir(), memory)
	defer ix.Close()
	names := make([]string, 0, len(apps))
	for c := range apps {
		names = append(names, c)
	}
	slices.Sort(names)
	// Interleave the candidates by height, as blocks arrive.
	byHeight := map[int32][]string{}
	for _, c := range names {
		for _, h := range apps[c] {
			byHeight[h] = append(byHeight[h], c)
		}
	}
	for h := first; h < first+int32(nblocks); h++ {
		for _, c := range byHeight[h] {
			ix.Add(c, h)
			ix.Add(c, h) // twice in one block counts once
		}
	}
	hd := &IndexHeader{Network: "regtest", First: first}
	for i := 0; i < nblocks; i++ {
		hd.Hashes = append(hd.Hashes, blockHash(int32(i)+first))
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func blockHash(h int32) chainhash.Hash {
	return chainhash.DoubleHashH([]byte(fmt.Sprintf("block %d", h)))
}

func readIndex(t *testing.T, data []byte) (map[string][]int32, *IndexHeader) {
	t.Helper()
	ir, err := NewIndexReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int32{}
	for {
		e, err := ir.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[e.Candidate] = e.Heights
	}
	return got, ir.Header()
}

func TestIndexRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	apps := map[string][]int32{}
	const first, nblocks = 100, 300
	for i := 0; i < 2000; i++ {
		c := fmt.Sprintf("cand-%05d", rng.IntN(100000))
		set := map[int32]bool{}
		for j := 0; j < 1+rng.IntN(5); j++ {
			set[first+int32(rng.IntN(nblocks))] = true
		}
		for h := range set {
			apps[c] = append(apps[c], h)
		}
		slices.Sort(apps[c])
		apps[c] = slices.Compact(apps[c])
	}
	for _, memory := range []int{1 << 10, 1 << 14, 64 << 20} { // many runs (merged in levels), a few, none
		t.Run(fmt.Sprint(memory), func(t *testing.T) {
			data := buildIndex(t, first, nblocks, apps, memory)
			got, hd := readIndex(t, data)
			if hd.First != first || len(hd.Hashes) != nblocks || hd.Network != "regtest" || hd.Hashes[5] != blockHash(first+5) {
				t.Fatalf("header %+v", hd)
			}
			if len(got) != len(apps) {
				t.Fatalf("%d entries, want %d", len(got), len(apps))
			}
			for c, hs := range apps {
				if !slices.Equal(got[c], hs) {
					t.Fatalf("%s: heights %v, want %v", c, got[c], hs)
				}
			}
		})
	}
}

func TestIndexRejects(t *testing.T) {
	good := buildIndex(t, 0, 4, map[string][]int32{"a": {0, 2}, "b": {3}}, 0)
	cases := map[string][]byte{
		"empty":       nil,
		"magic":       append([]byte("SPVFIDX\x02"), good[8:]...),
		"truncated":   good[:len(good)-3],
		"no end":      good[:len(good)-2],
		"extra bytes": append(slices.Clone(good), 0),
		"hashes cut":  good[:40],
	}
	// An entry count that lies, and candidates out of order.
	lie := slices.Clone(good)
	lie[len(lie)-1] = 3
	cases["end count"] = lie
	swapped := bytes.Replace(slices.Clone(good), []byte{1, 'a'}, []byte{1, 'c'}, 1)
	cases["order"] = swapped
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			ir, err := NewIndexReader(bytes.NewReader(data))
			for err == nil {
				_, err = ir.Next()
			}
			if err == io.EOF || !errors.Is(err, ErrBadIndex) {
				t.Fatalf("read to %v, want ErrBadIndex", err)
			}
		})
	}
}
