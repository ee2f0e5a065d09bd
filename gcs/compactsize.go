package gcs

import (
	"encoding/binary"
	"fmt"
)

// compactSizeLen is the length of the Bitcoin CompactSize encoding of n.
func compactSizeLen(n uint64) int {
	switch {
	case n < 0xfd:
		return 1
	case n <= 0xffff:
		return 3
	case n <= 0xffffffff:
		return 5
	default:
		return 9
	}
}

func appendCompactSize(b []byte, n uint64) []byte {
	switch {
	case n < 0xfd:
		return append(b, byte(n))
	case n <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(b, 0xfd), uint16(n))
	case n <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(n))
	default:
		return binary.LittleEndian.AppendUint64(append(b, 0xff), n)
	}
}

// readCompactSize decodes a canonical CompactSize from the start of b and
// returns it with its length. Like Bitcoin Core, it rejects encodings
// longer than necessary.
func readCompactSize(b []byte) (n uint64, size int, err error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: no bytes, not even the item count N", ErrTruncated)
	}
	var min uint64
	switch b[0] {
	case 0xfd:
		size, min = 3, 0xfd
	case 0xfe:
		size, min = 5, 0x10000
	case 0xff:
		size, min = 9, 0x100000000
	default:
		return uint64(b[0]), 1, nil
	}
	if len(b) < size {
		return 0, 0, fmt.Errorf("%w: the item count N is a CompactSize of %s (its first byte is %#02x), and the filter has %s",
			ErrTruncated, byteCount(uint64(size)), b[0], byteCount(uint64(len(b))))
	}
	switch size {
	case 3:
		n = uint64(binary.LittleEndian.Uint16(b[1:]))
	case 5:
		n = uint64(binary.LittleEndian.Uint32(b[1:]))
	default:
		n = binary.LittleEndian.Uint64(b[1:])
	}
	if n < min {
		return 0, 0, fmt.Errorf("%w: N=%d written in %s; its shortest CompactSize takes %s",
			ErrNonCanonicalN, n, byteCount(uint64(size)), byteCount(uint64(compactSizeLen(n))))
	}
	return n, size, nil
}
