package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

func TestFetchRecordsFromWire(t *testing.T) {
	gd := wire.NewMsgGetData()
	var hashes []chainhash.Hash
	for i := 0; i < 1203; i++ {
		h := blockHash(int32(i))
		hashes = append(hashes, h)
		typ := wire.InvTypeWitnessBlock
		if i%3 == 1 {
			typ = wire.InvTypeFilteredBlock
		}
		gd.AddInvVect(wire.NewInvVect(typ, &hashes[i]))
		gd.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &hashes[i])) // not a block: left out
	}
	var buf bytes.Buffer
	if err := gd.BtcEncode(&buf, wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		t.Fatal(err)
	}
	recs, err := fetchRecords(wire.CmdGetData, buf.Bytes(), "127.0.0.1:1", "s-1", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || len(recs[0].Blocks) != maxBlocksPerRecord || len(recs[2].Blocks) != 1203-2*maxBlocksPerRecord {
		t.Fatalf("%d records", len(recs))
	}
	var lines bytes.Buffer
	stop := blockHash(7)
	cf := wire.NewMsgGetCFilters(wire.GCSFilterRegular, 3, &stop)
	buf.Reset()
	cf.BtcEncode(&buf, wire.ProtocolVersion, wire.BaseEncoding)
	rr, err := fetchRecords(wire.CmdGetCFilters, buf.Bytes(), "127.0.0.1:1", "s-1", time.Unix(0, 0))
	if err != nil || len(rr) != 1 {
		t.Fatalf("getcfilters: %v %v", rr, err)
	}
	for _, r := range append(recs, rr...) {
		b, _ := json.Marshal(r)
		lines.Write(append(b, '\n'))
	}
	// A filterload record of the old form stays readable beside them.
	lines.WriteString(`{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:2","command":"filterload","filter":"ff01","hash_funcs":3,"tweak":9,"flags":1}` + "\n")
	back, err := Read(&lines)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := FetchSessions(back)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v", sessions, err)
	}
	s := sessions[0]
	if !slices.Equal(s.Blocks, hashes) {
		t.Fatalf("%d blocks read back, want the %d requested in order", len(s.Blocks), len(hashes))
	}
	if len(s.Ranges) != 1 || s.Ranges[0].StartHeight != 3 || s.Ranges[0].StopHash != stop || s.Ranges[0].Command != CmdGetCFilters {
		t.Fatalf("ranges %+v", s.Ranges)
	}
	// A getdata whose count exceeds its items is refused, not allocated.
	if _, err := fetchRecords(wire.CmdGetData, []byte{0xfe, 0x50, 0xc3, 0, 0}, "c", "s", time.Now()); err == nil {
		t.Error("getdata announcing 50000 items in 0 bytes accepted")
	}
	// So is one whose count is not in its shortest form, as a node
	// refuses it.
	longCount := append([]byte{0xfd, 1, 0}, make([]byte, invItemSize)...)
	if _, err := fetchRecords(wire.CmdGetData, longCount, "c", "s", time.Now()); err == nil {
		t.Error("getdata with a non-canonical item count accepted")
	}
	if recs, err := fetchRecords(wire.CmdGetData, append([]byte{1}, longCount[3:]...), "c", "s", time.Now()); err != nil || len(recs) != 0 {
		t.Errorf("getdata of one item that is not a block: %v, %v", recs, err)
	}
}

func TestParseFetchRecordRejects(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for _, line := range []string{
		`{"client":"c","command":"getdata"}`,
		`{"client":"c","command":"getdata","blocks":[{"hash":"zz","type":"block"}]}`,
		`{"client":"c","command":"getdata","blocks":[{"hash":"` + h + `","type":"tx"}]}`,
		`{"client":"c","command":"getdata","blocks":[{"hash":"` + h + `","type":"block"}],"stop_hash":"` + h + `"}`,
		`{"client":"c","command":"getcfilters","start_height":1,"stop_hash":"` + h + `"}`,
		`{"client":"c","command":"getcfilters","filter_type":0,"stop_hash":"` + h + `"}`,
		`{"client":"c","command":"getcfheaders","filter_type":0,"start_height":1,"stop_hash":"ab"}`,
		`{"client":"c","command":"getcfheaders","filter_type":0,"start_height":1,"stop_hash":"` + h + `","blocks":[{"hash":"` + h + `","type":"block"}]}`,
	} {
		if _, err := parseRecord([]byte(line)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s: %v, want ErrBadRecord", line, err)
		}
	}
	ok := `{"client":"c","command":"getcfheaders","filter_type":0,"start_height":0,"stop_hash":"` + h + `"}`
	if _, err := parseRecord([]byte(ok)); err != nil {
		t.Errorf("%s: %v", ok, err)
	}
}

func blockHash(h int32) chainhash.Hash {
	return chainhash.DoubleHashH([]byte(fmt.Sprintf("block %d", h)))
}
