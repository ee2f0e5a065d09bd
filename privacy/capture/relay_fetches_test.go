package capture

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// TestRelayRecordsFetches sends a client's version, BIP 157 range requests
// and getdata messages through the relay: the node receives every byte
// unchanged, and the capture holds the ranges and the block items (not the
// transaction item, not the malformed getdata).
func TestRelayRecordsFetches(t *testing.T) {
	node := startFakeNode(t)
	var out syncBuffer
	r := startRelay(t, node.ln.Addr().String(), &out)
	v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 2, 0), wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1, 0), 9, 0)
	b1, b2, stop := blockHash(1), blockHash(2), blockHash(9)
	gd := wire.NewMsgGetData()
	gd.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, &b1))
	gd.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &b2))
	gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &b2))
	var sent []byte
	for _, fr := range [][]byte{
		frame(wire.TestNet, "version", encodeMsg(t, v)),
		frame(wire.TestNet, "getcfheaders", encodeMsg(t, wire.NewMsgGetCFHeaders(wire.GCSFilterRegular, 0, &stop))),
		frame(wire.TestNet, "getcfilters", encodeMsg(t, wire.NewMsgGetCFilters(wire.GCSFilterRegular, 1, &stop))),
		frame(wire.TestNet, "getdata", encodeMsg(t, gd)),
		frame(wire.TestNet, "getdata", []byte{5, 1, 2, 3}), // 5 items announced, 3 bytes
	} {
		sent = append(sent, fr...)
	}
	c, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(sent); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !node.receivedContains(sent) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !node.receivedContains(sent) {
		t.Fatal("upstream did not receive the client's bytes unchanged")
	}
	for strings.Count(out.String(), "\n") < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	recs, err := Read(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := FetchSessions(recs)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v (capture %s)", sessions, err, out.String())
	}
	s := sessions[0]
	if len(s.Blocks) != 2 || s.Blocks[0] != b1 || s.Blocks[1] != b2 {
		t.Errorf("blocks %v, want %v and %v", s.Blocks, b1, b2)
	}
	if len(s.Ranges) != 2 || s.Ranges[0].Command != CmdGetCFHeaders || s.Ranges[1].StartHeight != 1 || s.Ranges[1].StopHash != stop {
		t.Errorf("ranges %+v", s.Ranges)
	}
	if got := strings.Count(out.String(), `"command":"getdata"`); got != 1 {
		t.Errorf("%d getdata records, want 1:\n%s", got, out.String())
	}
	var types []string
	for _, rec := range recs {
		for _, b := range rec.Blocks {
			types = append(types, b.Type)
		}
	}
	if got := strings.Join(types, ","); got != "witness_block,filtered_block" {
		t.Errorf("block types %v", types)
	}
}
