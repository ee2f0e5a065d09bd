package peer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// A node's messages are read in two steps: the frame (the 24-byte header
// and the payload it announces), then the payload's decoding. The frame
// is refused before its payload is read when its network, command or
// length is wrong, so that no allocation follows a claimed length above
// the command's limit, and a payload within it is allocated as its bytes
// come, in pieces of 1 MiB at most, so that a node cannot make us hold
// more than a piece beyond what it sent. A payload that does not decode
// is then a protocol violation naming the command, never taken for a
// node hanging up.
//
// The payload checksum (the first 4 bytes of its double SHA-256) guards
// against damage on the way, not against a lying node, which computes it
// as easily as we do. It is checked as the frame is read, except for the
// payloads that are checked against a commitment anyway before anything
// uses them: a cfilter (every caller of GetCFilters hashes it into its
// filter header) and a block (GetBlocks checks it against its header's
// hash, merkle root and witness commitment before handing it out). Those
// make most of the bytes of a scan, and hashing them twice was a good
// part of its cost. Only when such a check fails, or the payload does not
// decode, is the checksum looked at (intact), so that damage on the way
// is still told from a lie. A payload that fails its checksum is
// ErrDamaged, never ErrProtocol or a lie: it proves nothing about the
// node.

// maxPayload is the largest payload of any command, known or not: Core's
// MAX_PROTOCOL_MESSAGE_LENGTH (4,000,000 bytes, net.h), which is also
// btcd's largest block. btcd's wire allows 32 MB for commands it does
// not bound more tightly, but no node sends more than Core reads, and an
// unknown command of more could only end as ErrFlooding after its bytes
// were read (the unsolicited byte budget holds 4 MB).
const maxPayload = 4_000_000

// payloadLimits are tighter limits than maxPayload for messages whose
// wire limit is the 32 MB protocol maximum: the reason of a reject is
// free text, alert is obsolete, and 1 MB of filter-header checkpoints
// covers 32 million blocks.
var payloadLimits = map[string]uint32{
	wire.CmdReject:    64 << 10,
	wire.CmdAlert:     4 << 10,
	wire.CmdCFCheckpt: 1 << 20,
}

// checkedLater are the commands whose payload checksum is not checked as
// the frame is read (see above).
var checkedLater = map[string]bool{wire.CmdCFilter: true, wire.CmdBlock: true}

// wireFrame is one message as it came off the wire, not yet decoded.
type wireFrame struct {
	cmd     string
	size    int      // on the wire, header included
	payload []byte   // or its first piece; valid until the next frame is read, unless owned
	more    [][]byte // the payload's further pieces (see readPayload)
	owned   bool     // payload was allocated for this frame alone
	sum     [4]byte
	checked bool         // sum was checked against payload
	msg     wire.Message // empty, of the command's type
}

// frameReader reads a node's frames from the connection's buffer.
type frameReader struct {
	br      *bufio.Reader
	net     wire.BitcoinNet
	pending int // bytes of the last frame's payload still in br
	// conn, when set, is the connection under br, whose read deadline
	// bounds a frame whose header came to timeout (see bound); until is
	// the deadline set on it, zero when none.
	conn    interface{ SetReadDeadline(time.Time) error }
	timeout time.Duration
	until   time.Time
}

// next reads the next frame. Its errors are the connection's (a stream
// ending inside a frame is io.ErrUnexpectedEOF), ErrStalled (a payload
// not whole within the timeout after its header), ErrProtocol (another
// network, a malformed command, an *OversizeError),
// ErrDamaged (a payload failing its checksum), or wire.ErrUnknownMessage
// for a command btcd's wire does not know, whose payload is skipped. The
// frame's size counts the bytes read, also with an error.
func (fr *frameReader) next(pver uint32) (wireFrame, error) {
	if fr.pending > 0 {
		fr.br.Discard(fr.pending) // peeked: cannot fail
		fr.pending = 0
	}
	hdr, err := fr.header()
	if err != nil {
		return wireFrame{}, err
	}
	f := wireFrame{cmd: string(bytes.TrimRight(hdr[4:16], "\x00"))}
	length := binary.LittleEndian.Uint32(hdr[16:20])
	copy(f.sum[:], hdr[20:24])
	f.size = wire.MessageHeaderSize
	if magic := wire.BitcoinNet(binary.LittleEndian.Uint32(hdr[:4])); magic != fr.net {
		return f, &NetworkError{Got: magic, Want: fr.net}
	}
	if !utf8.ValidString(f.cmd) {
		return f, fmt.Errorf("%w: malformed command %q", ErrProtocol, f.cmd)
	}
	f.msg = emptyMessage(f.cmd)
	limit := uint32(maxPayload)
	if f.msg != nil {
		limit = min(limit, f.msg.MaxPayloadLength(pver))
	}
	if l, ok := payloadLimits[f.cmd]; ok {
		limit = min(limit, l)
	}
	if length > limit {
		return f, &OversizeError{Command: f.cmd, Length: length, Limit: limit}
	}
	fr.bound(int(length))
	if f.msg == nil {
		n, err := fr.br.Discard(int(length))
		f.size += n
		if err != nil {
			return f, fr.late(f.cmd, length, err)
		}
		return f, fmt.Errorf("%w %q", wire.ErrUnknownMessage, f.cmd)
	}
	if err := fr.readPayload(&f, int(length)); err != nil {
		return f, fr.late(f.cmd, length, err)
	}
	f.size += int(length)
	if !checkedLater[f.cmd] {
		if !f.sumOK() {
			return f, errDamaged(f.cmd)
		}
		f.checked = true
	}
	return f, nil
}

