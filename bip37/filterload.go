package bip37

import (
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/wire"
)

// MsgFilterLoad returns a filterload message carrying a copy of the filter.
func (f *Filter) MsgFilterLoad() *wire.MsgFilterLoad {
	return wire.NewMsgFilterLoad(f.Bits(), f.hashFuncs, f.tweak, f.flags)
}

// FilterFromMsg returns the filter a filterload message describes, after
// checking it against the protocol limits. The bit array is copied.
func FilterFromMsg(msg *wire.MsgFilterLoad) (*Filter, error) {
	return NewFilterFromParams(msg.Filter, msg.HashFuncs, msg.Tweak, msg.Flags)
}

// MarshalBinary returns the filterload message payload: CompactSize length,
// bit array, hash function count (uint32 LE), tweak (uint32 LE), flags
// (one byte, kept as given even where BIP 37 defines no meaning for it). It
// fails only for a filter beyond the protocol's size limits.
func (f *Filter) MarshalBinary() ([]byte, error) {
	if err := checkParams(len(f.data), f.hashFuncs); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 9+len(f.data)+9)
	b = appendVarInt(b, uint64(len(f.data)))
	b = append(b, f.data...)
	b = binary.LittleEndian.AppendUint32(b, f.hashFuncs)
	b = binary.LittleEndian.AppendUint32(b, f.tweak)
	b = append(b, byte(f.flags))
	return b, nil
}

// UnmarshalBinary replaces f with the filter a filterload payload
// describes; see DecodeFilterLoad.
func (f *Filter) UnmarshalBinary(payload []byte) error {
	g, err := DecodeFilterLoad(payload)
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// DecodeFilterLoad parses a filterload message payload strictly: a
// canonical CompactSize length of at most MaxFilterSize, that many bytes, at
// most MaxHashFuncs hash functions, and no trailing bytes. It allocates only
// after the length has been checked against the limit and the bytes present.
//
// Like Bitcoin Core and btcd it accepts any flags byte and keeps it as
// given, so that a captured filter re-encodes byte for byte; matching uses
// only its two low bits, as Core does.
func DecodeFilterLoad(payload []byte) (*Filter, error) {
	size, n, err := readVarInt(payload)
	if err != nil {
		return nil, fmt.Errorf("filterload length: %w", err)
	}
	if size > MaxFilterSize {
		return nil, fmt.Errorf("filterload: %w: %s", ErrFilterTooLarge, plural(size, "byte"))
	}
	rest := payload[n:]
	if uint64(len(rest)) < size+9 {
		return nil, fmt.Errorf("filterload: %w: %s after the length, need %s", ErrTruncated, plural(len(rest), "byte"), plural(size+9, "byte"))
	}
	if uint64(len(rest)) > size+9 {
		return nil, fmt.Errorf("filterload: %w: %s", ErrTrailingData, plural(uint64(len(rest))-size-9, "byte"))
	}
	bitArray := rest[:size]
	tail := rest[size:]
	hashFuncs := binary.LittleEndian.Uint32(tail)
	tweak := binary.LittleEndian.Uint32(tail[4:])
	flags := wire.BloomUpdateType(tail[8])
	f, err := NewFilterFromParams(bitArray, hashFuncs, tweak, flags)
	if err != nil {
		return nil, fmt.Errorf("filterload: %w", err)
	}
	return f, nil
}

// ValidateFilterAdd checks a filteradd element against Core's limit of
// MaxFilterAddDataSize bytes; a node disconnects a peer that sends a
// larger one.
func ValidateFilterAdd(data []byte) error {
	if len(data) > MaxFilterAddDataSize {
		return fmt.Errorf("%w: %s", ErrFilterAddTooLarge, plural(len(data), "byte"))
	}
	return nil
}

// FilterAdd applies a filteradd message: it validates data and inserts it.
func (f *Filter) FilterAdd(data []byte) error {
	if err := ValidateFilterAdd(data); err != nil {
		return err
	}
	f.Add(data)
	return nil
}
