package privacy

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// ErrBadCapture reports a malformed capture file.
var ErrBadCapture = errors.New("privacy: bad capture")

// maxCaptureLine bounds one capture line: a 36,000-byte filter in hex plus
// the other fields.
const maxCaptureLine = 2*bip37.MaxFilterSize + 4096

// Capture record commands.
const (
	CmdVersion     = "version"
	CmdFilterLoad  = "filterload"
	CmdFilterAdd   = "filteradd"
	CmdFilterClear = "filterclear"
)

// CaptureRecord is one line of a capture file: a message a client sent.
type CaptureRecord struct {
	Time    time.Time `json:"time"`
	Client  string    `json:"client"`
	Command string    `json:"command"`
	// filterload
	Filter    string `json:"filter,omitempty"` // hex bit array
	HashFuncs uint32 `json:"hash_funcs,omitempty"`
	Tweak     uint32 `json:"tweak,omitempty"`
	Flags     uint8  `json:"flags,omitempty"`
	// filteradd
	Data string `json:"data,omitempty"` // hex element
	// version
	UserAgent       string `json:"user_agent,omitempty"`
	ProtocolVersion int32  `json:"protocol_version,omitempty"`
	Relay           *bool  `json:"relay,omitempty"`
}

// NewFilterLoadRecord describes a filterload message.
func NewFilterLoadRecord(t time.Time, client string, m *wire.MsgFilterLoad) CaptureRecord {
	return CaptureRecord{Time: t.UTC(), Client: client, Command: CmdFilterLoad,
		Filter: hex.EncodeToString(m.Filter), HashFuncs: m.HashFuncs, Tweak: m.Tweak, Flags: uint8(m.Flags)}
}

// CapturedFilter is a filter a client loaded, with the elements it added
// with filteradd afterwards (each of which the node sees in the clear).
type CapturedFilter struct {
	Client string        `json:"client"`
	Time   time.Time     `json:"time"`
	Record int           `json:"record"` // 1-based index among the records
	Filter *bip37.Filter `json:"-"`
	Added  []string      `json:"added,omitempty"`
	// Cleared is true if the client sent filterclear after it.
	Cleared bool `json:"cleared,omitempty"`
}

// ReadCapture reads a capture file, one JSON record per line (blank lines
// are skipped), and returns its records. Errors name the line.
func ReadCapture(r io.Reader) ([]CaptureRecord, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []CaptureRecord
	for line := 1; ; line++ {
		text, err := readLimitedLine(br, maxCaptureLine)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("capture line %d: %w", line, err)
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		rec, err := ParseCaptureRecord(text)
		if err != nil {
			return nil, fmt.Errorf("capture line %d: %w", line, err)
		}
		out = append(out, rec)
	}
}

// readLimitedLine returns the next line without its newline, or io.EOF at
// the end; a line longer than limit is an error, and is never held whole.
func readLimitedLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrBadCapture, limit)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// ParseCaptureRecord parses and checks one capture line.
func ParseCaptureRecord(text []byte) (CaptureRecord, error) {
	var rec CaptureRecord
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("%w: %v", ErrBadCapture, err)
	}
	if dec.More() {
		return rec, fmt.Errorf("%w: more than one JSON value on the line", ErrBadCapture)
	}
	switch rec.Command {
	case CmdFilterLoad:
		if _, err := rec.LoadedFilter(); err != nil {
			return rec, err
		}
	case CmdFilterAdd:
		b, err := hex.DecodeString(rec.Data)
		if err != nil {
			return rec, fmt.Errorf("%w: filteradd data: %v", ErrBadCapture, err)
		}
		if err := bip37.ValidateFilterAdd(b); err != nil {
			return rec, fmt.Errorf("%w: %w", ErrBadCapture, err)
		}
	case CmdFilterClear, CmdVersion:
	default:
		return rec, fmt.Errorf("%w: unknown command %q", ErrBadCapture, rec.Command)
	}
	return rec, nil
}

// LoadedFilter returns the filter of a filterload record.
func (rec *CaptureRecord) LoadedFilter() (*bip37.Filter, error) {
	if rec.Command != CmdFilterLoad {
		return nil, fmt.Errorf("%w: %s record has no filter", ErrBadCapture, rec.Command)
	}
	if len(rec.Filter) > 2*bip37.MaxFilterSize {
		return nil, fmt.Errorf("%w: filter: %w", ErrBadCapture, bip37.ErrFilterTooLarge)
	}
	bits, err := hex.DecodeString(rec.Filter)
	if err != nil {
		return nil, fmt.Errorf("%w: filter: %v", ErrBadCapture, err)
	}
	f, err := bip37.NewFilterFromParams(bits, rec.HashFuncs, rec.Tweak, wire.BloomUpdateType(rec.Flags))
	if err != nil {
		return nil, fmt.Errorf("%w: filter: %w", ErrBadCapture, err)
	}
	return f, nil
}

// CapturedFilters replays the records: every filterload starts a filter of
// its client, every filteradd inserts into the client's current filter,
// filterclear ends it.
func CapturedFilters(records []CaptureRecord) ([]*CapturedFilter, error) {
	var out []*CapturedFilter
	current := map[string]*CapturedFilter{}
	for i := range records {
		rec := &records[i]
		switch rec.Command {
		case CmdFilterLoad:
			f, err := rec.LoadedFilter()
			if err != nil {
				return nil, fmt.Errorf("record %d: %w", i+1, err)
			}
			cf := &CapturedFilter{Client: rec.Client, Time: rec.Time, Record: i + 1, Filter: f}
			current[rec.Client] = cf
			out = append(out, cf)
		case CmdFilterAdd:
			cf := current[rec.Client]
			if cf == nil {
				continue // Core disconnects such a client; nothing to analyze
			}
			b, err := hex.DecodeString(rec.Data)
			if err != nil {
				return nil, fmt.Errorf("record %d: %w: %v", i+1, ErrBadCapture, err)
			}
			cf.Filter.Add(b)
			cf.Added = append(cf.Added, rec.Data)
		case CmdFilterClear:
			if cf := current[rec.Client]; cf != nil {
				cf.Cleared = true
				delete(current, rec.Client)
			}
		}
	}
	return out, nil
}
