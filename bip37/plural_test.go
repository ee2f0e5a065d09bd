package bip37

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "byte", "0 bytes"},
		{1, "byte", "1 byte"},
		{2, "byte", "2 bytes"},
		{1, "hash", "1 hash"},
		{3, "hash", "3 hashes"},
		{1, "flag byte", "1 flag byte"},
		{9, "flag bit", "9 flag bits"},
	} {
		if got := plural(tc.n, tc.noun); got != tc.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}

// TestDecoderErrorsCountInSingular checks that the decoders' errors say
// "1 byte", "1 hash" and "1 flag byte" where there is one.
func TestDecoderErrorsCountInSingular(t *testing.T) {
	header := make([]byte, wire.MaxBlockHeaderPayload+4)
	binary.LittleEndian.PutUint32(header[wire.MaxBlockHeaderPayload:], 1)
	oneHash := append(bytes.Clone(header), 1)
	oneFlag := append(append(bytes.Clone(header), 0), 1)
	trailing := append(append(bytes.Clone(header), 0, 0), 7)
	loadTrailing := append([]byte{1, 0xff, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"merkleblock of one byte", decodeErr(DecodeMerkleBlock([]byte{0})), "merkleblock of 1 byte,"},
		{"one hash declared", decodeErr(DecodeMerkleBlock(oneHash)), "1 hash declared, 0 bytes left"},
		{"one flag byte declared", decodeErr(DecodeMerkleBlock(oneFlag)), "1 flag byte declared, 0 bytes left"},
		{"one byte after the flags", decodeErr(DecodeMerkleBlock(trailing)), ": 1 byte after the merkleblock flags"},
		{"one byte after a filterload", decodeErr(DecodeFilterLoad(loadTrailing)), ": 1 byte"},
		{"a filterload length cut short", decodeErr(DecodeFilterLoad([]byte{0xfd})), "filterload length: payload truncated: a CompactSize of 3 bytes (its first byte is 0xfd), with 1 byte left"},
		{"an empty filterload", decodeErr(DecodeFilterLoad(nil)), "filterload length: payload truncated: no bytes where a CompactSize begins"},
		{"a hash count cut short", decodeErr(DecodeMerkleBlock(append(bytes.Clone(header), 0xfe, 1))), "merkleblock hash count cut short: payload truncated: a CompactSize of 5 bytes (its first byte is 0xfe), with 2 bytes left"},
		{"a hash count longer than it needs", decodeErr(DecodeMerkleBlock(append(bytes.Clone(header), 0xfd, 1, 0))), "merkleblock hash count: non-canonical CompactSize: 1 written in 3 bytes; its shortest CompactSize takes 1 byte"},
		{"the header alone", decodeErr(DecodeMerkleBlock([]byte{0})), "the header and transaction count alone take 84 bytes"},
		{"one hash for one transaction too many", verifyErr(&wire.MsgMerkleBlock{Transactions: 1, Hashes: make([]*chainhash.Hash, 2)}), "2 hashes for 1 transaction"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || pluralOfOne.MatchString(tc.err.Error()) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

// pluralOfOne finds a count of one with a plural noun.
var pluralOfOne = regexp.MustCompile(`\b1 (?:flag )?(?:bytes|hashes|bits|transactions)\b`)

func decodeErr[T any](_ T, err error) error { return err }

func verifyErr(mb *wire.MsgMerkleBlock) error {
	_, err := VerifyMerkleBlock(mb)
	return err
}
