package universe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"reflect"
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
	entries, hd := readEntries(t, data)
	got := map[string][]int32{}
	for _, e := range entries {
		got[e.Candidate] = e.Heights
	}
	return got, hd
}

// readEntries reads every entry of an index.
func readEntries(t *testing.T, data []byte) ([]*IndexEntry, *IndexHeader) {
	t.Helper()
	ir, err := NewIndexReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var entries []*IndexEntry
	for {
		e, err := ir.Next()
		if err == io.EOF {
			return entries, ir.Header()
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
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
		"empty":        nil,
		"magic":        append([]byte("SPVFIDY\x03"), good[8:]...),
		"version":      append([]byte("SPVFIDX\x05"), good[8:]...),
		"truncated":    good[:len(good)-7],
		"no end":       good[:len(good)-6],
		"no checksum":  good[:len(good)-4],
		"checksum cut": good[:len(good)-1],
		"extra bytes":  append(slices.Clone(good), 0),
		"hashes cut":   good[:40],
	}
	// An entry count that lies, and candidates out of order.
	lie := slices.Clone(good)
	lie[len(lie)-5] = 3
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

// TestIndexDamaged: an index with any one byte changed, in its header,
// its entries or its checksum, is ErrBadIndex by the time its last entry
// is read, never read as another index (a block hash or a height changed
// reads cleanly without the checksum) nor a crash.
func TestIndexDamaged(t *testing.T) {
	good := buildIndex(t, 7, 5, map[string][]int32{"a": {7, 9}, "bb": {8, 9, 11}, "c": {11}}, 0)
	for i := range good {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			data := slices.Clone(good)
			data[i] ^= flip
			ir, err := NewIndexReader(bytes.NewReader(data))
			for err == nil {
				_, err = ir.Next()
			}
			if !errors.Is(err, ErrBadIndex) {
				t.Fatalf("byte %d of %d xor %#x: read to %v, want ErrBadIndex", i, len(good), flip, err)
			}
		}
	}
}

// TestIndexTransactions: the transactions of every appearance and the
// candidate's roles in them survive runs spilled and merged (a block's
// transactions from two runs joined, and a transaction's roles), and an
// appearance added without its transaction adds its block only.
func TestIndexTransactions(t *testing.T) {
	type app struct {
		c     string
		h, tx int32
		role  Role
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var apps []app
	want := map[string]map[int32][]uint32{}
	wantRoles := map[string]map[uint64]Role{}
	for i := 0; i < 3000; i++ {
		a := app{fmt.Sprintf("c-%03d", rng.IntN(300)), 10 + int32(rng.IntN(50)), int32(rng.IntN(40)), Role(rng.IntN(3))}
		if rng.IntN(10) == 0 {
			a.tx = -1 // not recorded
		}
		apps = append(apps, a)
		if want[a.c] == nil {
			want[a.c] = map[int32][]uint32{}
			wantRoles[a.c] = map[uint64]Role{}
		}
		txs := want[a.c][a.h]
		if a.tx >= 0 && !slices.Contains(txs, uint32(a.tx)) {
			txs = append(txs, uint32(a.tx))
			slices.Sort(txs)
		}
		if a.tx >= 0 {
			wantRoles[a.c][uint64(a.h)<<32|uint64(a.tx)] |= a.role
		}
		want[a.c][a.h] = txs
	}
	for _, memory := range []int{1 << 10, 64 << 20} {
		ix := NewIndexWriter(t.TempDir(), memory)
		for _, a := range apps {
			switch {
			case a.tx < 0:
				ix.Add(a.c, a.h)
			case a.role == 0:
				ix.AddTx(a.c, a.h, int(a.tx))
			default:
				ix.AddRole(a.c, a.h, int(a.tx), a.role|4) // a bit beyond the roles is dropped
			}
		}
		hd := &IndexHeader{Network: "regtest", First: 10}
		for h := int32(10); h < 60; h++ {
			hd.Hashes = append(hd.Hashes, blockHash(h))
		}
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf, hd); err != nil {
			t.Fatal(err)
		}
		ix.Close()
		entries, hd := readEntries(t, buf.Bytes())
		if hd.Version != IndexVersion {
			t.Fatalf("version %d", hd.Version)
		}
		for _, e := range entries {
			if len(e.Txs) != len(e.Heights) {
				t.Fatalf("%s: %d heights, %d transaction lists", e.Candidate, len(e.Heights), len(e.Txs))
			}
			if len(e.Roles) != len(e.Heights) {
				t.Fatalf("%s: %d heights, %d role lists", e.Candidate, len(e.Heights), len(e.Roles))
			}
			for i, h := range e.Heights {
				txs, ok := want[e.Candidate][h]
				if !ok || !slices.Equal(txs, e.Txs[i]) && len(txs)+len(e.Txs[i]) > 0 {
					t.Fatalf("memory %d: %s at %d: transactions %v, want %v", memory, e.Candidate, h, e.Txs[i], txs)
				}
				if len(e.Roles[i]) != len(e.Txs[i]) {
					t.Fatalf("memory %d: %s at %d: roles %v of transactions %v", memory, e.Candidate, h, e.Roles[i], e.Txs[i])
				}
				for j, tx := range e.Txs[i] {
					if w := wantRoles[e.Candidate][uint64(h)<<32|uint64(tx)]; e.Roles[i][j] != w {
						t.Fatalf("memory %d: %s at %d, transaction %d: role %d, want %d", memory, e.Candidate, h, tx, e.Roles[i][j], w)
					}
				}
			}
			if len(e.Heights) != len(want[e.Candidate]) {
				t.Fatalf("%s: %d blocks, want %d", e.Candidate, len(e.Heights), len(want[e.Candidate]))
			}
		}
		if len(entries) != len(want) {
			t.Fatalf("%d entries, want %d", len(entries), len(want))
		}
	}
}

// TestIndexVersion1 reads an index of the first version, which records
// no transactions.
func TestIndexVersion1(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("SPVFIDX\x01")
	b.Write([]byte{7})
	b.WriteString("regtest")
	b.Write([]byte{2, 3}) // first 2, three blocks
	for h := int32(2); h < 5; h++ {
		hash := blockHash(h)
		b.Write(hash[:])
	}
	b.Write([]byte{1, 'a', 2, 0, 2}) // "a" at 2 and 4
	b.Write([]byte{1, 'b', 1, 1})    // "b" at 3
	b.Write([]byte{0, 2})
	got, hd := readIndex(t, b.Bytes())
	if hd.Version != 1 || !slices.Equal(got["a"], []int32{2, 4}) || !slices.Equal(got["b"], []int32{3}) {
		t.Fatalf("version %d, entries %v", hd.Version, got)
	}
	if entries, _ := readEntries(t, b.Bytes()); entries[0].Txs != nil {
		t.Fatalf("version 1 entry with transactions %v", entries[0].Txs)
	}
}

// TestIndexRejectsTransactions: transaction lists out of order, too long
// or cut short are ErrBadIndex.
func TestIndexRejectsTransactions(t *testing.T) {
	head := func() *bytes.Buffer { return indexHead(2) }
	for name, entry := range map[string][]byte{
		"not increasing": {1, 'a', 1, 0, 2, 3, 0},
		"too many":       {1, 'a', 1, 0, 0xff, 0xff, 0x7f},
		"position":       {1, 'a', 1, 0, 1, 0xff, 0xff, 0x7f},
		"cut short":      {1, 'a', 1, 0, 3, 1, 1},
	} {
		t.Run(name, func(t *testing.T) {
			b := head()
			b.Write(entry)
			b.Write([]byte{0, 1})
			ir, err := NewIndexReader(bytes.NewReader(b.Bytes()))
			for err == nil {
				_, err = ir.Next()
			}
			if !errors.Is(err, ErrBadIndex) {
				t.Fatalf("read to %v, want ErrBadIndex", err)
			}
		})
	}
	b := head()
	b.Write([]byte{1, 'a', 2, 0, 2, 0, 5, 1, 0, 0, 1})
	entries, _ := readEntries(t, b.Bytes())
	if len(entries) != 1 || !slices.Equal(entries[0].Heights, []int32{0, 1}) || entries[0].Roles != nil {
		t.Fatalf("a good entry read as %+v", entries)
	}
}

// indexHead is the header of an index of the version given, of two
// blocks, 0 and 1.
func indexHead(version byte) *bytes.Buffer {
	var b bytes.Buffer
	b.WriteString("SPVFIDX")
	b.WriteByte(version)
	b.Write([]byte{7})
	b.WriteString("regtest")
	b.Write([]byte{0, 2})
	for h := int32(0); h < 2; h++ {
		hash := blockHash(h)
		b.Write(hash[:])
	}
	return &b
}

// oldIndex is an index of version 3 (with the checksum) or 4 of two
// blocks, 0 and 1, holding one entry, "a", of the bytes given.
func oldIndex(version byte, entry []byte) []byte {
	b := indexHead(version)
	b.Write(entry)
	b.Write([]byte{0, 1})
	return binary.LittleEndian.AppendUint32(b.Bytes(), crc32.Checksum(b.Bytes(), indexChecksum))
}

// TestIndexRoles reads the roles of a version 4 index, and none from the
// same transactions in version 3 (which cannot tell a payment from a
// spend); a role list cut short or transactions not increasing are
// ErrBadIndex.
func TestIndexRoles(t *testing.T) {
	// "a" at 0, transactions 2 (paid) and 5 (spent and paid), and at 1,
	// transaction 0 (role not recorded).
	v4 := []byte{1, 'a', 2, 0, 2, 2<<2 | 1, 3<<2 | 3, 1, 1, 0}
	entries, hd := readEntries(t, oldIndex(4, v4))
	want := IndexEntry{Candidate: "a", Heights: []int32{0, 1}, Txs: [][]uint32{{2, 5}, {0}},
		Roles: [][]Role{{RolePaid, RolePaid | RoleSpent}, {0}}}
	if hd.Version != 4 || len(entries) != 1 || !reflect.DeepEqual(*entries[0], want) {
		t.Fatalf("version %d, entries %+v, want %+v", hd.Version, entries, want)
	}
	v3 := []byte{1, 'a', 2, 0, 2, 2, 3, 1, 1, 0}
	entries, hd = readEntries(t, oldIndex(3, v3))
	want.Roles = nil
	if hd.Version != 3 || len(entries) != 1 || !reflect.DeepEqual(*entries[0], want) {
		t.Fatalf("version %d, entries %+v, want %+v", hd.Version, entries, want)
	}
	for name, entry := range map[string][]byte{
		"not increasing": {1, 'a', 1, 0, 2, 2<<2 | 1, 0<<2 | 2},
		"position":       {1, 'a', 1, 0, 1, 0xfc, 0xff, 0x3f},
		"cut short":      {1, 'a', 1, 0, 2, 1},
	} {
		t.Run(name, func(t *testing.T) {
			ir, err := NewIndexReader(bytes.NewReader(oldIndex(4, entry)))
			for err == nil {
				_, err = ir.Next()
			}
			if !errors.Is(err, ErrBadIndex) {
				t.Fatalf("read to %v, want ErrBadIndex", err)
			}
		})
	}
}
