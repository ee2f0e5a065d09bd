package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// encodeLog returns the data and sum files of a record log holding recs.
func encodeLog(recs [][]byte) (data, sums []byte) {
	for i, r := range recs {
		data = append(data, r...)
		sums = binary.LittleEndian.AppendUint32(sums, recordSum(int64(i), r))
	}
	return data, sums
}

func FuzzScanRecords(f *testing.F) {
	var recs [][]byte
	for _, h := range mineChain(3, 0) {
		rec := make([]byte, HeaderSize)
		encodeHeader(rec, &h)
		recs = append(recs, rec)
	}
	data, sums := encodeLog(recs)
	f.Add(data, sums)
	f.Add(data[:len(data)-5], sums)
	f.Add(data, sums[:len(sums)-1])
	flipped := bytes.Clone(data)
	flipped[100] ^= 1
	f.Add(flipped, sums)
	f.Add([]byte{}, []byte{})
	f.Add(append(bytes.Clone(data), make([]byte, HeaderSize)...), sums)
	f.Fuzz(func(t *testing.T, data, sums []byte) {
		n, err := scanRecords(bytes.NewReader(data), bytes.NewReader(sums), HeaderSize, func(i int64, rec []byte) error {
			// Every record that passes its checksum decodes, and
			// encodes back to the same bytes.
			h := decodeHeader(rec)
			var again [HeaderSize]byte
			encodeHeader(again[:], &h)
			if !bytes.Equal(again[:], rec) {
				t.Fatalf("record %d: decoding and encoding changed it", i)
			}
			return nil
		})
		if n*HeaderSize > int64(len(data)) || n*sumSize > int64(len(sums)) {
			t.Fatalf("%d records accepted from %d data and %d checksum bytes", n, len(data), len(sums))
		}
		for i := int64(0); i < n; i++ {
			rec := data[i*HeaderSize : (i+1)*HeaderSize]
			if recordSum(i, rec) != binary.LittleEndian.Uint32(sums[i*sumSize:]) {
				t.Fatalf("record %d accepted with a wrong checksum", i)
			}
		}
		clean := int64(len(data)) == n*HeaderSize && int64(len(sums)) == n*sumSize
		if (err == nil) != clean {
			t.Fatalf("error %v for %d records of %d data and %d checksum bytes", err, n, len(data), len(sums))
		}
		if err != nil && !errors.Is(err, errBadRecord) {
			t.Fatalf("error %v does not wrap errBadRecord", err)
		}
	})
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(1, fakeFilter(1)))
	f.Add(encodeEntry(0, nil))
	f.Add([]byte{1, 2, 3})
	f.Add(encodeEntry(5, make([]byte, 1000))[:500])
	f.Fuzz(func(t *testing.T, v []byte) {
		e, err := decodeEntry(v)
		if err != nil {
			if !errors.Is(err, errBadEntry) {
				t.Fatalf("error %v does not wrap errBadEntry", err)
			}
			return
		}
		if chainhash.DoubleHashH(e.filter) != e.filterHash || !bytes.Equal(encodeEntry(e.seq, e.filter), v) {
			t.Fatal("accepted entry does not encode back to itself")
		}
	})
}

// FuzzOpenHeaders opens a header file holding the fuzzer's bytes, with
// checksums that match them, so that what decides is the header checks:
// the genesis block first, each header linking to the one before and
// meeting its own target. What the store keeps must pass them all.
func FuzzOpenHeaders(f *testing.F) {
	var good []byte
	for _, h := range mineChain(4, 0) {
		rec := make([]byte, HeaderSize)
		encodeHeader(rec, &h)
		good = append(good, rec...)
	}
	f.Add(good)
	f.Add(good[:3*HeaderSize+10])
	broken := bytes.Clone(good)
	broken[2*HeaderSize+5] ^= 1 // the link of header 2
	f.Add(broken)
	f.Add(good[HeaderSize:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs [][]byte
		for i := 0; i+HeaderSize <= len(data); i += HeaderSize {
			recs = append(recs, data[i:i+HeaderSize])
		}
		_, sums := encodeLog(recs)
		dir := t.TempDir()
		path := dir + "/" + HeadersFile
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".sum", sums, 0o644); err != nil {
			t.Fatal(err)
		}
		hl, _, err := openHeaderLog(path, regtest, false, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		defer hl.log.close()
		kept := int(hl.height()) + 1
		if kept > 1 && kept > len(recs) {
			t.Fatalf("%d headers kept of %d", kept, len(recs))
		}
		genesis := regtest.GenesisBlock.Header.BlockHash()
		prev := chainhash.Hash{}
		for h := 0; h < kept; h++ {
			slot, err := hl.lookup(int32(h))
			if err != nil {
				t.Fatal(err)
			}
			hdr := decodeHeader(slot.rec[:])
			if h == 0 && slot.hash != genesis || h > 0 && hdr.PrevBlock != prev {
				t.Fatalf("kept header %d does not belong to the chain", h)
			}
			if h < len(recs) && !bytes.Equal(slot.rec[:], recs[h]) && !(h == 0 && kept == 1) {
				t.Fatalf("kept header %d differs from the file", h)
			}
			prev = slot.hash
		}
	})
}
