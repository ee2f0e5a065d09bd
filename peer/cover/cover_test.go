package cover

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

var params = &chaincfg.RegressionNetParams

// p2wpkh is a distinct P2WPKH script for each i.
func p2wpkh(i int) []byte {
	s := append([]byte{0x00, 0x14}, make([]byte, 20)...)
	binary.BigEndian.PutUint64(s[2:], uint64(i)+1)
	return s
}

func entry(i int) Cover {
	read := uint16(i % 3)
	return Cover{Script: p2wpkh(i), Profile: Profile{Class: uint8(1 + i%MaxClass), Type: 2, First: int32(100 + i), Drawn: int32(500 + i), Group: uint64(i / 3),
		Riders: uint32(read) * uint32(2+i%4), Read: read}}
}

// fileExplore is the exploration state filled saves.
var fileExplore = Explore{Short: 3, Swept: 1 << 40, Explored: 300, From: 151, To: 2150}

// filled is a saved set in a new directory: n covers, r in reserve and a
// chance row.
func filled(t testing.TB, n, r int) (*Set, string) {
	t.Helper()
	dir := t.TempDir()
	s, notes, err := Open(dir, params)
	if err != nil || len(notes) != 0 {
		t.Fatalf("first open: %v, notes %q", err, notes)
	}
	for i := range n + r {
		add := s.Add
		if i >= n {
			add = s.AddReserve
		}
		if err := add(entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetExplore(fileExplore); err != nil {
		t.Fatal(err)
	}
	if err := s.SetChance(map[int]float64{2: 1.5, 3: 0.25}); err != nil {
		t.Fatal(err)
	}
	for _, k := range fileRefuted {
		if err := s.Refute(k); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range fileDecoys {
		if err := s.AddDecoy(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// fileRefuted are the false matches filled saves.
var fileRefuted = []MatchKey{MatchKeyOf(chainhash.Hash{1}, p2wpkh(1)), MatchKeyOf(chainhash.Hash{2}, p2wpkh(1))}

// fileDecoys are the decoys filled saves.
var fileDecoys = [][]byte{p2wpkh(200), p2wpkh(201)}

// decoysBytes is the decoys section of a file of the current version.
func decoysBytes(ds [][]byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(ds)))
	for _, d := range ds {
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
	}
	return b
}

// same fails unless a and b hold the same set.
func same(t *testing.T, a, b *Set) {
	t.Helper()
	if a.Seed() != b.Seed() || !slices.EqualFunc(a.Covers(), b.Covers(), eqCover) ||
		!slices.EqualFunc(a.Reserve(), b.Reserve(), eqCover) || fmt.Sprint(a.Chance()) != fmt.Sprint(b.Chance()) {
		t.Fatalf("sets differ:\n%v %v %v\n%v %v %v", a.Covers(), a.Reserve(), a.Chance(), b.Covers(), b.Reserve(), b.Chance())
	}
}

func eqCover(a, b Cover) bool { return bytes.Equal(a.Script, b.Script) && a.Profile == b.Profile }

// TestSaveReopen: a saved set reads back the same, seed included, from a
// file only its owner may read; it grows across saves, the file before
// each save is kept as .prev, and an unchanged set is not written again.
func TestSaveReopen(t *testing.T) {
	s, dir := filled(t, 5, 3)
	got, notes, err := OpenWith(dir, params, Options{Existing: true})
	if err != nil || len(notes) != 0 {
		t.Fatalf("reopen: %v, notes %q", err, notes)
	}
	same(t, s, got)
	fi, err := os.Stat(got.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, want 0600", fi.Mode().Perm())
	}
	first, _ := os.ReadFile(got.Path())
	if err := got.Add(entry(6)); err != nil { // from the reserve into use
		t.Fatal(err)
	}
	if n, r := len(got.Covers()), len(got.Reserve()); n != 6 || r != 2 {
		t.Fatalf("after promoting a reserve script: %d covers, %d in reserve", n, r)
	}
	if err := got.Save(); err != nil {
		t.Fatal(err)
	}
	if prev, _ := os.ReadFile(got.Path() + ".prev"); !bytes.Equal(prev, first) {
		t.Fatal("covers.dat.prev is not the file before the save")
	}
	again, _, err := Open(dir, params)
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, again)
	before, _ := os.Stat(again.Path())
	if err := os.Remove(again.Path() + ".prev"); err != nil {
		t.Fatal(err)
	}
	if err := again.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(again.Path() + ".prev"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("an unchanged set was written again")
	}
	if after, _ := os.Stat(again.Path()); !os.SameFile(before, after) {
		t.Fatal("an unchanged set replaced its file")
	}
}

// TestAddRules: no script twice, no script a basic filter lacks, no
// profile out of range.
func TestAddRules(t *testing.T) {
	s, _ := filled(t, 2, 2)
	bad := []struct {
		name string
		c    Cover
		add  func(Cover) error
		want error
	}{
		{"a cover again", entry(0), s.Add, ErrDuplicate},
		{"a cover to the reserve", entry(1), s.AddReserve, ErrDuplicate},
		{"a reserve script to the reserve", entry(2), s.AddReserve, ErrDuplicate},
		{"OP_RETURN", Cover{Script: []byte{0x6a, 1, 2}, Profile: Profile{Class: 1}}, s.Add, nil},
		{"empty script", Cover{Profile: Profile{Class: 1}}, s.Add, nil},
		{"class 0", Cover{Script: p2wpkh(90), Profile: Profile{}}, s.Add, nil},
		{"class 9", Cover{Script: p2wpkh(90), Profile: Profile{Class: MaxClass + 1}}, s.AddReserve, nil},
		{"type 16", Cover{Script: p2wpkh(90), Profile: Profile{Class: 1, Type: MaxType + 1}}, s.Add, nil},
		{"negative height", Cover{Script: p2wpkh(90), Profile: Profile{Class: 1, First: -1}}, s.Add, nil},
	}
	for _, tc := range bad {
		err := tc.add(tc.c)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want an error%v", tc.name, err, map[bool]string{true: " wrapping " + fmt.Sprint(tc.want)}[tc.want != nil])
		}
	}
	if n, r := len(s.Covers()), len(s.Reserve()); n != 2 || r != 2 {
		t.Fatalf("refused additions changed the set: %d covers, %d in reserve", n, r)
	}
	if err := s.SetChance(map[int]float64{0: 1}); err == nil {
		t.Error("chance of class 0 accepted")
	}
	if err := s.SetChance(map[int]float64{1: -1}); err == nil {
		t.Error("negative chance accepted")
	}
}

// good is a saved file's bytes with the offsets where its fields begin.
func good(t testing.TB) ([]byte, map[string]int) {
	t.Helper()
	s, _ := filled(t, 2, 1)
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	net := len(magic)
	seed := net + 1 + len(params.Name)
	chance := seed + 32
	covers := chance + 1 + 2*3
	decoys := len(data) - 4 - len(decoysBytes(fileDecoys))
	explore := decoys - len(exploreBytes(fileExplore)) - 1 - 8*len(fileRefuted)
	return data, map[string]int{"magic": 0, "network": net, "seed": seed, "chance": chance, "covers": covers,
		"cover script": covers + 2, "reserve": explore - entry(2).entrySize() - 1, "explore": explore,
		"decoys": decoys, "decoy script": decoys + 2, "checksum": len(data) - 4}
}

// exploreBytes is e as a file of the current version writes it.
func exploreBytes(e Explore) []byte {
	b := binary.AppendUvarint(nil, uint64(e.Short))
	b = binary.AppendUvarint(b, e.Swept)
	b = binary.AppendUvarint(b, e.Explored)
	b = binary.AppendUvarint(b, uint64(e.From))
	return binary.AppendUvarint(b, uint64(e.To))
}

// resum replaces the checksum of a file (its last 4 bytes).
func resum(data []byte) []byte {
	body := data[:len(data)-4]
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
}

// damagedFiles are files Open must find damaged, by name.
func damagedFiles(t testing.TB) map[string][]byte {
	data, at := good(t)
	cases := map[string][]byte{
		"empty":            {},
		"bad magic":        append([]byte("SPVFXXX\x01"), data[8:]...),
		"version 7":        resum(append([]byte("SPVFCOV\x07"), data[8:]...)),
		"checksum flipped": append(slices.Clone(data[:len(data)-1]), data[len(data)-1]^1),
		"a byte flipped":   append(append(slices.Clone(data[:40]), data[40]^0x10), data[41:]...),
		"trailing byte":    resum(append(slices.Clone(data[:len(data)-4]), 0, 0, 0, 0, 0)),
	}
	for field, off := range at {
		cases["cut in "+field] = slices.Clone(data[:off+1])
		cases["cut in "+field+", checksum right"] = resum(append(slices.Clone(data[:off+1]), 0, 0, 0, 0))
	}
	other := slices.Clone(data)
	copy(other[at["network"]+1:], "regtesx")
	cases["another network"] = resum(other)
	bigCount := func(field string, count uint64) []byte {
		b := slices.Clone(data[:at[field]])
		b = binary.AppendUvarint(b, count)
		return resum(append(append(b, data[at[field]+1:len(data)-4]...), 0, 0, 0, 0))
	}
	cases["covers beyond MaxCovers"] = bigCount("covers", MaxCovers+1)
	cases["reserve beyond MaxReserve"] = bigCount("reserve", MaxReserve+1)
	cases["covers beyond the bytes left"] = bigCount("covers", 1000)
	cases["chance beyond MaxClass"] = bigCount("chance", MaxClass+1)
	cases["scans short beyond the bound"] = bigCount("explore", maxShort+1)
	// A sweep position is any of 2^64; one of more bytes overflows.
	wide := binary.AppendUvarint(slices.Clone(data[:at["explore"]]), 0)
	wide = append(wide, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)
	cases["sweep position beyond 64 bits"] = resum(append(wide, 0, 0, 0, 0))
	huge := binary.AppendUvarint(slices.Clone(data[:at["explore"]]), 0)
	huge = binary.AppendUvarint(huge, 1<<63)
	cases["sweep position, then a byte more"] = resum(append(huge, 0, 0, 0, 0, 0))
	opReturn := slices.Clone(data)
	opReturn[at["cover script"]] = 0x6a
	cases["OP_RETURN script"] = resum(opReturn)
	twice := slices.Clone(data)
	copy(twice[at["reserve"]+2:], p2wpkh(0)) // the reserve's script made cover 0's
	cases["a script twice"] = resum(twice)
	long := slices.Clone(data)
	long[at["covers"]+1] |= 0x80 // a length not in its shortest form
	long = slices.Insert(long, at["covers"]+2, 0x00)
	cases["varint too long"] = resum(long)
	return cases
}

// TestOpenDamaged: each damaged file is set aside and, with no good
// .prev, Open fails with a *DamagedError naming it (Options.New starts a
// new set instead); with a good .prev, that is used and a note says so. A
// missing file is a first run unless Options.Existing says the store
// holds a chain.
func TestOpenDamaged(t *testing.T) {
	for name, data := range damagedFiles(t) {
		t.Run(name, func(t *testing.T) {
			for _, withPrev := range []bool{false, true} {
				dir := t.TempDir()
				var prev *Set
				if withPrev {
					prev, dir = filled(t, 3, 1)
					if err := prev.Add(entry(40)); err != nil {
						t.Fatal(err)
					}
					if err := prev.Save(); err != nil { // covers.dat.prev: the 3 covers
						t.Fatal(err)
					}
				}
				path := filepath.Join(dir, FileName)
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Fatal(err)
				}
				s, notes, err := Open(dir, params)
				aside, _ := filepath.Glob(path + ".damaged-*")
				if len(aside) != 1 {
					t.Fatalf("prev %v: set aside as %q", withPrev, aside)
				}
				if withPrev {
					if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "covers.dat.prev") || len(s.Covers()) != 3 {
						t.Fatalf("with a good .prev: %v, notes %q", err, notes)
					}
					if err := s.Save(); err != nil {
						t.Fatal(err)
					}
					if again, _, err := Open(dir, params); err != nil || len(again.Covers()) != 3 {
						t.Fatalf("reopened after recovery: %v", err)
					}
					continue
				}
				var de *DamagedError
				if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) || de.Path != path || de.SetAside != filepath.Base(aside[0]) ||
					!strings.Contains(err.Error(), path) {
					t.Fatalf("no DamagedError naming the file: %v", err)
				}
				if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Fatal("the damaged file is still in place")
				}
				if _, _, err := OpenWith(dir, params, Options{Existing: true}); !errors.As(err, &de) {
					t.Fatalf("reopened after the damage: %v", err)
				}
				s, notes, err = OpenWith(dir, params, Options{Existing: true, New: true})
				if err != nil || len(s.Covers()) != 0 || len(notes) != 1 {
					t.Fatalf("a new set accepted: %v, notes %q", err, notes)
				}
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		s, notes, err := Open(dir, params)
		if err != nil || len(notes) != 0 || len(s.Covers()) != 0 {
			t.Fatalf("first run: %v, notes %q", err, notes)
		}
		var de *DamagedError
		if _, _, err := OpenWith(dir, params, Options{Existing: true}); !errors.As(err, &de) || !errors.Is(err, fs.ErrNotExist) || de.SetAside != "" {
			t.Fatalf("deleted beside a chain: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("Open wrote a file")
		}
	})
	t.Run("deleted beside .prev", func(t *testing.T) {
		s, dir := filled(t, 2, 0)
		if err := s.Add(entry(9)); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(s.Path()); err != nil {
			t.Fatal(err)
		}
		got, notes, err := Open(dir, params)
		if err != nil || len(notes) != 1 || len(got.Covers()) != 2 {
			t.Fatalf("deleted, .prev kept: %v, notes %q", err, notes)
		}
	})
	t.Run("a directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, FileName), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Open(dir, params); !errors.Is(err, ErrDamaged) {
			t.Fatalf("a directory: %v", err)
		}
	})
	t.Run("seeds differ", func(t *testing.T) {
		a, _ := filled(t, 0, 0)
		b, _ := filled(t, 0, 0)
		if a.Seed() == b.Seed() || a.Seed() == [32]byte{} {
			t.Fatal("two data directories share a seed")
		}
	})
}

