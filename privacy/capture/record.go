package capture

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// ErrBadRecord reports a malformed capture record or file.
var ErrBadRecord = errors.New("privacy: bad capture")

// LineError is a line of a capture file that Read refuses: its 1-based
// number, the record field at fault ("" when the line as a whole is: not
// JSON, too long, two values) and why. Err wraps ErrBadRecord, or the
// reader's error when the file cannot be read.
type LineError struct {
	Line  int
	Field string
	Err   error
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("capture line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("capture line %d: field %q: %v", e.Line, e.Field, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// fieldError is a record refused for one of its fields; Read names the
// field in its LineError.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// badField is a record refused for its field: ErrBadRecord with the words
// of format.
func badField(field, format string, args ...any) error {
	return &fieldError{field, fmt.Errorf("%w: "+format, append([]any{ErrBadRecord}, args...)...)}
}

// lineError is err, met on line, as a LineError naming the field at fault
// where a fieldError or the JSON decoder tells it.
func lineError(line int, err error) *LineError {
	le := &LineError{Line: line, Err: err}
	var fe *fieldError
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	switch {
	case errors.As(err, &fe):
		le.Field, le.Err = fe.field, fe.err
	case errors.As(err, &te):
		le.Field = te.Field
	case errors.As(err, &pe) || strings.Contains(err.Error(), "Time.UnmarshalJSON: "):
		le.Field = "time" // the record's one time
	default:
		// encoding/json has no type for an unknown field: its text names it.
		if _, quoted, ok := strings.Cut(err.Error(), "json: unknown field "); ok {
			if name, err := strconv.Unquote(quoted); err == nil {
				le.Field = name
			}
		}
	}
	return le
}

// maxLine bounds one capture line: a 36,000-byte filter in hex plus
// the other fields.
const maxLine = 2*bip37.MaxFilterSize + 4096

// maxFilterLoadHex bounds the hex of a filterload payload: the bit array,
// its CompactSize length (at most 3 bytes for 36,000) and 9 bytes of fields.
const maxFilterLoadHex = 2 * (bip37.MaxFilterSize + 3 + 9)

// Capture record commands.
const (
	CmdVersion     = "version"
	CmdFilterLoad  = "filterload"
	CmdFilterAdd   = "filteradd"
	CmdFilterClear = "filterclear"
	// CmdGetData records the blocks a client asked for by hash (getdata
	// of MSG_BLOCK, MSG_WITNESS_BLOCK or MSG_FILTERED_BLOCK items).
	CmdGetData = "getdata"
	// CmdGetCFilters and CmdGetCFHeaders record a BIP 157 range request:
	// its filter type, start height and stop hash.
	CmdGetCFilters  = "getcfilters"
	CmdGetCFHeaders = "getcfheaders"
)

// Record is one line of a capture file: a message a client sent.
//
// A record names its connection twice: Client is the client's address and
// port as the relay saw them, and Session is an identifier the relay gives
// each connection, unique across relay runs (two connections from one host,
// or one port reused later, stay apart). Records written before sessions
// existed lack Session; their Client then identifies the connection.
//
// A filterload record carries the message's payload in FilterLoad, the hex
// that "bloom inspect" and "analyze --filter" read. Older records carry the
// bit array in Filter with HashFuncs, Tweak and Flags beside it; both forms
// are read, never both in one record.
type Record struct {
	Time    time.Time `json:"time"`
	Client  string    `json:"client"`
	Session string    `json:"session,omitempty"`
	Command string    `json:"command"`
	// filterload
	FilterLoad string `json:"filterload,omitempty"` // hex payload
	// filterload, in records of the older form
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
	// getdata: the block items, in the message's order (other items are
	// not recorded; a message of many is split over several records)
	Blocks []BlockRequest `json:"blocks,omitempty"`
	// getcfilters, getcfheaders
	FilterType  *uint8  `json:"filter_type,omitempty"`
	StartHeight *uint32 `json:"start_height,omitempty"`
	StopHash    string  `json:"stop_hash,omitempty"`
}

// NewFilterLoadRecord describes a filterload message that the client at
// address client sent on connection session.
func NewFilterLoadRecord(t time.Time, client, session string, m *wire.MsgFilterLoad) (Record, error) {
	var b bytes.Buffer
	if err := m.BtcEncode(&b, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		return Record{}, fmt.Errorf("privacy: encoding filterload: %w", err)
	}
	return Record{Time: t.UTC(), Client: client, Session: session, Command: CmdFilterLoad,
		FilterLoad: hex.EncodeToString(b.Bytes())}, nil
}

// sessionKey is what identifies the record's connection: its Session, or
// for records without one its Client.
func (rec *Record) sessionKey() string {
	if rec.Session != "" {
		return rec.Session
	}
	return rec.Client
}

// Filter is a filter a client loaded, with the elements it added
// with filteradd afterwards (each of which the node sees in the clear).
type Filter struct {
	Client  string        `json:"client"`
	Session string        `json:"session"`
	Time    time.Time     `json:"time"`
	Record  int           `json:"record"` // 1-based index among the records
	Filter  *bip37.Filter `json:"-"`
	Added   []string      `json:"added,omitempty"`
	// Cleared is true if the client sent filterclear after it.
	Cleared bool `json:"cleared,omitempty"`
	// Grown are the records of the later filterloads of the connection
	// that this filter grew into (see Sessions): the filter is the last
	// of them, every element of the earlier ones still in it.
	Grown []int `json:"grown,omitempty"`
}

// Read reads a capture file, one JSON record per line (blank lines
// are skipped; a leading UTF-8 byte order mark is too), and returns its
// records. Its errors are *LineError.
func Read(r io.Reader) ([]Record, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte{0xef, 0xbb, 0xbf}) {
		br.Discard(3)
	}
	var out []Record
	for line := 1; ; line++ {
		text, err := readLimitedLine(br, maxLine)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, lineError(line, err)
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		rec, err := parseRecord(text)
		if err != nil {
			return nil, lineError(line, err)
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
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrBadRecord, limit)
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

// parseRecord parses and checks one capture line.
func parseRecord(text []byte) (Record, error) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	if dec.More() {
		return rec, fmt.Errorf("%w: more than one JSON value on the line", ErrBadRecord)
	}
	switch rec.Command {
	case CmdFilterLoad:
		if _, err := rec.loadedFilter(); err != nil {
			return rec, err
		}
	case CmdFilterAdd:
		b, err := hex.DecodeString(rec.Data)
		if err != nil {
			return rec, badField("data", "%w", err)
		}
		if err := bip37.ValidateFilterAdd(b); err != nil {
			return rec, badField("data", "%w", err)
		}
	case CmdGetData, CmdGetCFilters, CmdGetCFHeaders:
		if err := rec.checkFetch(); err != nil {
			return rec, err
		}
	case CmdFilterClear, CmdVersion:
	default:
		return rec, badField("command", "unknown command %q", rec.Command)
	}
	return rec, nil
}

// loadedFilter returns the filter of a filterload record, of either form.
func (rec *Record) loadedFilter() (*bip37.Filter, error) {
	if rec.Command != CmdFilterLoad {
		return nil, fmt.Errorf("%w: %s record has no filter", ErrBadRecord, rec.Command)
	}
	if rec.FilterLoad != "" {
		if rec.Filter != "" || rec.HashFuncs != 0 || rec.Tweak != 0 || rec.Flags != 0 {
			return nil, badField("filterload", "filterload record with both a payload and the older filter fields")
		}
		if len(rec.FilterLoad) > maxFilterLoadHex {
			return nil, badField("filterload", "%w", bip37.ErrFilterTooLarge)
		}
		payload, err := hex.DecodeString(rec.FilterLoad)
		if err != nil {
			return nil, badField("filterload", "%w", err)
		}
		f, err := bip37.DecodeFilterLoad(payload)
		if err != nil {
			return nil, badField("filterload", "%w", err)
		}
		return f, nil
	}
	if len(rec.Filter) > 2*bip37.MaxFilterSize {
		return nil, badField("filter", "%w", bip37.ErrFilterTooLarge)
	}
	bits, err := hex.DecodeString(rec.Filter)
	if err != nil {
		return nil, badField("filter", "%w", err)
	}
	f, err := bip37.NewFilterFromParams(bits, rec.HashFuncs, rec.Tweak, wire.BloomUpdateType(rec.Flags))
	if err != nil {
		return nil, badField("filter", "%w", err)
	}
	return f, nil
}

// replay replays the records: every filterload starts a filter of
// its connection, unless it is the connection's current filter grown
// (see grewInto), every filteradd inserts into the connection's current
// filter, filterclear ends it.
func replay(records []Record) ([]*Filter, error) {
	var out []*Filter
	current := map[string]*Filter{}
	for i := range records {
		rec := &records[i]
		key := rec.sessionKey()
		switch rec.Command {
		case CmdFilterLoad:
			f, err := rec.loadedFilter()
			if err != nil {
				return nil, fmt.Errorf("record %d: %w", i+1, err)
			}
			if cf := current[key]; cf != nil && grewInto(cf.Filter, f) {
				cf.Filter = f
				cf.Grown = append(cf.Grown, i+1)
				continue
			}
			cf := &Filter{Client: rec.Client, Session: key, Time: rec.Time, Record: i + 1, Filter: f}
			current[key] = cf
			out = append(out, cf)
		case CmdFilterAdd:
			cf := current[key]
			if cf == nil {
				continue // Core disconnects such a client; nothing to analyze
			}
			b, err := hex.DecodeString(rec.Data)
			if err != nil {
				return nil, fmt.Errorf("record %d: %w: %w", i+1, ErrBadRecord, err)
			}
			cf.Filter.Add(b)
			cf.Added = append(cf.Added, rec.Data)
		case CmdFilterClear:
			if cf := current[key]; cf != nil {
				cf.Cleared = true
				delete(current, key)
			}
		}
	}
	return out, nil
}

// grewInto reports whether the filter next, loaded on a connection whose
// current filter is prev, is prev grown: the same size, hash count, tweak
// and flags, and every bit of prev set. A client that derives new keys
// may send its whole filter again instead of a filteradd (bcoin does, as
// its wallet looks ahead); every element prev matched, next matches too,
// so intersecting the two, as the attack intersects a connection's
// filters, would drop exactly the keys the wallet gained.
func grewInto(prev, next *bip37.Filter) bool {
	if prev.Size() != next.Size() || prev.HashFuncs() != next.HashFuncs() ||
		prev.Tweak() != next.Tweak() || prev.Flags() != next.Flags() {
		return false
	}
	a, b := prev.Bits(), next.Bits()
	for i := range a {
		if a[i]&^b[i] != 0 {
			return false
		}
	}
	return true
}

// Session is one client connection and the filters it loaded: the unit of
// analysis, since the filters of one connection come from one wallet.
type Session struct {
	// ID is the records' session identifier (their client address for
	// records without one).
	ID        string    `json:"session"`
	Client    string    `json:"client"`
	UserAgent string    `json:"user_agent,omitempty"`
	Filters   []*Filter `json:"filters"`
}

// Sessions replays the records (see replay) and groups the
// filters by connection, in the order of each connection's first filter.
// Connections that loaded no filter are left out. A filterload that holds
// every bit of its connection's current filter, with the same size, hash
// count, tweak and flags, is that filter grown, not a filter of its own:
// it takes the current filter's place and its record is listed in
// Filter.Grown.
func Sessions(records []Record) ([]*Session, error) {
	filters, err := replay(records)
	if err != nil {
		return nil, err
	}
	agents := map[string]string{}
	for i := range records {
		if records[i].Command == CmdVersion {
			agents[records[i].sessionKey()] = records[i].UserAgent
		}
	}
	var out []*Session
	index := map[string]*Session{}
	for _, cf := range filters {
		s := index[cf.Session]
		if s == nil {
			s = &Session{ID: cf.Session, Client: cf.Client, UserAgent: agents[cf.Session]}
			index[cf.Session] = s
			out = append(out, s)
		}
		s.Filters = append(s.Filters, cf)
	}
	return out, nil
}

// BloomFilters returns the session's filters.
func (s *Session) BloomFilters() []*bip37.Filter {
	out := make([]*bip37.Filter, len(s.Filters))
	for i, cf := range s.Filters {
		out[i] = cf.Filter
	}
	return out
}
