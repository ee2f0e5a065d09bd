package cover

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen: whatever the file holds, Open does not panic; a file it
// accepts encodes back to the same bytes (Save's round trip is
// TestSaveReopen's) and keeps its size, and one it refuses is a
// *DamagedError naming it.
// Each input is tried as it is and with its checksum made right, so that
// the fuzzer reaches past the checksum. The seeds are a good file, one
// of version 4 and of version 5, each field cut and the checksum flipped (damagedFiles).
func FuzzOpen(f *testing.F) {
	data, _ := good(f)
	f.Add(data)
	// A file of version 4, before the entries' riders.
	s, _ := filled(f, 2, 1)
	v4 := append([]byte("SPVFCOV\x04"), entriesV4(s.c)...)
	v4 = append(v4, exploreBytes(s.c.explore)...)
	v4 = binary.AppendUvarint(v4, uint64(len(s.c.refuted)))
	for _, k := range s.c.refuted {
		v4 = append(v4, k[:]...)
	}
	f.Add(resum(append(v4, 0, 0, 0, 0)))
	// A file of version 5, before the decoys.
	good5, at := good(f)
	f.Add(resum(append(append([]byte("SPVFCOV\x05"), good5[len(magic):at["decoys"]]...), 0, 0, 0, 0)))
	for _, b := range damagedFiles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > MaxFileSize+1 {
			return
		}
		for _, file := range [][]byte{data, resumIfLong(data)} {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, file, 0o600); err != nil {
				t.Fatal(err)
			}
			s, _, err := OpenWith(dir, params, Options{Existing: true})
			if err != nil {
				var de *DamagedError
				if !errors.As(err, &de) || de.Path != path {
					t.Fatalf("refused without a DamagedError naming the file: %v", err)
				}
				continue
			}
			// Every field has one encoding, so a file accepted is the one
			// its set writes (in the current version).
			if got := s.c.encode(); file[len(magic)-1] == version && !bytes.Equal(got, file) {
				t.Fatalf("read %x, writes back %x", file, got)
			}
			if err := s.AddReserve(Cover{Script: []byte{0x51, 0x52}, Profile: Profile{Class: 1}}); err != nil && !errors.Is(err, ErrDuplicate) {
				t.Fatal(err)
			}
			if err := s.AddDecoy([]byte{0x51, 0x53}); err != nil && !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
			if got := len(s.c.encode()); got != s.size || got > MaxFileSize {
				t.Fatalf("size kept as %d, encodes to %d", s.size, got)
			}
		}
	})
}

// resumIfLong is data with its checksum made right, if it has one.
func resumIfLong(data []byte) []byte {
	if len(data) < 4 {
		return data
	}
	return resum(data)
}
