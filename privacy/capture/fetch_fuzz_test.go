package capture

import (
	"bytes"
	"encoding/json"
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
		recs, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		sessions, err := FetchSessions(recs)
		if err != nil {
			t.Fatalf("records accepted by Read fail to group: %v", err)
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
		if _, err := replay(recs); err != nil {
			t.Fatalf("records accepted by Read fail to replay: %v", err)
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
			if len(line) > maxLine {
				t.Fatalf("record of %d bytes exceeds a capture line", len(line))
			}
			if _, err := parseRecord(line); err != nil {
				t.Fatalf("recorded %s does not parse back: %v", line, err)
			}
		}
	})
}
