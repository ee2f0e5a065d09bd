package privacy

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// FuzzReadCaptureFetches feeds capture files with block and filter-range
// records to the reader and the grouping: errors, never panics, and every
// accepted block hash reads back.
func FuzzReadCaptureFetches(f *testing.F) {
	h := strings.Repeat("0f", 32)
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","client":"127.0.0.1:1","session":"s-1","command":"getdata","blocks":[{"hash":"` + h + `","type":"witness_block"}]}` + "\n"))
	f.Add([]byte(`{"client":"c","session":"s","command":"getcfilters","filter_type":0,"start_height":0,"stop_hash":"` + h + `"}` + "\n" +
		`{"client":"c","session":"s","command":"getcfheaders","filter_type":0,"start_height":2000,"stop_hash":"` + h + `"}`))
	f.Add([]byte(`{"client":"c","command":"getdata","blocks":[{"hash":"` + h + `","type":"filtered_block"},{"hash":"` + h + `","type":"block"}]}`))
	f.Add([]byte(`{"client":"c","command":"getdata","blocks":[]}`))
	f.Add([]byte(`{"client":"c","command":"getcfilters","filter_type":0,"stop_hash":"` + h + `"}`))
	f.Add([]byte(`{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:2","command":"filterload","filter":"ff01","hash_funcs":3,"tweak":9,"flags":1}` + "\n" +
		`{"client":"127.0.0.1:2","command":"getdata","blocks":[{"hash":"` + h + `","type":"filtered_block"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadCapture(bytes.NewReader(data))
		if err != nil {
			return
		}
		sessions, err := CaptureFetchSessions(recs)
		if err != nil {
			t.Fatalf("records accepted by ReadCapture fail to group: %v", err)
		}
		blocks := 0
		for _, rec := range recs {
			blocks += len(rec.Blocks)
		}
		n := 0
		for _, s := range sessions {
			n += len(s.Blocks)
		}
		if n > blocks {
			t.Fatalf("%d distinct blocks from %d requested", n, blocks)
		}
		if _, err := CapturedFilters(recs); err != nil {
			t.Fatalf("records accepted by ReadCapture fail to replay: %v", err)
		}
	})
}

// FuzzFetchRecords feeds arbitrary getdata, getcfilters and getcfheaders
// payloads to the relay's recorder: what it records must parse back.
func FuzzFetchRecords(f *testing.F) {
	gd := wire.NewMsgGetData()
	bh := blockHash(1)
	gd.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, &bh))
	gd.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &bh))
	var b bytes.Buffer
	gd.BtcEncode(&b, wire.ProtocolVersion, wire.WitnessEncoding)
	f.Add(wire.CmdGetData, b.Bytes())
	b.Reset()
	wire.NewMsgGetCFilters(wire.GCSFilterRegular, 5, &bh).BtcEncode(&b, wire.ProtocolVersion, wire.BaseEncoding)
	f.Add(wire.CmdGetCFilters, b.Bytes())
	f.Add(wire.CmdGetCFHeaders, b.Bytes()[:20])
	f.Add(wire.CmdGetData, []byte{0xff, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, cmd string, payload []byte) {
		recs, err := fetchRecords(cmd, payload, "127.0.0.1:1", "s", time.Unix(0, 0))
		if err != nil {
			return
		}
		for _, rec := range recs {
			line, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(line) > maxCaptureLine {
				t.Fatalf("record of %d bytes exceeds a capture line", len(line))
			}
			if _, err := ParseCaptureRecord(line); err != nil {
				t.Fatalf("recorded %s does not parse back: %v", line, err)
			}
		}
	})
}

// FuzzIndexReader feeds arbitrary bytes to the index reader: errors,
// never panics, and entries come in increasing order within the range.
func FuzzIndexReader(f *testing.F) {
	ix := NewIndexWriter(f.TempDir(), 0)
	ix.Add("mipkm7Am1Y9NgzRVm1oFChJLCg8bHJ3ESw", 3)
	ix.Add("mipkm7Am1Y9NgzRVm1oFChJLCg8bHJ3ESw", 5)
	ix.Add("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", 4)
	hd := &IndexHeader{Network: "regtest", First: 3}
	for h := int32(3); h < 9; h++ {
		hd.Hashes = append(hd.Hashes, blockHash(h))
	}
	var good bytes.Buffer
	if _, err := ix.WriteTo(&good, hd); err != nil {
		f.Fatal(err)
	}
	ix.Close()
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:len(good.Bytes())/2])
	f.Add([]byte("SPVFIDX\x01\x07regtest\x00\xff\xff\xff\xff\x0f"))
	f.Add([]byte("SPVFIDX\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ir, err := NewIndexReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		hd := ir.Header()
		prev := ""
		for i := 0; ; i++ {
			e, err := ir.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				return
			}
			if i > 0 && e.Candidate <= prev || len(e.Heights) == 0 {
				t.Fatalf("entry %q after %q, %d heights", e.Candidate, prev, len(e.Heights))
			}
			for j, h := range e.Heights {
				if h < hd.First || h > hd.Last() || j > 0 && h <= e.Heights[j-1] {
					t.Fatalf("%q: heights %v outside %d..%d or not increasing", e.Candidate, e.Heights, hd.First, hd.Last())
				}
			}
			prev = e.Candidate
		}
	})
}