// buffered reports whether the next frame is in the buffer whole, or its
// header is and the frame is larger than the buffer (it is read in
// pieces, see readPayload): reading it then waits for no more bytes than
// can come.
func (fr *frameReader) buffered() bool {
	n := fr.br.Buffered() - fr.pending
	if n < wire.MessageHeaderSize {
		return false
	}
	b, err := fr.br.Peek(fr.pending + wire.MessageHeaderSize) // buffered: no read
	if err != nil {
		return false
	}
	frame := wire.MessageHeaderSize + int(binary.LittleEndian.Uint32(b[fr.pending+16:]))
	return n >= frame || frame > fr.br.Size()
}

// header reads the next frame's header. A deadline bound left that
// passes before a header is whole is no stall (an idle connection is
// normal): it is cleared and the read goes on.
func (fr *frameReader) header() (hdr [wire.MessageHeaderSize]byte, err error) {
	for {
		b, err := fr.br.Peek(len(hdr))
		if err == nil {
			copy(hdr[:], b)
			fr.br.Discard(len(hdr)) // peeked: cannot fail
			return hdr, nil
		}
		if errors.Is(err, io.EOF) && len(b) > 0 {
			return hdr, io.ErrUnexpectedEOF
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || fr.until.IsZero() {
			return hdr, err
		}
		fr.conn.SetReadDeadline(time.Time{})
		fr.until = time.Time{}
	}
}

// boundSlack is how much later than timeout after its header a payload
// may be cut, at most, as a fraction of timeout: the deadline bound sets
// serves the payloads that follow within the slack, so that a node
// streaming messages costs no timer change for each of them.
const boundSlack = 4

// bound makes sure the connection's read deadline is at least timeout
// away, and at most timeout plus a boundSlack-th of it, when a payload of
// n bytes is not all buffered yet. An idle connection is normal, but a
// node that sent a frame's header and then holds back its payload holds
// our buffer for it (and, with a request in flight, the request) for
// nothing: the rest must come within that time.
func (fr *frameReader) bound(n int) {
	if fr.conn == nil || fr.timeout <= 0 || fr.br.Buffered() >= n {
		return
	}
	now := time.Now()
	if !fr.until.IsZero() && fr.until.Sub(now) >= fr.timeout {
		return
	}
	fr.until = now.Add(fr.timeout + fr.timeout/boundSlack)
	fr.conn.SetReadDeadline(fr.until)
}

// late returns the error of a payload of the cmd message of n bytes
// whose reading failed with err: ErrStalled when it did not come within
// the frame's timeout.
func (fr *frameReader) late(cmd string, n uint32, err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %q message of %d bytes not whole %v after its header", ErrStalled, cmd, n, fr.timeout)
	}
	return cut(err)
}

// payloadStep bounds how far a payload's buffer is allocated ahead of
// the bytes that came: its claimed length is the node's word, and a node
// that sends a block's header and then goes quiet should not hold 4 MB
// of ours for nothing.
const payloadStep = 1 << 20

