package bip37

import (
	"encoding/binary"
	"fmt"
)

// readVarInt decodes a canonical CompactSize integer and returns it with the
// number of bytes it took.
func readVarInt(b []byte) (v uint64, n int, err error) {
	if len(b) < 1 {
		return 0, 0, ErrTruncated
	}
	var min uint64
	switch b[0] {
	case 0xfd:
		if len(b) < 3 {
			return 0, 0, ErrTruncated
		}
		v, n, min = uint64(binary.LittleEndian.Uint16(b[1:])), 3, 0xfd
	case 0xfe:
		if len(b) < 5 {
			return 0, 0, ErrTruncated
		}
		v, n, min = uint64(binary.LittleEndian.Uint32(b[1:])), 5, 0x10000
	case 0xff:
		if len(b) < 9 {
			return 0, 0, ErrTruncated
		}
		v, n, min = binary.LittleEndian.Uint64(b[1:]), 9, 0x100000000
	default:
		return uint64(b[0]), 1, nil
	}
	if v < min {
		return 0, 0, fmt.Errorf("%w: %d encoded in %d bytes", ErrNonCanonicalSize, v, n)
	}
	return v, n, nil
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
