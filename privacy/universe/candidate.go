package universe

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
)

// ErrBadCandidate reports a universe line that is not a candidate.
var ErrBadCandidate = errors.New("privacy: bad candidate")

// maxLine is the longest universe line accepted, in bytes: the
// hex of a 10,000-byte script (the consensus script size limit) with room
// for a comment.
const maxLine = 32 << 10

// Kind says how a universe line was read.
type Kind uint8

// The kinds of candidates.
const (
	// KindAddress is a base58 or bech32 address, tested by the hash or
	// witness program it encodes (what a wallet inserts).
	KindAddress Kind = iota + 1
	// KindPubKey is the hex of a 33- or 65-byte public key, tested
	// together with its HASH160.
	KindPubKey
	// KindHash is the hex of a 20- or 32-byte hash.
	KindHash
	// KindScript is the hex of a script, tested by its data pushes.
	KindScript
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindAddress:
		return "address"
	case KindPubKey:
		return "pubkey"
	case KindHash:
		return "hash"
	case KindScript:
		return "script"
	}
	return "unknown"
}

// MarshalText names the kind in JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	for c := KindAddress; c <= KindScript; c++ {
		if c.String() == string(b) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("%w: unknown candidate kind %q", ErrBadCandidate, b)
}

// Candidate is one parsed universe line. Its slices point into the
// parser's buffers and are valid until the next call to Parse.
type Candidate struct {
	Kind Kind
	// Text is the candidate as written on the line, without white space
	// or comment.
	Text []byte
	// Elems are the byte strings tested against a filter. For KindPubKey
	// they are the key and its HASH160: the pubkey/pubkey-hash pair.
	Elems [][]byte
	// PairAddress is set for a public key whose line carries the marker
	// "# pair ADDRESS" (as "privacy universe" writes it), ADDRESS being an
	// address of the key's HASH160: the line then stands for that
	// address, whose public key is known, and Analyze counts it as the
	// address, tested by the key and its hash.
	PairAddress []byte
	// Listed are the addresses a marked key line names in "listed
	// ADDRESS" fields of its comment: lines elsewhere in the universe for
	// the same HASH160, which the key line takes over, so that Analyze
	// counts the address and its key once.
	Listed [][]byte
}

// Pair reports whether the candidate is a pubkey/pubkey-hash pair, to which
// the pair test applies.
func (c *Candidate) Pair() bool { return c.Kind == KindPubKey }

// Parser parses universe lines without allocating for the common
// forms. The zero value is ready to use; it is not safe for concurrent use.
type Parser struct {
	c      Candidate
	buf    []byte
	hash   [20]byte
	b58    [25]byte
	prog   [40]byte
	elems  [][]byte
	listed [][]byte
}

