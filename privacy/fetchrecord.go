package privacy

import (
	"encoding/binary"
	"fmt"
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
func (rec *CaptureRecord) checkFetch() error {
	switch rec.Command {
	case CmdGetData:
		if len(rec.Blocks) == 0 {
			return fmt.Errorf("%w: getdata record without blocks", ErrBadCapture)
		}
		if rec.FilterType != nil || rec.StartHeight != nil || rec.StopHash != "" {
			return fmt.Errorf("%w: getdata record with range fields", ErrBadCapture)
		}
		for i, b := range rec.Blocks {
			if _, err := chainhash.NewHashFromStr(b.Hash); err != nil || len(b.Hash) != 2*chainhash.HashSize {
				return fmt.Errorf("%w: getdata block %d: hash %q is not 64 hex digits", ErrBadCapture, i+1, b.Hash)
			}
			if !validBlockType(b.Type) {
				return fmt.Errorf("%w: getdata block %d: unknown type %q", ErrBadCapture, i+1, b.Type)
			}
		}
	default:
		if rec.FilterType == nil || rec.StartHeight == nil {
			return fmt.Errorf("%w: %s record without filter_type and start_height", ErrBadCapture, rec.Command)
		}
		if len(rec.Blocks) != 0 {
			return fmt.Errorf("%w: %s record with blocks", ErrBadCapture, rec.Command)
		}
		if _, err := chainhash.NewHashFromStr(rec.StopHash); err != nil || len(rec.StopHash) != 2*chainhash.HashSize {
			return fmt.Errorf("%w: %s stop_hash %q is not 64 hex digits", ErrBadCapture, rec.Command, rec.StopHash)
		}
	}
	return nil
}

// getDataRecords turns a getdata payload into records of its block items,
// at most maxBlocksPerRecord each; a getdata without block items gives
// none. The item count must match the payload's length exactly, so nothing
// is allocated for items that are not there.
func getDataRecords(payload []byte, who, session string, now time.Time) ([]CaptureRecord, error) {
	count, n := readCompactSize(payload)
	if n == 0 {
		return nil, fmt.Errorf("getdata: truncated item count")
	}
	rest := payload[n:]
	if count > wire.MaxInvPerMsg || uint64(len(rest)) != count*invItemSize {
		return nil, fmt.Errorf("getdata: %d items announced in %d bytes", count, len(rest))
	}
	var out []CaptureRecord
	var blocks []BlockRequest
	flush := func() {
		if len(blocks) > 0 {
			out = append(out, CaptureRecord{Time: now, Client: who, Session: session, Command: CmdGetData, Blocks: blocks})
			blocks = nil
		}
	}
	for ; len(rest) > 0; rest = rest[invItemSize:] {
		name, ok := blockInvTypes[wire.InvType(binary.LittleEndian.Uint32(rest))]
		if !ok {
			continue
		}
		var h chainhash.Hash
		copy(h[:], rest[4:invItemSize])
		blocks = append(blocks, BlockRequest{Hash: h.String(), Type: name})
		if len(blocks) == maxBlocksPerRecord {
			flush()
		}
	}
	flush()
	return out, nil
}

// rangeRecord turns a getcfilters or getcfheaders payload (filter type,
// start height, stop hash: 37 bytes) into a record.
func rangeRecord(cmd string, payload []byte, who, session string, now time.Time) (CaptureRecord, error) {
	if len(payload) != 1+4+chainhash.HashSize {
		return CaptureRecord{}, fmt.Errorf("%s: payload of %d bytes, want 37", cmd, len(payload))
	}
	ft := payload[0]
	start := binary.LittleEndian.Uint32(payload[1:5])
	var stop chainhash.Hash
	copy(stop[:], payload[5:])
	return CaptureRecord{Time: now, Client: who, Session: session, Command: cmd,
		FilterType: &ft, StartHeight: &start, StopHash: stop.String()}, nil
}

// fetchRecords records a client's block and filter-range requests:
// getdata (its block items), getcfilters and getcfheaders. Other commands
// give no record.
func fetchRecords(cmd string, payload []byte, who, session string, now time.Time) ([]CaptureRecord, error) {
	now = now.UTC()
	switch cmd {
	case wire.CmdGetData:
		return getDataRecords(payload, who, session, now)
	case wire.CmdGetCFilters, wire.CmdGetCFHeaders:
		rec, err := rangeRecord(cmd, payload, who, session, now)
		if err != nil {
			return nil, err
		}
		return []CaptureRecord{rec}, nil
	}
	return nil, nil
}

// readCompactSize decodes a Bitcoin CompactSize integer; n is 0 if b is
// too short.
func readCompactSize(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] {
	case 0xfd:
		if len(b) < 3 {
			return 0, 0
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case 0xfe:
		if len(b) < 5 {
			return 0, 0
		}
		return uint64(binary.LittleEndian.Uint32(b[1:])), 5
	case 0xff:
		if len(b) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(b[1:]), 9
	}
	return uint64(b[0]), 1
}