// TestCoverFileBounded: what a file's counts size is bounded by the file
// (a few bytes claiming thousands of covers allocate no more than the
// bytes could hold), a file beyond MaxFileSize is damage, read no
// further, and a set stops growing, with ErrFull, at its bounds, which
// keep it within MaxFileSize.
func TestCoverFileBounded(t *testing.T) {
	data, at := good(t)
	claims := map[string][]byte{}
	for _, count := range []uint64{MaxCovers, 1 << 40} {
		b := binary.AppendUvarint(slices.Clone(data[:at["covers"]]), count)
		claims[fmt.Sprintf("%d covers", count)] = resum(append(b, 0, 0, 0, 0))
	}
	b := binary.AppendUvarint(slices.Clone(data[:at["covers"]]), 1)
	b = binary.AppendUvarint(b, MaxScript)
	claims["a script of MaxScript bytes"] = resum(append(b, 0x51, 0, 0, 0, 0))
	for name, file := range claims {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := decode(file, params.Name)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("%s: decoded", name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<10 {
			t.Errorf("%s: a file of %d bytes allocated %d bytes", name, len(file), got)
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(dir, params); !errors.Is(err, ErrDamaged) || !errors.Is(err, diskfile.ErrTooLarge) {
		t.Fatalf("a file beyond MaxFileSize: %v", err)
	}

	s, _, err := Open(t.TempDir(), params)
	if err != nil {
		t.Fatal(err)
	}
	big := func(i int) Cover {
		c := entry(i)
		c.Script = append(bytes.Repeat([]byte{0x51}, MaxScript-8), c.Script[2:10]...)
		return c
	}
	n := 0
	for ; n < MaxFileSize/MaxScript+10; n++ {
		if err := s.Add(big(n)); errors.Is(err, ErrFull) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 || n > MaxFileSize/MaxScript {
		t.Fatalf("%d covers of %d bytes added", n, MaxScript)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(s.Path()); fi.Size() > MaxFileSize {
		t.Fatalf("a file of %d bytes", fi.Size())
	}
	if _, _, err := OpenWith(filepath.Dir(s.Path()), params, Options{Existing: true}); err != nil {
		t.Fatalf("a full file read back: %v", err)
	}

	s, _, err = Open(t.TempDir(), params)
	if err != nil {
		t.Fatal(err)
	}
	for i := range MaxCovers {
		if err := s.Add(entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(entry(MaxCovers)); !errors.Is(err, ErrFull) {
		t.Fatalf("cover %d: %v", MaxCovers+1, err)
	}
	for i := range MaxReserve {
		if err := s.AddReserve(entry(MaxCovers + 1 + i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddReserve(entry(MaxCovers + MaxReserve + 1)); !errors.Is(err, ErrFull) {
		t.Fatalf("reserve script %d: %v", MaxReserve+1, err)
	}
	if len(s.c.encode()) != s.size {
		t.Fatalf("size kept as %d, encodes to %d", s.size, len(s.c.encode()))
	}
}

// TestReclass: a script in reserve takes the class a scan profiled,
// which a save keeps; a cover, a script not in the set and a class out
// of range are left alone.
func TestReclass(t *testing.T) {
	s, dir := filled(t, 2, 2)
	cases := []struct {
		name   string
		script []byte
		class  uint8
		ok     bool
		err    bool
	}{
		{"in reserve", p2wpkh(2), 5, true, false},
		{"a cover", p2wpkh(0), 5, false, false},
		{"not in the set", p2wpkh(90), 5, false, false},
		{"class 0", p2wpkh(3), 0, false, true},
		{"class beyond MaxClass", p2wpkh(3), MaxClass + 1, false, true},
	}
	for _, tc := range cases {
		ok, err := s.Reclass(tc.script, tc.class)
		if ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("%s: %v, %v; want %v and an error %v", tc.name, ok, err, tc.ok, tc.err)
		}
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	again, _, err := Open(dir, params)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint8{5, entry(3).Profile.Class}
	for i, r := range again.Reserve() {
		if r.Profile.Class != want[i] {
			t.Errorf("reserve %d of class %d after a save, want %d", i, r.Profile.Class, want[i])
		}
	}
	if c := again.Covers()[0].Profile.Class; c != entry(0).Profile.Class {
		t.Errorf("a cover reclassed: class %d", c)
	}
}

// TestExploreKept: the exploration state survives a save and an open,
// a file of version 1 (before it was kept) reads with none, of version 2
// and 3 with what they kept, and a state out of bounds is refused.
func TestExploreKept(t *testing.T) {
	s, dir := filled(t, 2, 1)
	again, _, err := Open(dir, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Explore(); got != fileExplore {
		t.Errorf("explore state %+v after open, want %+v", got, fileExplore)
	}
	if err := s.SetExplore(Explore{Short: -1}); err == nil {
		t.Error("a negative count of scans short accepted")
	}
	data, at := good(t)
	// Files before version 5: entries without their riders.
	prefix := entriesV4(s.c)
	v1 := append([]byte("SPVFCOV\x01"), prefix...)
	v1 = resum(append(v1, 0, 0, 0, 0))
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), v1, 0o600); err != nil {
		t.Fatal(err)
	}
	old, notes, err := Open(dir, params)
	if err != nil || len(notes) > 0 {
		t.Fatalf("a version 1 file: %v, notes %q", err, notes)
	}
	if got := old.Explore(); got != (Explore{}) || len(old.Covers()) != 2 || len(old.Reserve()) != 1 {
		t.Errorf("a version 1 file read as %d covers, %d in reserve, explore %+v; want 2, 1 and none", len(old.Covers()), len(old.Reserve()), got)
	}
	// Version 2: Short and Swept, without the blocks explored and the
	// false matches.
	v2 := append([]byte("SPVFCOV\x02"), prefix...)
	v2 = binary.AppendUvarint(binary.AppendUvarint(v2, uint64(fileExplore.Short)), fileExplore.Swept)
	v2 = resum(append(v2, 0, 0, 0, 0))
	if err := os.WriteFile(filepath.Join(dir, FileName), v2, 0o600); err != nil {
		t.Fatal(err)
	}
	old, notes, err = Open(dir, params)
	if err != nil || len(notes) > 0 {
		t.Fatalf("a version 2 file: %v, notes %q", err, notes)
	}
	if got, want := old.Explore(), (Explore{Short: fileExplore.Short, Swept: fileExplore.Swept}); got != want || old.Refuted(fileRefuted[0]) {
		t.Errorf("a version 2 file read with explore %+v, refuted %v; want %+v and none", got, old.Refuted(fileRefuted[0]), want)
	}
	// Version 3: the blocks explored and the false matches, without
	// the range they were explored in.
	v3 := append([]byte("SPVFCOV\x03"), prefix...)
	v3 = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(v3, uint64(fileExplore.Short)), fileExplore.Swept), fileExplore.Explored)
	v3 = append(v3, data[at["explore"]+len(exploreBytes(fileExplore)):at["decoys"]]...)
	if err := os.WriteFile(filepath.Join(dir, FileName), resum(append(v3, 0, 0, 0, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	old, notes, err = Open(dir, params)
	if err != nil || len(notes) > 0 {
		t.Fatalf("a version 3 file: %v, notes %q", err, notes)
	}
	if got, want := old.Explore(), (Explore{Short: fileExplore.Short, Swept: fileExplore.Swept, Explored: fileExplore.Explored}); got != want || !old.Refuted(fileRefuted[0]) {
		t.Errorf("a version 3 file read with explore %+v, refuted %v; want %+v and its false matches", got, old.Refuted(fileRefuted[0]), want)
	}
	if err := s.SetExplore(Explore{From: -1}); err == nil {
		t.Error("a negative height accepted")
	}
}

// TestRefutedKept: false matches survive a save and an open, each
// found by its key alone; a key kept twice is kept once, and the file
// refuses keys out of order.
func TestRefutedKept(t *testing.T) {
	_, dir := filled(t, 2, 1)
	again, _, err := Open(dir, params)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range fileRefuted {
		if !again.Refuted(k) {
			t.Errorf("false match %x lost in the save", k)
		}
	}
	if again.Refuted(MatchKeyOf(chainhash.Hash{1}, p2wpkh(2))) {
		t.Error("a match of another script refuted")
	}
	before := len(again.c.encode())
	if err := again.Refute(fileRefuted[0]); err != nil || len(again.c.encode()) != before {
		t.Errorf("a key kept twice: %v, %d bytes from %d", err, len(again.c.encode()), before)
	}
	data, at := good(t)
	end := at["decoys"] - 16
	swapped := slices.Concat(data[:end], data[end+8:end+16], data[end:end+8], data[end+16:len(data)-4])
	if bytes.Compare(data[end:end+8], data[end+8:end+16]) >= 0 {
		t.Fatal("the file's keys are not in order")
	}
	if _, err := decode(resum(append(swapped, 0, 0, 0, 0)), params.Name); err == nil {
		t.Error("keys out of order accepted")
	}
}

// TestDecoysKept: decoys survive a save and an open in the order kept;
// a decoy kept twice is kept once; a file of version 5, before they were
// kept, reads with none, its other fields whole, and is written in the
// current version when saved again; a script no basic filter holds is
// refused, by AddDecoy and in a file, and so is a decoy twice in a file;
// beyond MaxDecoys AddDecoy says ErrFull.
func TestDecoysKept(t *testing.T) {
	s, dir := filled(t, 2, 1)
	again, _, err := Open(dir, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Decoys(); !slices.EqualFunc(got, fileDecoys, bytes.Equal) {
		t.Errorf("decoys %x after open, want %x", got, fileDecoys)
	}
	before := len(again.c.encode())
	if err := again.AddDecoy(fileDecoys[0]); err != nil || len(again.c.encode()) != before || len(again.Decoys()) != len(fileDecoys) {
		t.Errorf("a decoy kept twice: %v, %d bytes from %d", err, len(again.c.encode()), before)
	}
	if err := again.AddDecoy([]byte{0x6a, 0x01}); err == nil {
		t.Error("an OP_RETURN script kept as a decoy")
	}
	// The set as version 5 wrote it: the same bytes without the decoys.
	data, at := good(t)
	v5 := slices.Concat([]byte("SPVFCOV\x05"), data[len(magic):at["decoys"]])
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), resum(append(v5, 0, 0, 0, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	old, notes, err := Open(dir, params)
	if err != nil || len(notes) > 0 {
		t.Fatalf("a version 5 file: %v, notes %q", err, notes)
	}
	if !slices.EqualFunc(s.Covers(), old.Covers(), eqCover) || !slices.EqualFunc(s.Reserve(), old.Reserve(), eqCover) {
		t.Errorf("a version 5 file read as %d covers, %d in reserve", len(old.Covers()), len(old.Reserve()))
	}
	if len(old.Decoys()) != 0 || !old.Refuted(fileRefuted[0]) || old.Explore() != fileExplore {
		t.Errorf("a version 5 file read with decoys %x, explore %+v", old.Decoys(), old.Explore())
	}
	if err := old.Save(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, FileName)); err != nil || data[len(magic)-1] != version {
		t.Fatalf("a version 5 file saved again: version %d, %v", data[len(magic)-1], err)
	}
	// In a file: a decoy twice, and one no filter holds.
	twice := slices.Concat(data[:at["decoys"]], decoysBytes([][]byte{fileDecoys[0], fileDecoys[0]}))
	if _, err := decode(resum(append(twice, 0, 0, 0, 0)), params.Name); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a decoy twice in a file: %v", err)
	}
	opReturn := slices.Concat(data[:at["decoys"]], decoysBytes([][]byte{{0x6a, 0x01}}))
	if _, err := decode(resum(append(opReturn, 0, 0, 0, 0)), params.Name); err == nil {
		t.Error("an OP_RETURN decoy in a file accepted")
	}
	// The bound.
	full, _, err := Open(t.TempDir(), params)
	if err != nil {
		t.Fatal(err)
	}
	for i := range MaxDecoys {
		if err := full.AddDecoy(p2wpkh(1000 + i)); err != nil {
			t.Fatalf("decoy %d: %v", i, err)
		}
	}
	if err := full.AddDecoy(p2wpkh(1000 + MaxDecoys)); !errors.Is(err, ErrFull) {
		t.Errorf("a decoy beyond MaxDecoys: %v, want ErrFull", err)
	}
	if got := len(full.c.encode()); got != full.size {
		t.Errorf("size kept as %d, encodes to %d", full.size, got)
	}
}

// TestRidersKept: an entry's riders survive a save and an open; a file
// of version 4, before they were kept, reads with none known (Read 0,
// RidersPer not ok), its other fields whole; riders counted in no
// appearance are refused, by Add and in a file.
func TestRidersKept(t *testing.T) {
	s, dir := filled(t, 3, 2)
	again, _, err := Open(dir, params)
	if err != nil {
		t.Fatal(err)
	}
	same(t, s, again)
	c := again.Covers()[2]
	if r, ok := c.Profile.RidersPer(); !ok || c.Profile.Read != 2 || r != 4 {
		t.Errorf("cover 2: riders %d over %d (%v, %v), want 8 over 2", c.Profile.Riders, c.Profile.Read, r, ok)
	}
	if _, ok := again.Covers()[0].Profile.RidersPer(); ok {
		t.Error("cover 0, of no appearance read, has riders per appearance")
	}
	// The set as version 4 wrote it: each entry without its riders.
	c4 := s.c
	v4 := append([]byte("SPVFCOV\x04"), entriesV4(c4)...)
	v4 = append(v4, exploreBytes(c4.explore)...)
	v4 = binary.AppendUvarint(v4, uint64(len(c4.refuted)))
	for _, k := range c4.refuted {
		v4 = append(v4, k[:]...)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), resum(append(v4, 0, 0, 0, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	old, notes, err := Open(dir, params)
	if err != nil || len(notes) > 0 {
		t.Fatalf("a version 4 file: %v, notes %q", err, notes)
	}
	if len(old.Covers()) != 3 || len(old.Reserve()) != 2 || old.Explore() != fileExplore || !old.Refuted(fileRefuted[0]) {
		t.Errorf("a version 4 file read as %d covers, %d in reserve, explore %+v", len(old.Covers()), len(old.Reserve()), old.Explore())
	}
	for i, c := range slices.Concat(old.Covers(), old.Reserve()) {
		want := entry(i).Profile
		want.Riders, want.Read = 0, 0
		if !bytes.Equal(c.Script, entry(i).Script) || c.Profile != want {
			t.Errorf("entry %d of a version 4 file read as %+v, want %+v", i, c.Profile, want)
		}
	}
	// Saved again, it is written in the current version and reads back.
	if err := old.Save(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, FileName)); err != nil || data[len(magic)-1] != version {
		t.Fatalf("a version 4 file saved again: version %d, %v", data[len(magic)-1], err)
	}
	bad := entry(1)
	bad.Profile.Read, bad.Profile.Riders = 0, 5
	if err := s.Add(bad); err == nil {
		t.Error("riders counted in no appearance added")
	}
	// The same in a file: cover 0's riders (0 over 0) made 1 over 0.
	data, at := good(t)
	end := at["cover script"] - 1 + entry(0).entrySize() - 1 // cover 0's last byte: Read
	if data[end-1] != 0 || data[end] != 0 {
		t.Fatalf("cover 0's riders are not 0 over 0: % x", data[end-1:end+1])
	}
	data = slices.Clone(data)
	data[end-1] = 1
	if _, err := decode(resum(data), params.Name); err == nil || !strings.Contains(err.Error(), "riders counted in no appearance") {
		t.Errorf("a file with riders over no appearance: %v", err)
	}
}

// entriesV4 is c's fields from the network to the reserve as files of
// versions 1 to 4 wrote them: entries without their riders.
func entriesV4(c *contents) []byte {
	b := binary.AppendUvarint(nil, uint64(len(c.network)))
	b = append(b, c.network...)
	b = append(b, c.seed[:]...)
	b = binary.AppendUvarint(b, uint64(len(c.chance)))
	for k := 1; k <= MaxClass; k++ {
		if x, ok := c.chance[k]; ok {
			b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(k)), x)
		}
	}
	for _, list := range [][]Cover{c.covers, c.reserve} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, e := range list {
			full := e.append(nil)
			riders := binary.AppendUvarint(binary.AppendUvarint(nil, uint64(e.Profile.Riders)), uint64(e.Profile.Read))
			b = append(b, full[:len(full)-len(riders)]...)
		}
	}
	return b
}
