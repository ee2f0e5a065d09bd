package bip37

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// FuzzDecodeMerkleBlock decodes and verifies arbitrary merkleblock
// payloads: no panic, only the package's errors, an exact round trip of
// whatever decodes, and matches that are consistent with the proof.
func FuzzDecodeMerkleBlock(f *testing.F) {
	v := loadMerkleVectors(f)
	for _, tc := range v.TxidCases {
		block := v.block(f, tc.Block)
		var ids []chainhash.Hash
		for _, s := range tc.Txids {
			ids = append(ids, pmtHash(f, s))
		}
		mb, _ := NewMerkleBlockFromTxids(block, ids)
		payload, err := EncodeMerkleBlock(mb)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(payload)
		f.Add(payload[:len(payload)-1])
	}
	for _, tc := range v.FilterCases {
		for _, step := range tc.Steps {
			if step.MerkleBlock != "" {
				b, err := hex.DecodeString(step.MerkleBlock)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
	head := make([]byte, 84)
	binary.LittleEndian.PutUint32(head[80:], 3)
	f.Add([]byte{})
	f.Add(head)
	f.Add(append(head, 0xfd, 0x01, 0x00, 0x00))
	f.Add(append(head, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
	f.Add(append(append(head, 1), append(make([]byte, 32), 1, 0xff)...))

	f.Fuzz(func(t *testing.T, data []byte) {
		mb, err := DecodeMerkleBlock(data)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTrailingData) && !errors.Is(err, ErrMerkleBadEncoding) {
				t.Fatalf("unexpected decode error %v", err)
			}
			return
		}
		again, err := EncodeMerkleBlock(mb)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("round trip: %v\n in  %x\n out %x", err, data, again)
		}
		matches, err := VerifyMerkleBlock(mb)
		if err != nil {
			for _, e := range []error{ErrMerkleNoTransactions, ErrMerkleTooManyTransactions, ErrMerkleMutated, ErrMerkleRootMismatch, ErrMerkleBadEncoding} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("unexpected verify error %v", err)
		}
		if len(matches) > len(mb.Hashes) {
			t.Fatalf("%d matches from %d hashes", len(matches), len(mb.Hashes))
		}
		for i, m := range matches {
			if m.Index >= mb.Transactions || (i > 0 && m.Index <= matches[i-1].Index) {
				t.Fatalf("match positions out of order or range: %v", pmtMatches(matches))
			}
			found := false
			for _, h := range mb.Hashes {
				found = found || *h == m.Txid
			}
			if !found {
				t.Fatalf("matched txid %v is not in the proof", m.Txid)
			}
		}
	})
}

// FuzzMerkleBlockBuildVerify builds a proof over synthetic txids for an
// arbitrary transaction count and match pattern; it must verify to exactly
// the matches it was built for.
func FuzzMerkleBlockBuildVerify(f *testing.F) {
	f.Add(uint16(1), []byte{1})
	f.Add(uint16(7), []byte{0x55})
	f.Add(uint16(100), []byte{0, 0, 0, 0x80})
	f.Add(uint16(4095), []byte{0xff, 0x01})
	f.Fuzz(func(t *testing.T, count uint16, pattern []byte) {
		ntx := 1 + int(count)%MaxMerkleTransactions
		txids := make([]chainhash.Hash, ntx)
		var seed [4]byte
		for i := range txids {
			binary.LittleEndian.PutUint32(seed[:], uint32(i))
			txids[i] = sha256.Sum256(seed[:])
		}
		match := make([]bool, ntx)
		var want []MerkleMatch
		for i := range match {
			if len(pattern) > 0 && pattern[(i/8)%len(pattern)]>>(i%8)&1 == 1 {
				match[i] = true
				want = append(want, MerkleMatch{Txid: txids[i], Index: uint32(i)})
			}
		}
		mb := buildMerkleBlock(&wire.BlockHeader{MerkleRoot: pmtRoot(txids)}, txids, match)
		got, err := VerifyMerkleBlock(mb)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d matches, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("match %d: %v, want %v", i, got[i], want[i])
			}
		}
	})
}
