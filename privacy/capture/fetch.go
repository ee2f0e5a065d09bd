package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// maxBlocksPerRecord bounds the block items of one getdata record, so that
// a getdata of 50,000 items becomes records that each fit a capture line.
const maxBlocksPerRecord = 500

// invItemSize is one inventory vector on the wire: a 4-byte type and a hash.
const invItemSize = 4 + chainhash.HashSize

// BlockRequest is one block a client asked for in a getdata message.
type BlockRequest struct {
	// Hash is the block hash in display byte order.
	Hash string `json:"hash"`
	// Type is "block", "witness_block", "filtered_block" or
	// "filtered_witness_block".
	Type string `json:"type"`
}

// blockInvTypes names the inventory types that ask for a block.
var blockInvTypes = map[wire.InvType]string{
	wire.InvTypeBlock:                "block",
	wire.InvTypeWitnessBlock:         "witness_block",
	wire.InvTypeFilteredBlock:        "filtered_block",
	wire.InvTypeFilteredWitnessBlock: "filtered_witness_block",
}

func validBlockType(name string) bool {
	for _, n := range blockInvTypes {
		if n == name {
			return true
		}
	}
	return false
}

// checkFetch checks a getdata, getcfilters or getcfheaders record.
func (rec *Record) checkFetch() error {
	switch rec.Command {
	case CmdGetData:
		if len(rec.Blocks) == 0 {
			return badField("blocks", "getdata record without blocks")
		}
		if rec.FilterType != nil || rec.StartHeight != nil || rec.StopHash != "" {
			return badField(rangeField(rec), "getdata record with range fields")
		}
		for i, b := range rec.Blocks {
			if _, err := chainhash.NewHashFromStr(b.Hash); err != nil || len(b.Hash) != 2*chainhash.HashSize {
				return badField("blocks", "getdata block %d: hash %q is not 64 hex digits", i+1, b.Hash)
			}
			if !validBlockType(b.Type) {
				return badField("blocks", "getdata block %d: unknown type %q", i+1, b.Type)
			}
		}
	default:
		if rec.FilterType == nil || rec.StartHeight == nil {
			return badField(missingRangeField(rec), "%s record without filter_type and start_height", rec.Command)
		}
		if len(rec.Blocks) != 0 {
			return badField("blocks", "%s record with blocks", rec.Command)
		}
		if _, err := chainhash.NewHashFromStr(rec.StopHash); err != nil || len(rec.StopHash) != 2*chainhash.HashSize {
			return badField("stop_hash", "%s stop_hash %q is not 64 hex digits", rec.Command, rec.StopHash)
		}
	}
	return nil
}

// rangeField is the first range field a getdata record has.
func rangeField(rec *Record) string {
	switch {
	case rec.FilterType != nil:
		return "filter_type"
	case rec.StartHeight != nil:
		return "start_height"
	}
	return "stop_hash"
}

// missingRangeField is the first of filter_type and start_height a range
// record lacks.
func missingRangeField(rec *Record) string {
	if rec.FilterType == nil {
		return "filter_type"
	}
	return "start_height"
}

// getDataRecords turns a getdata payload into records of its block items,
// at most maxBlocksPerRecord each; a getdata without block items gives
// none. The item count must be canonical and match the payload's length
// exactly, so nothing is allocated for items that are not there.
func getDataRecords(payload []byte, who, session string, now time.Time) ([]Record, error) {
	r := bytes.NewReader(payload)
	count, err := wire.ReadVarInt(r, wire.ProtocolVersion)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("getdata: truncated item count")
	}
	if err != nil {
		return nil, fmt.Errorf("getdata: item count: %w", err)
	}
	if count > wire.MaxInvPerMsg || uint64(r.Len()) != count*invItemSize {
		return nil, fmt.Errorf("getdata: %d items announced in %d bytes", count, r.Len())
	}
	var m wire.MsgGetData
	if err := m.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		return nil, fmt.Errorf("getdata: %w", err)
	}
	var blocks []BlockRequest
	for _, iv := range m.InvList {
		if name, ok := blockInvTypes[iv.Type]; ok {
			blocks = append(blocks, BlockRequest{Hash: iv.Hash.String(), Type: name})
		}
	}
	var out []Record
	for part := range slices.Chunk(blocks, maxBlocksPerRecord) {
		out = append(out, Record{Time: now, Client: who, Session: session, Command: CmdGetData, Blocks: part})
	}
	return out, nil
}

