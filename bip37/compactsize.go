package bip37

import (
	"encoding/binary"
	"fmt"
)

// readVarInt decodes a canonical CompactSize integer and returns it with the
// number of bytes it took.
func readVarInt(b []byte) (v uint64, n int, err error) {
	if len(b) < 1 {
		return 0, 0, fmt.Errorf("%w: no bytes where a CompactSize begins", ErrTruncated)
	}
	var min uint64
	switch b[0] {
	case 0xfd:
		n, min = 3, 0xfd
	case 0xfe:
		n, min = 5, 0x10000
	case 0xff:
		n, min = 9, 0x100000000
	default:
		return uint64(b[0]), 1, nil
	}
	if len(b) < n {
		return 0, 0, fmt.Errorf("%w: a CompactSize of %s (its first byte is %#02x), with %s left",
			ErrTruncated, plural(n, "byte"), b[0], plural(len(b), "byte"))
	}
	switch n {
	case 3:
		v = uint64(binary.LittleEndian.Uint16(b[1:]))
	case 5:
		v = uint64(binary.LittleEndian.Uint32(b[1:]))
	default:
		v = binary.LittleEndian.Uint64(b[1:])
	}
	if v < min {
		return 0, 0, fmt.Errorf("%w: %d written in %s; its shortest CompactSize takes %s",
			ErrNonCanonicalSize, v, plural(n, "byte"), plural(varIntLen(v), "byte"))
	}
	return v, n, nil
}

// varIntLen is the length of the shortest CompactSize of v.
func varIntLen(v uint64) int {
	switch {
	case v < 0xfd:
		return 1
	case v <= 0xffff:
		return 3
	case v <= 0xffffffff:
		return 5
	}
	return 9
}

// appendVarInt appends a Bitcoin CompactSize integer.
func appendVarInt(b []byte, v uint64) []byte {
	switch {
	case v < 0xfd:
		return append(b, byte(v))
	case v <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(b, 0xfd), uint16(v))
	case v <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xff), v)
}
