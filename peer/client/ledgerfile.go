package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// The ledger's file, ledger.dat in the chain state's directory, holds the
// ledger (see ledger.go) across runs. Unsigned LEB128 varints, each in its
// shortest form, unless said:
//
//	magic     8 bytes "SPVFLED" + version 0x01
//	network   varint length (<= 64), name
//	lost      byte 1: records were lost (ledger.lost), else 0
//	addresses varint A (<= maxLedgerAddrs), then per address:
//	  address   varint length (1..255), the host:port
//	  incomplete byte 1 or 0
//	  ranges    3 lists (getcfilters, getcfheaders, filtered blocks), each
//	            varint R, then R x (varint from, varint to-from)
//	  blocks    varint B, then B x 32-byte block hashes
//	  filters   varint F (<= maxLedgerFilters), then F x (varint L
//	            (<= wire.MaxFilterLoadFilterSize), L bytes, 4-byte hash
//	            function count, 4-byte tweak, byte flags), little-endian
//	checksum  4 bytes little-endian CRC-32C (Castagnoli) of every byte before
//
// A file that fails any of these checks is set aside (diskfile.SetAside)
// and the ledger starts again with lost set: the leak report then says
// that it may understate what peers saw before.

const (
	ledgerFileName = "ledger.dat"
	ledgerMagic    = "SPVFLED\x01"
	// maxLedgerFile bounds the file read: the records' bound and their
	// framing.
	maxLedgerFile = maxLedgerBytes + maxLedgerAddrs*64 + 1024
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errLedgerFile is a ledger file that fails its checks.
var errLedgerFile = errors.New("not a valid ledger file")

// encode returns the ledger's file for network. Called with mu held.
func (l *ledger) encode(network string) []byte {
	b := []byte(ledgerMagic)
	b = binary.AppendUvarint(b, uint64(len(network)))
	b = append(b, network...)
	b = append(b, flag(l.lost))
	b = binary.AppendUvarint(b, uint64(len(l.order)))
	for _, addr := range l.order {
		e := l.byAddr[addr]
		b = binary.AppendUvarint(b, uint64(len(addr)))
		b = append(b, addr...)
		b = append(b, flag(e.incomplete))
		for _, rs := range [][]heightRange{e.filters, e.headers, e.filtered} {
			b = binary.AppendUvarint(b, uint64(len(rs)))
			for _, r := range rs {
				b = binary.AppendUvarint(b, uint64(r.from))
				b = binary.AppendUvarint(b, uint64(r.to-r.from))
			}
		}
		b = binary.AppendUvarint(b, uint64(len(e.blocks)))
		for _, h := range e.blocks {
			b = append(b, h[:]...)
		}
		b = binary.AppendUvarint(b, uint64(len(e.loaded)))
		for _, f := range e.loaded {
			b = binary.AppendUvarint(b, uint64(len(f.Filter)))
			b = append(b, f.Filter...)
			b = binary.LittleEndian.AppendUint32(b, f.HashFuncs)
			b = binary.LittleEndian.AppendUint32(b, f.Tweak)
			b = append(b, byte(f.Flags))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// ledgerReader reads a ledger file's fields, keeping the first error.
type ledgerReader struct {
	r   *bytes.Reader
	err error
}

func (d *ledgerReader) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errLedgerFile}, args...)...)
	}
}

// count reads a varint of at most limit.
func (d *ledgerReader) count(what string, limit uint64) int {
	if d.err != nil {
		return 0
	}
	before := d.r.Len()
	v, err := binary.ReadUvarint(d.r)
	if err != nil || v > limit || before-d.r.Len() != len(binary.AppendUvarint(nil, v)) {
		d.fail("%s: %d over %d, cut or not in its shortest form", what, v, limit)
		return 0
	}
	return int(v)
}

// flag reads a yes-or-no byte.
func (d *ledgerReader) flag(what string) bool {
	b := d.bytes(what, 1)
	if b != nil && b[0] > 1 {
		d.fail("%s: byte %d", what, b[0])
	}
	return b != nil && b[0] == 1
}

// bytes reads n bytes.
func (d *ledgerReader) bytes(what string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.r.Len() {
		d.fail("%s cut", what)
		return nil
	}
	out := make([]byte, n)
	d.r.Read(out)
	return out
}