// rangeRecord turns a getcfilters or getcfheaders payload (filter type,
// start height, stop hash: 37 bytes exactly) into a record.
func rangeRecord(cmd string, payload []byte, who, session string, now time.Time) (Record, error) {
	if len(payload) != 1+4+chainhash.HashSize {
		return Record{}, fmt.Errorf("%s: payload of %d bytes, want 37", cmd, len(payload))
	}
	// getcfilters and getcfheaders carry the same three fields.
	var m wire.MsgGetCFilters
	if err := m.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		return Record{}, fmt.Errorf("%s: %w", cmd, err)
	}
	ft, start := uint8(m.FilterType), m.StartHeight
	return Record{Time: now, Client: who, Session: session, Command: cmd,
		FilterType: &ft, StartHeight: &start, StopHash: m.StopHash.String()}, nil
}

// fetchRecords records a client's block and filter-range requests:
// getdata (its block items), getcfilters and getcfheaders. Other commands
// give no record.
func fetchRecords(cmd string, payload []byte, who, session string, now time.Time) ([]Record, error) {
	now = now.UTC()
	switch cmd {
	case wire.CmdGetData:
		return getDataRecords(payload, who, session, now)
	case wire.CmdGetCFilters, wire.CmdGetCFHeaders:
		rec, err := rangeRecord(cmd, payload, who, session, now)
		if err != nil {
			return nil, err
		}
		return []Record{rec}, nil
	}
	return nil, nil
}

// FilterRange is a BIP 157 range request: the filters (or filter headers)
// of the blocks from StartHeight to the block StopHash.
type FilterRange struct {
	Command     string         `json:"command"`
	StartHeight uint32         `json:"start_height"`
	StopHash    chainhash.Hash `json:"-"`
}

// FetchSession is one client connection's block and filter requests.
type FetchSession struct {
	ID        string `json:"session"`
	Client    string `json:"client"`
	UserAgent string `json:"user_agent,omitempty"`
	// Blocks are the distinct blocks requested, in the order of their
	// first request.
	Blocks []chainhash.Hash `json:"-"`
	Ranges []FilterRange    `json:"-"`
}

// FetchSessions groups the block requests and filter ranges of the
// records by connection, in the order of each connection's first such
// record. Connections that requested neither are left out.
func FetchSessions(records []Record) ([]*FetchSession, error) {
	var out []*FetchSession
	index := map[string]*FetchSession{}
	seen := map[string]map[chainhash.Hash]struct{}{}
	agents := map[string]string{}
	for i := range records {
		rec := &records[i]
		key := rec.sessionKey()
		if rec.Command == CmdVersion {
			agents[key] = rec.UserAgent
			continue
		}
		if rec.Command != CmdGetData && rec.Command != CmdGetCFilters && rec.Command != CmdGetCFHeaders {
			continue
		}
		s := index[key]
		if s == nil {
			s = &FetchSession{ID: key, Client: rec.Client, UserAgent: agents[key]}
			index[key] = s
			seen[key] = map[chainhash.Hash]struct{}{}
			out = append(out, s)
		}
		if rec.Command == CmdGetData {
			for _, b := range rec.Blocks {
				h, err := chainhash.NewHashFromStr(b.Hash)
				if err != nil {
					return nil, fmt.Errorf("record %d: %w: %w", i+1, ErrBadRecord, err)
				}
				if _, dup := seen[key][*h]; !dup {
					seen[key][*h] = struct{}{}
					s.Blocks = append(s.Blocks, *h)
				}
			}
			continue
		}
		stop, err := chainhash.NewHashFromStr(rec.StopHash)
		if err != nil || rec.StartHeight == nil {
			return nil, fmt.Errorf("record %d: %w: %s without a valid range", i+1, ErrBadRecord, rec.Command)
		}
		s.Ranges = append(s.Ranges, FilterRange{Command: rec.Command, StartHeight: *rec.StartHeight, StopHash: *stop})
	}
	return out, nil
}
