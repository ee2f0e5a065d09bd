package cover

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/spvfilter/spvfilter/gcs"
)

// Bounds of the file (see the package documentation).
const (
	MaxCovers   = 4096          // covers in use
	MaxReserve  = 4 * MaxCovers // scripts in reserve
	MaxScript   = 10000         // bytes of a script (the consensus limit)
	MaxClass    = 8             // the class of a script seen MaxClass times or more
	MaxType     = 15            // script types
	MaxFileSize = 4 << 20       // bytes of the whole file
	maxNetwork  = 64            // bytes of the network's name
)

// version is the format's version, the magic's last byte; files of
// version 1, without the exploration state, of version 2, without the
// blocks explored in the scans short in a row and the false matches,
// of version 3, without the range those scans explored, of version 4,
// without the entries' riders, and of version 5, without the decoys,
// are read too.
const (
	version    = 0x06
	version1   = 0x01
	version2   = 0x02
	version3   = 0x03
	version4   = 0x04
	version5   = 0x05
	version6   = version
	maxRead    = 1 << 16 // appearances whose riders were counted
	maxRiders  = 1 << 32 // riders counted
	maxShort   = 1 << 16 // scans short in a row, kept
	MaxRefuted = 4096    // false matches kept
	MaxDecoys  = 4096    // decoys kept
)

var magic = [8]byte{'S', 'P', 'V', 'F', 'C', 'O', 'V', version}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// minEntry is the fewest bytes an entry takes: a length, one byte of
// script, class, type and three varints, and from version 5 two more.
const (
	minEntry4 = 1 + 1 + 2 + 3
	minEntry  = minEntry4 + 2
)

// contents is what a file holds.
type contents struct {
	network string
	seed    [32]byte
	chance  map[int]uint64 // class → chance groups × 1000
	covers  []Cover
	reserve []Cover
	explore Explore
	refuted []MatchKey // sorted, distinct
	decoys  [][]byte   // in the order kept, distinct
}

// encode writes c in the file's format.
func (c *contents) encode() []byte {
	b := append([]byte(nil), magic[:]...)
	b = binary.AppendUvarint(b, uint64(len(c.network)))
	b = append(b, c.network...)
	b = append(b, c.seed[:]...)
	b = binary.AppendUvarint(b, uint64(len(c.chance)))
	for k := 1; k <= MaxClass; k++ {
		if v, ok := c.chance[k]; ok {
			b = binary.AppendUvarint(b, uint64(k))
			b = binary.AppendUvarint(b, v)
		}
	}
	for _, list := range [][]Cover{c.covers, c.reserve} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, e := range list {
			b = e.append(b)
		}
	}
	b = binary.AppendUvarint(b, uint64(c.explore.Short))
	b = binary.AppendUvarint(b, c.explore.Swept)
	b = binary.AppendUvarint(b, c.explore.Explored)
	b = binary.AppendUvarint(b, uint64(c.explore.From))
	b = binary.AppendUvarint(b, uint64(c.explore.To))
	b = binary.AppendUvarint(b, uint64(len(c.refuted)))
	for _, k := range c.refuted {
		b = append(b, k[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(c.decoys)))
	for _, d := range c.decoys {
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// append writes the entry e.
func (e Cover) append(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(e.Script)))
	b = append(b, e.Script...)
	b = append(b, e.Profile.Class, e.Profile.Type)
	b = binary.AppendUvarint(b, uint64(e.Profile.First))
	b = binary.AppendUvarint(b, uint64(e.Profile.Drawn))
	b = binary.AppendUvarint(b, e.Profile.Group)
	b = binary.AppendUvarint(b, uint64(e.Profile.Riders))
	return binary.AppendUvarint(b, uint64(e.Profile.Read))
}

// entrySize is the bytes e takes in the file.
func (e Cover) entrySize() int { return len(e.append(nil)) }

// errFormat is what every decoding error wraps.
var errFormat = errors.New("not a cover file")

// decoder reads a file's fields in order, remembering the first error.
type decoder struct {
	b     []byte
	off   int
	field string
	err   error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d: %s", errFormat, d.field, d.off, fmt.Sprintf(format, args...))
	}
}

// varint reads a varint no larger than limit.
func (d *decoder) varint(limit uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		d.fail("cut short")
		return 0
	case n < 0:
		d.fail("varint overflows")
		return 0
	case n > 1 && d.b[d.off+n-1] == 0:
		d.fail("varint not in its shortest form")
		return 0
	case v > limit:
		d.fail("%d is beyond %d", v, limit)
		return 0
	}
	d.off += n
	return v
}

// bytes reads n bytes, which must be there.
func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.fail("%d bytes wanted, %d left", n, len(d.b)-d.off)
		return nil
	}
	out := d.b[d.off : d.off+n]
	d.off += n
	return out
}

// count reads a count of items of at least minSize bytes each, no more
// than limit and than the bytes left can hold, so that what is sized
// by it is bounded by the file.
func (d *decoder) count(limit uint64, minSize int) int {
	n := d.varint(limit)
	if left := uint64(len(d.b)-d.off) / uint64(minSize); n > left {
		d.fail("%d items cannot fit in the %d bytes left", n, len(d.b)-d.off)
		return 0
	}
	return int(n)
}