// decodeLedger reads a ledger file of network.
func decodeLedger(data []byte, network string) (*ledger, error) {
	if len(data) < len(ledgerMagic)+4 || string(data[:len(ledgerMagic)]) != ledgerMagic {
		return nil, fmt.Errorf("%w: no ledger header (magic and version)", errLedgerFile)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errLedgerFile)
	}
	d := &ledgerReader{r: bytes.NewReader(body[len(ledgerMagic):])}
	if got := string(d.bytes("network", d.count("network length", 64))); d.err == nil && got != network {
		return nil, fmt.Errorf("%w: written for network %q, not %q", errLedgerFile, got, network)
	}
	l := &ledger{byAddr: map[string]*ledgerEntry{}}
	l.lost = d.flag("flags")
	n := d.count("addresses", maxLedgerAddrs)
	for i := 0; i < n && d.err == nil; i++ {
		addr := string(d.bytes("address", d.count("address length", 255)))
		if d.err == nil && (addr == "" || l.byAddr[addr] != nil) {
			d.fail("address %d empty or repeated", i)
		}
		e := &ledgerEntry{seen: map[chainhash.Hash]bool{}}
		e.incomplete = d.flag("address flags")
		for _, rs := range []*[]heightRange{&e.filters, &e.headers, &e.filtered} {
			for n := d.count("ranges", maxLedgerBytes/2); n > 0 && d.err == nil; n-- {
				from := d.count("range start", 1<<31-1)
				span := d.count("range length", 1<<31-1)
				if d.err == nil && from+span > 1<<31-1 {
					d.fail("range %d+%d", from, span)
				}
				*rs = append(*rs, heightRange{int32(from), int32(from + span)})
			}
		}
		for n := d.count("blocks", maxLedgerBytes/chainhash.HashSize); n > 0 && d.err == nil; n-- {
			var h chainhash.Hash
			copy(h[:], d.bytes("block hash", chainhash.HashSize))
			if d.err == nil && e.seen[h] {
				d.fail("block %v repeated", h)
			}
			e.seen[h] = true
			e.blocks = append(e.blocks, h)
		}
		for n := d.count("filters", maxLedgerFilters); n > 0 && d.err == nil; n-- {
			f := &wire.MsgFilterLoad{Filter: d.bytes("filter", d.count("filter length", wire.MaxFilterLoadFilterSize))}
			if p := d.bytes("filter parameters", 9); p != nil {
				f.HashFuncs, f.Tweak, f.Flags = binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:]), wire.BloomUpdateType(p[8])
				if f.HashFuncs > wire.MaxFilterLoadHashFuncs || f.Flags > wire.BloomUpdateP2PubkeyOnly {
					d.fail("filter parameters out of range")
				}
			}
			e.loaded = append(e.loaded, f)
		}
		l.byAddr[addr] = e
		l.order = append(l.order, addr)
	}
	if d.err == nil && d.r.Len() != 0 {
		d.fail("%d bytes after the last address", d.r.Len())
	}
	if d.err != nil {
		return nil, d.err
	}
	l.size = len(body)
	return l, nil
}

// openLedger reads the ledger of dir for network: an empty one if there
// is none; a damaged one is set aside, and the ledger starts again with
// lost set and a note saying so.
func openLedger(dir, network string, now time.Time) (l *ledger, note string, err error) {
	path := filepath.Join(dir, ledgerFileName)
	data, err := diskfile.ReadLimited(path, maxLedgerFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ledger{}, "", nil
	case err == nil:
		if l, err = decodeLedger(data, network); err == nil {
			return l, "", nil
		}
	case !errors.Is(err, diskfile.ErrTooLarge) && !errors.Is(err, diskfile.ErrNotRegular):
		return nil, "", fmt.Errorf("client: reading the ledger %s: %w", path, err)
	}
	aside, serr := diskfile.SetAside(path, now)
	if serr != nil {
		return nil, "", fmt.Errorf("client: the ledger %s is damaged (%v) and cannot be set aside: %w", path, err, serr)
	}
	return &ledger{lost: true, dirty: true}, fmt.Sprintf(
		"the ledger of what peers were asked, %s, was damaged (%v): set aside as %s; what peers were asked before is forgotten, so what they saw may be understated",
		path, err, aside), nil
}

// save writes the ledger to dir if it changed; with sync, on stable
// storage when it returns (at Close: a scan's save is left to the system,
// so that following the tip does not wait for the disk every block).
func (l *ledger) save(dir, network string, sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dirty {
		return nil
	}
	if err := diskfile.WriteAtomic(filepath.Join(dir, ledgerFileName), l.encode(network), sync); err != nil {
		return fmt.Errorf("client: saving the ledger: %w", err)
	}
	l.dirty = false
	return nil
}