// readPayload reads f's payload of n bytes: in place in the buffer when
// it fits there, else into slices of its own, of payloadStep bytes at
// most, each allocated when the bytes before it came. Pieces are not
// copied together: they are decoded in turn.
func (fr *frameReader) readPayload(f *wireFrame, n int) error {
	if n <= fr.br.Size() {
		p, err := fr.br.Peek(n)
		if err != nil {
			return cut(err)
		}
		f.payload, fr.pending = p, n
		return nil
	}
	f.owned = true
	for left := n; left > 0; {
		piece := make([]byte, min(left, payloadStep))
		if _, err := io.ReadFull(fr.br, piece); err != nil {
			return cut(err)
		}
		if f.payload == nil {
			f.payload = piece
		} else {
			f.more = append(f.more, piece)
		}
		left -= len(piece)
	}
	return nil
}

// cut returns err, io.ErrUnexpectedEOF for a stream that ended inside a
// frame.
func cut(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// errDamaged is the error of a cmd message whose payload does not match
// its checksum.
func errDamaged(cmd string) error {
	return fmt.Errorf("%w: %q payload does not match its checksum", ErrDamaged, cmd)
}

// sumOK reports whether f's payload has the checksum its header gave.
func (f *wireFrame) sumOK() bool {
	if f.more == nil {
		return sumOK(f.payload, f.sum)
	}
	h := chainhash.DoubleHashRaw(func(w io.Writer) error {
		w.Write(f.payload)
		for _, p := range f.more {
			w.Write(p)
		}
		return nil
	})
	return [4]byte(h[:4]) == f.sum
}

// payloadReader reads a payload and tells how much of it is left.
type payloadReader interface {
	io.Reader
	Len() int
}

// reader returns a reader of f's payload: a *bytes.Buffer when it is in
// one piece (as MsgVersion's decoder wants), else a *piecesReader.
func (f *wireFrame) reader() payloadReader {
	if f.more == nil {
		return bytes.NewBuffer(f.payload)
	}
	return &piecesReader{cur: f.payload, rest: f.more}
}

// piecesReader reads the pieces of a payload in turn. It moves an
// offset, not a slice, within a piece, as bytes.Buffer does: a read
// writes no pointer, so pays no write barrier while the collector runs.
type piecesReader struct {
	cur  []byte   // the piece being read
	off  int      // how much of it was read
	rest [][]byte // the pieces after it
}

// Read reads the next bytes of the payload, io.EOF at its end.
func (r *piecesReader) Read(b []byte) (int, error) {
	if len(b) <= len(r.cur)-r.off { // most reads: a field of a transaction
		n := copy(b, r.cur[r.off:])
		r.off += n
		return n, nil
	}
	n := 0
	for n < len(b) {
		if r.off == len(r.cur) {
			if len(r.rest) == 0 {
				break
			}
			r.cur, r.off, r.rest = r.rest[0], 0, r.rest[1:]
		}
		c := copy(b[n:], r.cur[r.off:])
		r.off += c
		n += c
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Len returns how many bytes of the payload are left.
func (r *piecesReader) Len() int {
	n := len(r.cur) - r.off
	for _, p := range r.rest {
		n += len(p)
	}
	return n
}

// sumOK reports whether payload's checksum is sum.
func sumOK(payload []byte, sum [4]byte) bool {
	h := chainhash.DoubleHashH(payload)
	return [4]byte(h[:4]) == sum
}

// decode decodes f's payload into its message. A payload that does not
// decode is a protocol violation naming the command, wrapping the
// decoder's error; so is one with bytes left over when its checksum is
// checked later, since intact re-encodes it. When the checksum of such a
// payload was left for later, it is checked first: one that does not
// match is ErrDamaged.
func (f *wireFrame) decode(pver uint32) (wire.Message, error) {
	var err error
	switch m := f.msg.(type) {
	case *wire.MsgCFilter: // one piece: its limit is below payloadStep
		err = decodeCFilter(m, f.payload, f.owned, pver)
	default:
		r := f.reader()
		if err = m.BtcDecode(r, pver, wire.WitnessEncoding); err == nil && checkedLater[f.cmd] && r.Len() > 0 {
			err = fmt.Errorf("%s after the message", byteCount(r.Len()))
		}
	}
	if err != nil {
		if checkedLater[f.cmd] && !f.sumOK() {
			return nil, errDamaged(f.cmd)
		}
		return nil, &DecodeError{Command: f.cmd, Err: err}
	}
	return f.msg, nil
}

// cfilterHead is a cfilter's size before its data's length: the filter
// type and the block hash.
const cfilterHead = 1 + chainhash.HashSize

// decodeCFilter decodes a cfilter payload into m, as wire does but with
// one copy of the filter at most: none when the payload is owned.
func decodeCFilter(m *wire.MsgCFilter, payload []byte, owned bool, pver uint32) error {
	if len(payload) < cfilterHead {
		return io.ErrUnexpectedEOF
	}
	m.FilterType = wire.FilterType(payload[0])
	copy(m.BlockHash[:], payload[1:cfilterHead])
	r := bytes.NewReader(payload[cfilterHead:])
	n, err := wire.ReadVarInt(r, pver)
	if err != nil {
		return cut(err)
	}
	if n > wire.MaxCFilterDataSize {
		return fmt.Errorf("filter of %d bytes, at most %d", n, wire.MaxCFilterDataSize)
	}
	if uint64(r.Len()) != n {
		if uint64(r.Len()) < n {
			return io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%s after the filter", byteCount(r.Len()-int(n)))
	}
	data := payload[len(payload)-int(n):]
	if !owned {
		data = bytes.Clone(data)
	}
	m.Data = data
	return nil
}

// intact reports whether msg, taken by the request in flight as the last
// message, arrived as the node sent it: true when its payload checksum
// was checked as it was read, else whether its encoding (the payload
// exactly, since decode refused leftovers and wire refuses non-canonical
// encodings) has the checksum the node gave it. The request's checks of
// a payload checked later call it before they call its failure a lie.
func (p *Peer) intact(msg wire.Message) bool {
	r := p.req.Load()
	if r == nil || r.took.msg != msg || r.took.checked {
		return true
	}
	var b bytes.Buffer
	if err := msg.BtcEncode(&b, p.pver.Load(), wire.WitnessEncoding); err != nil {
		return false
	}
	return sumOK(b.Bytes(), r.took.sum)
}

// emptyMessage returns an empty message of the command, or nil for a
// command btcd's wire does not know (its own table is unexported).
func emptyMessage(cmd string) wire.Message {
	switch cmd {
	case wire.CmdVersion:
		return &wire.MsgVersion{}
	case wire.CmdVerAck:
		return &wire.MsgVerAck{}
	case wire.CmdSendAddrV2:
		return &wire.MsgSendAddrV2{}
	case wire.CmdGetAddr:
		return &wire.MsgGetAddr{}
	case wire.CmdAddr:
		return &wire.MsgAddr{}
	case wire.CmdAddrV2:
		return &wire.MsgAddrV2{}
	case wire.CmdGetBlocks:
		return &wire.MsgGetBlocks{}
	case wire.CmdBlock:
		return &wire.MsgBlock{}
	case wire.CmdInv:
		return &wire.MsgInv{}
	case wire.CmdGetData:
		return &wire.MsgGetData{}
	case wire.CmdNotFound:
		return &wire.MsgNotFound{}
	case wire.CmdTx:
		return &wire.MsgTx{}
	case wire.CmdPing:
		return &wire.MsgPing{}
	case wire.CmdPong:
		return &wire.MsgPong{}
	case wire.CmdGetHeaders:
		return &wire.MsgGetHeaders{}
	case wire.CmdHeaders:
		return &wire.MsgHeaders{}
	case wire.CmdAlert:
		return &wire.MsgAlert{}
	case wire.CmdMemPool:
		return &wire.MsgMemPool{}
	case wire.CmdFilterAdd:
		return &wire.MsgFilterAdd{}
	case wire.CmdFilterClear:
		return &wire.MsgFilterClear{}
	case wire.CmdFilterLoad:
		return &wire.MsgFilterLoad{}
	case wire.CmdMerkleBlock:
		return &wire.MsgMerkleBlock{}
	case wire.CmdReject:
		return &wire.MsgReject{}
	case wire.CmdSendHeaders:
		return &wire.MsgSendHeaders{}
	case wire.CmdFeeFilter:
		return &wire.MsgFeeFilter{}
	case wire.CmdGetCFilters:
		return &wire.MsgGetCFilters{}
	case wire.CmdGetCFHeaders:
		return &wire.MsgGetCFHeaders{}
	case wire.CmdGetCFCheckpt:
		return &wire.MsgGetCFCheckpt{}
	case wire.CmdCFilter:
		return &wire.MsgCFilter{}
	case wire.CmdCFHeaders:
		return &wire.MsgCFHeaders{}
	case wire.CmdCFCheckpt:
		return &wire.MsgCFCheckpt{}
	}
	return nil
}

// byteCount says n bytes, in the singular when n is one.
func byteCount(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