// decode reads a whole file, checksum included, of network's set.
func decode(data []byte, network string) (*contents, error) {
	if len(data) < len(magic)+4 {
		return nil, fmt.Errorf("%w: %d bytes", errFormat, len(data))
	}
	if !bytes.Equal(data[:len(magic)-1], magic[:len(magic)-1]) {
		return nil, fmt.Errorf("%w: bad magic %q", errFormat, data[:len(magic)])
	}
	v := data[len(magic)-1]
	if v < version1 || v > version {
		return nil, fmt.Errorf("%w: version %d, want %d to %d", errFormat, v, version1, version)
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(body):]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, the file says %08x", errFormat, got, want)
	}
	d := &decoder{b: body, off: len(magic)}
	c := &contents{chance: map[int]uint64{}}
	d.field = "network"
	name := d.bytes(int(d.varint(maxNetwork)))
	if d.err == nil && string(name) != network {
		return nil, fmt.Errorf("%w: a cover file of network %q, not %q", errFormat, name, network)
	}
	c.network = string(name)
	d.field = "seed"
	copy(c.seed[:], d.bytes(len(c.seed)))
	d.field = "chance"
	prev := 0
	for range d.count(MaxClass, 2) {
		k := int(d.varint(MaxClass))
		if d.err == nil && k <= prev {
			d.fail("class %d after class %d", k, prev)
		}
		prev = k
		c.chance[k] = d.varint(math.MaxInt64)
	}
	seen := map[string]bool{}
	d.field = "covers"
	c.covers = d.entries(MaxCovers, seen, v)
	d.field = "reserve"
	c.reserve = d.entries(MaxReserve, seen, v)
	if v >= version2 {
		d.field = "explore"
		c.explore.Short = int(d.varint(maxShort))
		c.explore.Swept = d.varint(math.MaxUint64)
	}
	if v >= version3 {
		c.explore.Explored = d.varint(math.MaxUint32)
	}
	if v >= version4 {
		c.explore.From = int32(d.varint(math.MaxInt32))
		c.explore.To = int32(d.varint(math.MaxInt32))
	}
	if v >= version3 {
		d.field = "false matches"
		n := d.count(MaxRefuted, len(MatchKey{}))
		c.refuted = make([]MatchKey, 0, n)
		for i := range n {
			var k MatchKey
			copy(k[:], d.bytes(len(k)))
			if d.err == nil && i > 0 && bytes.Compare(k[:], c.refuted[i-1][:]) <= 0 {
				d.fail("key %x after %x", k, c.refuted[i-1])
			}
			c.refuted = append(c.refuted, k)
		}
	}
	if v >= version6 {
		d.field = "decoys"
		c.decoys = d.decoys()
	}
	if d.err == nil && d.off != len(body) {
		d.field = "end"
		d.fail("%d bytes after the last field", len(body)-d.off)
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

// entries reads a count and that many entries of a file of version v,
// none of a script in seen. Before version 5 an entry's riders are
// unknown (none read).
func (d *decoder) entries(limit uint64, seen map[string]bool, v byte) []Cover {
	size := minEntry
	if v < version5 {
		size = minEntry4
	}
	n := d.count(limit, size)
	out := make([]Cover, 0, n)
	for i := range n {
		var e Cover
		e.Script = bytes.Clone(d.bytes(int(d.varint(MaxScript))))
		if cls := d.bytes(2); cls != nil {
			e.Profile.Class, e.Profile.Type = cls[0], cls[1]
		}
		e.Profile.First = int32(d.varint(math.MaxInt32))
		e.Profile.Drawn = int32(d.varint(math.MaxInt32))
		e.Profile.Group = d.varint(math.MaxUint64)
		if v >= version5 {
			e.Profile.Riders = uint32(d.varint(maxRiders - 1))
			e.Profile.Read = uint16(d.varint(maxRead - 1))
		}
		if d.err != nil {
			return nil
		}
		if err := e.check(); err != nil {
			d.fail("entry %d: %v", i, err)
			return nil
		}
		if seen[string(e.Script)] {
			d.fail("entry %d: script %x twice", i, e.Script)
			return nil
		}
		seen[string(e.Script)] = true
		out = append(out, e)
	}
	return out
}

// decoys reads a count and that many decoys, none twice.
func (d *decoder) decoys() [][]byte {
	n := d.count(MaxDecoys, 2)
	out := make([][]byte, 0, n)
	seen := make(map[string]bool, n)
	for i := range n {
		s := bytes.Clone(d.bytes(int(d.varint(MaxScript))))
		if d.err != nil {
			return nil
		}
		if err := checkDecoy(s); err != nil {
			d.fail("decoy %d: %v", i, err)
			return nil
		}
		if seen[string(s)] {
			d.fail("decoy %d: script %x twice", i, s)
			return nil
		}
		seen[string(s)] = true
		out = append(out, s)
	}
	return out
}

// checkDecoy tells what is wrong with a decoy, if anything.
func checkDecoy(s []byte) error {
	switch {
	case len(s) == 0 || len(s) > MaxScript:
		return fmt.Errorf("a script of %d bytes, want 1..%d", len(s), MaxScript)
	case !gcs.BasicOutput(s):
		return fmt.Errorf("script %x is not in basic filters", s)
	}
	return nil
}

// check tells what is wrong with an entry's fields, if anything.
func (e Cover) check() error {
	switch p := e.Profile; {
	case len(e.Script) == 0 || len(e.Script) > MaxScript:
		return fmt.Errorf("a script of %d bytes, want 1..%d", len(e.Script), MaxScript)
	case !gcs.BasicOutput(e.Script):
		return fmt.Errorf("script %x is not in basic filters", e.Script)
	case p.Class < 1 || p.Class > MaxClass:
		return fmt.Errorf("class %d, want 1..%d", p.Class, MaxClass)
	case p.Type > MaxType:
		return fmt.Errorf("script type %d, want 0..%d", p.Type, MaxType)
	case p.First < 0 || p.Drawn < 0:
		return fmt.Errorf("heights %d and %d, want 0 or more", p.First, p.Drawn)
	case p.Read == 0 && p.Riders != 0:
		return fmt.Errorf("%d riders counted in no appearance", p.Riders)
	}
	return nil
}