// Parse reads one universe line. A line is a candidate, optionally followed
// by white space and a comment starting with '#'; blank lines and comment
// lines give nil and no error. The candidate returned is owned by the
// parser and valid until the next call. The accepted candidates are:
//
//   - base58check addresses with a 20-byte payload (P2PKH, P2SH, any
//     network), tested by that hash;
//   - bech32/bech32m segwit addresses (P2WPKH, P2WSH, P2TR, any network),
//     tested by the witness program;
//   - hex of a 33-byte (02/03) or 65-byte (04/06/07) public key, tested
//     with its HASH160; its comment may mark the pair as "# pair ADDRESS"
//     and name the lines of the same hash it takes over as "listed
//     ADDRESS", fields separated by commas (see Candidate.PairAddress);
//     the addresses must be of the key's HASH160;
//   - hex of a 20- or 32-byte hash;
//   - hex of a script, tested by each of its data pushes.
//
// Hex may be upper or lower case and start with 0x; a line may end in
// CRLF.
func (p *Parser) Parse(line []byte) (*Candidate, error) {
	// Fast path: a bare 40-digit hash, the bulk of a large universe.
	if len(line) == 40 && decodeHex20(&p.hash, line) {
		// Field by field: a composite literal would go through a
		// temporary, which costs more than the rest of the fast path.
		if len(p.c.Elems) != 1 || len(p.c.Elems[0]) != 20 || &p.c.Elems[0][0] != &p.hash[0] {
			p.elems = append(p.elems[:0], p.hash[:])
			p.c.Elems = p.elems
		}
		p.c.Kind = KindHash
		p.c.Text = line
		p.c.PairAddress, p.c.Listed = nil, nil
		return &p.c, nil
	}
	text := bytes.TrimSpace(line)
	if len(text) == 0 || text[0] == '#' {
		return nil, nil
	}
	if len(line) > maxLine {
		return nil, fmt.Errorf("%w: line longer than %d bytes", ErrBadCandidate, maxLine)
	}
	var comment []byte
	if i := indexSpaceOrHash(text); i >= 0 {
		rest := bytes.TrimLeft(text[i:], " \t")
		if len(rest) > 0 && rest[0] != '#' {
			return nil, fmt.Errorf("%w: %q: more than one field (comments start with #)", ErrBadCandidate, shorten(text))
		}
		text, comment = text[:i], rest
	}
	// Hex may carry a 0x prefix, as in the command's hex arguments; no
	// address starts with 0x (base58 has no 0, bech32 prefixes are known).
	if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		text = text[2:]
	}
	c := Candidate{Text: text}
	p.elems = p.elems[:0]

	// The hex of a hash with white space or a comment around it.
	if len(text) == 40 && decodeHex20(&p.hash, text) {
		c.Kind = KindHash
		p.elems = append(p.elems, p.hash[:])
		c.Elems = p.elems
		p.c = c
		return &p.c, nil
	}
	isHex := len(text)%2 == 0 && isHexDigits(text)
	if isHex {
		n := len(text) / 2
		if cap(p.buf) < n {
			p.buf = make([]byte, n, max(n, 128))
		}
		b := p.buf[:n]
		if _, err := hex.Decode(b, text); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadCandidate, shorten(text), err)
		}
		switch {
		case n == 20 || n == 32:
			c.Kind = KindHash
			p.elems = append(p.elems, b)
			c.Elems = p.elems
			p.c = c
			return &p.c, nil
		case isPubKey(b):
			c.Kind = KindPubKey
			h := btcutil.Hash160(b)
			p.elems = append(p.elems, b, h)
			c.Elems = p.elems
			if len(comment) > 0 {
				if err := p.pairMarker(&c, comment, h); err != nil {
					return nil, err
				}
			}
			p.c = c
			return &p.c, nil
		}
	}
	// Addresses, decoded without allocating.
	if decodeBase58Check25(text, &p.b58) {
		c.Kind = KindAddress
		p.elems = append(p.elems, p.b58[1:21])
		c.Elems = p.elems
		p.c = c
		return &p.c, nil
	}
	if prog, ok := decodeSegwit(text, &p.prog); ok {
		c.Kind = KindAddress
		p.elems = append(p.elems, prog)
		c.Elems = p.elems
		p.c = c
		return &p.c, nil
	}
	if isHex {
		b := p.buf[:len(text)/2]
		tok := txscript.MakeScriptTokenizer(0, b)
		for tok.Next() {
			if d := tok.Data(); len(d) > 0 {
				p.elems = append(p.elems, d)
			}
		}
		if tok.Err() != nil {
			return nil, fmt.Errorf("%w: %q: %d bytes of hex, not a pubkey, a 20/32-byte hash or a well-formed script: %v", ErrBadCandidate, shorten(text), len(b), tok.Err())
		}
		if len(p.elems) == 0 {
			return nil, fmt.Errorf("%w: %q: script without data pushes", ErrBadCandidate, shorten(text))
		}
		c.Kind = KindScript
		c.Elems = p.elems
		p.c = c
		return &p.c, nil
	}
	return nil, fmt.Errorf("%w: %q is neither an address nor hex", ErrBadCandidate, shorten(text))
}

// pairMarker reads the "pair ADDRESS" and "listed ADDRESS" fields of a
// public key's comment (fields are separated by commas; others are
// ignored) into c, checking that each address is of the key's hash h.
func (p *Parser) pairMarker(c *Candidate, comment, h []byte) error {
	p.listed = p.listed[:0]
	rest := comment[1:] // after '#'
	for len(rest) > 0 {
		field := rest
		if i := bytes.IndexByte(rest, ','); i >= 0 {
			field, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		field = bytes.TrimSpace(field)
		var addr []byte
		listed := false
		switch {
		case bytes.HasPrefix(field, []byte("pair ")):
			addr = bytes.TrimSpace(field[len("pair "):])
		case bytes.HasPrefix(field, []byte("listed ")):
			addr = bytes.TrimSpace(field[len("listed "):])
			listed = true
		default:
			continue
		}
		if !p.addressOfHash(addr, h) {
			return fmt.Errorf("%w: %q: %q is not an address of the key's HASH160", ErrBadCandidate, shorten(c.Text), shorten(addr))
		}
		if listed {
			p.listed = append(p.listed, addr)
		} else if c.PairAddress == nil {
			c.PairAddress = addr
		}
	}
	if len(p.listed) > 0 {
		if c.PairAddress == nil {
			return fmt.Errorf("%w: %q: \"listed\" without \"pair ADDRESS\"", ErrBadCandidate, shorten(c.Text))
		}
		c.Listed = p.listed
	}
	return nil
}

// addressOfHash reports whether addr is a base58 address or a segwit
// address whose 20-byte payload or program is h.
func (p *Parser) addressOfHash(addr, h []byte) bool {
	var b58 [25]byte
	if decodeBase58Check25(addr, &b58) {
		return bytes.Equal(b58[1:21], h)
	}
	var prog [40]byte
	if pr, ok := decodeSegwit(addr, &prog); ok {
		return bytes.Equal(pr, h)
	}
	return false
}

// indexSpaceOrHash is bytes.IndexAny(b, " \t#"), faster for short lines.
func indexSpaceOrHash(b []byte) int {
	for i, ch := range b {
		if ch == ' ' || ch == '\t' || ch == '#' {
			return i
		}
	}
	return -1
}

// decodeHex20 decodes 40 hex digits (either case) into h, reporting
// whether they were all hex digits. It works on 8 digits at a time in a
// 64-bit word (SWAR): the per-line hex decoding is a quarter of the cost of
// analyzing a large universe.
func decodeHex20(h *[20]byte, s []byte) bool {
	s = s[:40]
	for i := 0; i < 5; i++ {
		x := binary.LittleEndian.Uint64(s[8*i:])
		if !isHex8(x) {
			return false
		}
		// '0'-'9' keep their low nibble; letters (bit 6 set) add 9.
		v := x&0x0f0f0f0f0f0f0f0f + (x>>6)&0x0101010101010101*9
		// Pair the nibbles of each 16-bit lane, then pack the lanes.
		w := (v&0x000f000f000f000f)<<4 | (v>>8)&0x000f000f000f000f
		w = (w | w>>8) & 0x0000ffff0000ffff
		w = (w | w>>16) & 0xffffffff
		binary.LittleEndian.PutUint32(h[4*i:], uint32(w))
	}
	return true
}

// isHex8 reports whether all 8 bytes of x are ASCII hex digits, with the
// bytewise "m < b < n" bit trick for bytes below 0x80: the high bit of
// each byte of (ones*(127+n) - x&low7) &^ x & (x&low7 + ones*(127-m)) is
// set exactly when m < b < n (no byte borrows or carries into the next).
func isHex8(x uint64) bool {
	const (
		high = 0x8080808080808080
		low7 = 0x7f7f7f7f7f7f7f7f
		// digits: '0'-1 < b < '9'+1
		digitN = 0x0101010101010101 * (127 + '9' + 1)
		digitM = 0x0101010101010101 * (127 - ('0' - 1))
		// letters after folding case: 'a'-1 < b < 'f'+1
		letterN = 0x0101010101010101 * (127 + 'f' + 1)
		letterM = 0x0101010101010101 * (127 - ('a' - 1))
	)
	if x&high != 0 {
		return false
	}
	y := x | 0x2020202020202020 // 'A'-'F' to 'a'-'f'; nothing else lands there
	xl, yl := x&low7, y&low7
	digit := (digitN - xl) &^ x & (xl + digitM)
	letter := (letterN - yl) &^ y & (yl + letterM)
	return (digit|letter)&high == high
}

func isHexDigits(b []byte) bool {
	for _, ch := range b {
		if !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F') {
			return false
		}
	}
	return true
}

// isPubKey accepts the serialized forms Bitcoin Core's CPubKey::GetLen
// knows: compressed (02/03, 33 bytes) and uncompressed or hybrid
// (04/06/07, 65 bytes). The point itself is not checked: a node tests
// whatever bytes appear on chain.
func isPubKey(b []byte) bool {
	switch len(b) {
	case 33:
		return b[0] == 2 || b[0] == 3
	case 65:
		return b[0] == 4 || b[0] == 6 || b[0] == 7
	}
	return false
}

// shorten keeps error messages to one readable line.
func shorten(b []byte) string {
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
