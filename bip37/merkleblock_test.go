package bip37

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// merkleVectors is testvectors/bip37/merkleblock.json (Bitcoin Core's
// merkle block tests); see its "source" and "format" fields.
type merkleVectors struct {
	Source string `json:"source"`
	Blocks []struct {
		Hash string `json:"hash"`
		Hex  string `json:"hex"`
	} `json:"blocks"`
	FilterCases []struct {
		Name   string `json:"name"`
		Block  string `json:"block"`
		Filter struct {
			Elements uint32  `json:"elements"`
			FPRate   float64 `json:"fp_rate"`
			Tweak    uint32  `json:"tweak"`
			Flags    string  `json:"flags"`
		} `json:"filter"`
		Steps []struct {
			InsertTxids          []string            `json:"insert_txids"`
			InsertHex            []string            `json:"insert_hex"`
			Matches              []merkleVectorMatch `json:"matches"`
			MerkleBlock          string              `json:"merkleblock"`
			ContainsOutpoints    []merkleVectorMatch `json:"contains_outpoints"`
			NotContainsOutpoints []merkleVectorMatch `json:"not_contains_outpoints"`
		} `json:"steps"`
	} `json:"filter_cases"`
	TxidCases []struct {
		Name    string              `json:"name"`
		Block   string              `json:"block"`
		Txids   []string            `json:"txids"`
		Matches []merkleVectorMatch `json:"matches"`
	} `json:"txid_cases"`
	Malleability struct {
		Name  string   `json:"name"`
		Txids []string `json:"txids"`
		Match []bool   `json:"match"`
	} `json:"malleability"`
}

// merkleVectorMatch is a txid (display order) with a block position or an
// output index.
type merkleVectorMatch struct {
	Index uint32 `json:"index"`
	Txid  string `json:"txid"`
}

func loadMerkleVectors(tb testing.TB) *merkleVectors {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testvectors", "bip37", "merkleblock.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var v merkleVectors
	if err := json.Unmarshal(data, &v); err != nil {
		tb.Fatal(err)
	}
	if v.Source == "" || len(v.Blocks) == 0 {
		tb.Fatal("merkleblock.json: no source or no blocks")
	}
	return &v
}

// block returns the vector block with the given display hash, checking
// that the stored bytes hash to it and commit to their transactions.
func (v *merkleVectors) block(tb testing.TB, hash string) *wire.MsgBlock {
	tb.Helper()
	for _, b := range v.Blocks {
		if b.Hash != hash {
			continue
		}
		raw, err := hex.DecodeString(b.Hex)
		if err != nil {
			tb.Fatal(err)
		}
		var blk wire.MsgBlock
		if err := blk.Deserialize(bytes.NewReader(raw)); err != nil {
			tb.Fatalf("block %s: %v", hash, err)
		}
		if got := blk.BlockHash().String(); got != hash {
			tb.Fatalf("block %s hashes to %s: damaged vector", hash, got)
		}
		if root := pmtRoot(pmtTxids(&blk)); root != blk.Header.MerkleRoot {
			tb.Fatalf("block %s: transactions do not match the merkle root", hash)
		}
		return &blk
	}
	tb.Fatalf("no vector block %s", hash)
	return nil
}

func pmtHash(tb testing.TB, s string) chainhash.Hash {
	tb.Helper()
	h, err := chainhash.NewHashFromStr(s)
	if err != nil || len(s) != 64 {
		tb.Fatalf("bad hash %q: %v", s, err)
	}
	return *h
}

func pmtMatches(ms []MerkleMatch) []merkleVectorMatch {
	out := make([]merkleVectorMatch, len(ms))
	for i, m := range ms {
		out[i] = merkleVectorMatch{Index: m.Index, Txid: m.Txid.String()}
	}
	return out
}

func pmtSameMatches(got []MerkleMatch, want []merkleVectorMatch) bool {
	return slices.Equal(pmtMatches(got), want)
}

func pmtTxids(b *wire.MsgBlock) []chainhash.Hash {
	out := make([]chainhash.Hash, len(b.Transactions))
	for i, tx := range b.Transactions {
		out[i] = tx.TxHash()
	}
	return out
}

// pmtRoot is a reference merkle root, written independently of the
// partial tree code: pair level by level, duplicating an odd last node.
func pmtRoot(txids []chainhash.Hash) chainhash.Hash {
	level := slices.Clone(txids)
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := level[:0:0]
		for i := 0; i < len(level); i += 2 {
			next = append(next, chainhash.DoubleHashH(append(level[i][:], level[i+1][:]...)))
		}
		level = next
	}
	return level[0]
}

// pmtCheckProof verifies mb, expects the given matches and checks that the
// payload survives an encode/decode round trip.
func pmtCheckProof(t *testing.T, mb *wire.MsgMerkleBlock, want []MerkleMatch) {
	t.Helper()
	got, err := VerifyMerkleBlock(mb)
	if err != nil {
		t.Fatalf("VerifyMerkleBlock: %v", err)
	}
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("verified matches %v, built %v", pmtMatches(got), pmtMatches(want))
	}
	payload, err := EncodeMerkleBlock(mb)
	if err != nil {
		t.Fatal(err)
	}
	// btcd's encoder must agree byte for byte.
	var wbuf bytes.Buffer
	if err := mb.BtcEncode(&wbuf, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(payload, wbuf.Bytes()) {
		t.Fatalf("EncodeMerkleBlock differs from btcd wire encoding")
	}
	back, err := DecodeMerkleBlock(payload)
	if err != nil {
		t.Fatalf("DecodeMerkleBlock: %v", err)
	}
	again, err := EncodeMerkleBlock(back)
	if err != nil || !bytes.Equal(again, payload) {
		t.Fatalf("round trip changed the payload: %v", err)
	}
}

func TestMerkleBlockTxidVectors(t *testing.T) {
	v := loadMerkleVectors(t)
	if len(v.TxidCases) == 0 {
		t.Fatal("no txid cases")
	}
	for _, tc := range v.TxidCases {
		t.Run(tc.Name, func(t *testing.T) {
			block := v.block(t, tc.Block)
			var ids []chainhash.Hash
			for _, s := range tc.Txids {
				ids = append(ids, pmtHash(t, s))
			}
			mb, matches := NewMerkleBlockFromTxids(block, ids)
			if mb.Header.BlockHash() != block.BlockHash() {
				t.Fatal("merkle block header differs from the block's")
			}
			if mb.Transactions != uint32(len(block.Transactions)) {
				t.Fatalf("transactions %d, want %d", mb.Transactions, len(block.Transactions))
			}
			if !pmtSameMatches(matches, tc.Matches) {
				t.Fatalf("matches %v, want %v", pmtMatches(matches), tc.Matches)
			}
			pmtCheckProof(t, mb, matches)
		})
	}
}

var merkleVectorFlags = map[string]wire.BloomUpdateType{
	"none":          wire.BloomUpdateNone,
	"all":           wire.BloomUpdateAll,
	"p2pubkey-only": wire.BloomUpdateP2PubkeyOnly,
}

// TestMerkleBlockFilterVectors runs Core's merkle_block_* tests: each step
// inserts data into one filter and builds the merkle block with it, so a
// step sees the updates of the steps before it.
func TestMerkleBlockFilterVectors(t *testing.T) {
	v := loadMerkleVectors(t)
	if len(v.FilterCases) == 0 {
		t.Fatal("no filter cases")
	}
	for _, tc := range v.FilterCases {
		t.Run(tc.Name, func(t *testing.T) {
			block := v.block(t, tc.Block)
			flags, ok := merkleVectorFlags[tc.Filter.Flags]
			if !ok {
				t.Fatalf("unknown flags %q", tc.Filter.Flags)
			}
			f := NewFilter(tc.Filter.Elements, tc.Filter.FPRate, tc.Filter.Tweak, flags)
			for i, step := range tc.Steps {
				for _, s := range step.InsertTxids {
					h := pmtHash(t, s)
					f.Add(h[:])
				}
				for _, s := range step.InsertHex {
					b, err := hex.DecodeString(s)
					if err != nil {
						t.Fatal(err)
					}
					f.Add(b)
				}
				mb, matches := NewMerkleBlock(block, f)
				if mb.Header.BlockHash() != block.BlockHash() {
					t.Fatalf("step %d: header differs from the block's", i)
				}
				if step.Matches != nil && !pmtSameMatches(matches, step.Matches) {
					t.Fatalf("step %d: matches %v, want %v", i, pmtMatches(matches), step.Matches)
				}
				pmtCheckProof(t, mb, matches)
				if step.MerkleBlock != "" {
					got, _ := EncodeMerkleBlock(mb)
					if hex.EncodeToString(got) != step.MerkleBlock {
						t.Fatalf("step %d: payload\n %x\nwant\n %s", i, got, step.MerkleBlock)
					}
				}
				for _, op := range step.ContainsOutpoints {
					if !f.ContainsOutPoint(wire.NewOutPoint(pmtPtr(pmtHash(t, op.Txid)), op.Index)) {
						t.Errorf("step %d: filter lacks outpoint %s:%d", i, op.Txid, op.Index)
					}
				}
				for _, op := range step.NotContainsOutpoints {
					if f.ContainsOutPoint(wire.NewOutPoint(pmtPtr(pmtHash(t, op.Txid)), op.Index)) {
						t.Errorf("step %d: filter holds outpoint %s:%d", i, op.Txid, op.Index)
					}
				}
			}
		})
	}
}

func pmtPtr[T any](v T) *T { return &v }

// TestMerkleBlockMalleability is Core's pmt_malleability: a tree over a
// txid list whose tail is duplicated has the root of the list without the
// duplicate, and its proof must be rejected.
func TestMerkleBlockMalleability(t *testing.T) {
	v := loadMerkleVectors(t).Malleability
	if len(v.Txids) != len(v.Match) || len(v.Txids) == 0 {
		t.Fatal("bad malleability vector")
	}
	txids := make([]chainhash.Hash, len(v.Txids))
	for i, s := range v.Txids {
		txids[i] = pmtHash(t, s)
	}
	root := pmtRoot(txids)
	// The point of the attack: the mutated list commits to the same root
	// as the honest one of ten transactions.
	if honest := pmtRoot(txids[:10]); honest != root {
		t.Fatal("vector does not exhibit CVE-2012-2459")
	}
	mb := buildMerkleBlock(&wire.BlockHeader{MerkleRoot: root}, txids, v.Match)
	if _, err := VerifyMerkleBlock(mb); !errors.Is(err, ErrMerkleMutated) {
		t.Fatalf("got %v, want ErrMerkleMutated", err)
	}
}

// TestPartialMerkleTreeRandom follows Core's pmt_test1: trees of many sizes,
// random subsets with inclusion chances 1, 1/2, ..., 1/128; the proof must
// verify to the real root with the same matches, stay within Core's size
// bound, and break when any bit of any hash is flipped.
func TestPartialMerkleTreeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ntx := range []int{1, 4, 7, 17, 56, 100, 127, 256, 312, 513, 1000, 4095} {
		txids := make([]chainhash.Hash, ntx)
		for i := range txids {
			pmtFill(rng, txids[i][:])
		}
		root := pmtRoot(txids)
		height := 1
		for n := ntx; n > 1; n = (n + 1) / 2 {
			height++
		}
		for att := 1; att < 15; att++ {
			match := make([]bool, ntx)
			var want []MerkleMatch
			for j := range match {
				match[j] = rng.Uint32()&((1<<(att/2))-1) == 0
				if match[j] {
					want = append(want, MerkleMatch{Txid: txids[j], Index: uint32(j)})
				}
			}
			mb := buildMerkleBlock(&wire.BlockHeader{MerkleRoot: root}, txids, match)
			pmtCheckProof(t, mb, want)

			// Core's size guarantee for the serialized tree (tx count,
			// hashes, flags): at most 10 + (258*n+7)/8 bytes.
			n := min(ntx, 1+len(want)*height)
			size := 4 + wire.VarIntSerializeSize(uint64(len(mb.Hashes))) + 32*len(mb.Hashes) +
				wire.VarIntSerializeSize(uint64(len(mb.Flags))) + len(mb.Flags)
			if size > 10+(258*n+7)/8 {
				t.Fatalf("ntx %d: tree of %d bytes exceeds Core's bound", ntx, size)
			}

			for range 4 {
				bad := cloneMerkleBlock(mb)
				k := rng.IntN(len(bad.Hashes))
				bit := rng.IntN(256)
				bad.Hashes[k][bit/8] ^= 1 << (bit % 8)
				if _, err := VerifyMerkleBlock(bad); err == nil {
					t.Fatalf("ntx %d: flipping bit %d of hash %d went unnoticed", ntx, bit, k)
				}
			}
		}
	}
}

// TestVerifyEverySubset builds and verifies a proof for every subset of
// matched transactions of blocks of 1 to 9 transactions, and checks that
// every pmtMutation of each proof is rejected.
func TestVerifyEverySubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rejected, leafFlips := 0, 0
	for ntx := 1; ntx <= 9; ntx++ {
		txids := make([]chainhash.Hash, ntx)
		for i := range txids {
			pmtFill(rng, txids[i][:])
		}
		root := pmtRoot(txids)
		for set := 0; set < 1<<ntx; set++ {
			match := make([]bool, ntx)
			var want []MerkleMatch
			for j := range match {
				if set&(1<<j) != 0 {
					match[j] = true
					want = append(want, MerkleMatch{Txid: txids[j], Index: uint32(j)})
				}
			}
			mb := buildMerkleBlock(&wire.BlockHeader{MerkleRoot: root}, txids, match)
			pmtCheckProof(t, mb, want)
			for _, m := range pmtMutations(mb, rng) {
				got, err := VerifyMerkleBlock(m.mb)
				if err != nil {
					rejected++
					continue
				}
				// Only a leaf's flag bit is not committed to: flipping it
				// claims or hides the match of a txid whose hash the proof
				// carries anyway. What is accepted must be true.
				if m.name != "flip flag bit" || !pmtTrueClaims(got, txids) {
					t.Fatalf("ntx %d set %b: mutation %q accepted with matches %v", ntx, set, m.name, pmtMatches(got))
				}
				leafFlips++
			}
		}
	}
	if rejected == 0 {
		t.Fatal("no mutation was rejected")
	}
	t.Logf("%d mutations rejected; %d leaf flag flips accepted, each proving only true matches", rejected, leafFlips)
}

// pmtTrueClaims reports whether every match is the txid at its position.
func pmtTrueClaims(ms []MerkleMatch, txids []chainhash.Hash) bool {
	for _, m := range ms {
		if int(m.Index) >= len(txids) || txids[m.Index] != m.Txid {
			return false
		}
	}
	return true
}

type pmtMutation struct {
	name string
	mb   *wire.MsgMerkleBlock
}

// pmtMutations returns altered copies of a valid proof: every flag bit
// flipped, one bit of every byte of every hash flipped, each hash dropped,
// a hash inserted at each position, a flag byte dropped and added, and the
// header root changed.
func pmtMutations(mb *wire.MsgMerkleBlock, rng *rand.Rand) []pmtMutation {
	var out []pmtMutation
	for i := range len(mb.Flags) * 8 {
		m := cloneMerkleBlock(mb)
		m.Flags[i/8] ^= 1 << (i % 8)
		out = append(out, pmtMutation{"flip flag bit", m})
	}
	for k := range mb.Hashes {
		for i := range chainhash.HashSize {
			m := cloneMerkleBlock(mb)
			m.Hashes[k][i] ^= 1 << (i % 8)
			out = append(out, pmtMutation{"flip hash bit", m})
		}
		m := cloneMerkleBlock(mb)
		m.Hashes = slices.Delete(m.Hashes, k, k+1)
		out = append(out, pmtMutation{"drop hash", m})
	}
	for k := 0; k <= len(mb.Hashes); k++ {
		m := cloneMerkleBlock(mb)
		var extra chainhash.Hash
		pmtFill(rng, extra[:])
		m.Hashes = slices.Insert(m.Hashes, k, &extra)
		out = append(out, pmtMutation{"insert random hash", m})
		if k > 0 {
			m := cloneMerkleBlock(mb)
			dup := *mb.Hashes[k-1]
			m.Hashes = slices.Insert(m.Hashes, k, &dup)
			out = append(out, pmtMutation{"duplicate hash", m})
		}
	}
	m := cloneMerkleBlock(mb)
	m.Flags = m.Flags[:len(m.Flags)-1]
	out = append(out, pmtMutation{"drop flag byte", m})
	m = cloneMerkleBlock(mb)
	m.Flags = append(m.Flags, 0)
	out = append(out, pmtMutation{"add zero flag byte", m})
	m = cloneMerkleBlock(mb)
	m.Header.MerkleRoot[0] ^= 1
	out = append(out, pmtMutation{"change header root", m})
	return out
}

func cloneMerkleBlock(mb *wire.MsgMerkleBlock) *wire.MsgMerkleBlock {
	c := *mb
	c.Flags = slices.Clone(mb.Flags)
	c.Hashes = make([]*chainhash.Hash, len(mb.Hashes))
	for i, h := range mb.Hashes {
		hc := *h
		c.Hashes[i] = &hc
	}
	return &c
}

func pmtFill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// TestVerifyTransactionCountChange shows what changing only the claimed
// transaction count does: the count is not committed to by the root, so a
// different count can describe the same tree shape (Core behaves the
// same). Whenever such a proof is accepted, each transaction it proves
// must be the one at that position.
func TestVerifyTransactionCountChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	accepted := 0
	for ntx := 1; ntx <= 40; ntx++ {
		txids := make([]chainhash.Hash, ntx)
		for i := range txids {
			pmtFill(rng, txids[i][:])
		}
		root := pmtRoot(txids)
		for range 20 {
			match := make([]bool, ntx)
			var want []MerkleMatch
			for j := range match {
				if rng.IntN(4) == 0 {
					match[j] = true
					want = append(want, MerkleMatch{Txid: txids[j], Index: uint32(j)})
				}
			}
			mb := buildMerkleBlock(&wire.BlockHeader{MerkleRoot: root}, txids, match)
			for _, n := range []uint32{uint32(ntx) - 1, uint32(ntx) + 1, uint32(ntx) * 2} {
				m := cloneMerkleBlock(mb)
				m.Transactions = n
				got, err := VerifyMerkleBlock(m)
				if err != nil {
					continue
				}
				accepted++
				if !pmtTrueClaims(got, txids) {
					t.Fatalf("ntx %d claimed as %d: proves %v, built for %v", ntx, n, pmtMatches(got), pmtMatches(want))
				}
			}
		}
	}
	t.Logf("%d proofs with a changed count were accepted, all proving true matches", accepted)
}

func TestVerifyMerkleBlockRejects(t *testing.T) {
	h := func(b byte) *chainhash.Hash { return &chainhash.Hash{b} }
	leaf1, leaf2 := chainhash.Hash{1}, chainhash.Hash{2}
	root2 := pmtRoot([]chainhash.Hash{leaf1, leaf2})
	valid := &wire.MsgMerkleBlock{ // two transactions, the second matched
		Header:       wire.BlockHeader{MerkleRoot: root2},
		Transactions: 2,
		Hashes:       []*chainhash.Hash{&leaf1, &leaf2},
		Flags:        []byte{0b101},
	}
	if got, err := VerifyMerkleBlock(valid); err != nil || len(got) != 1 || got[0].Index != 1 || got[0].Txid != leaf2 {
		t.Fatalf("valid proof: %v, %v", got, err)
	}
	with := func(f func(m *wire.MsgMerkleBlock)) *wire.MsgMerkleBlock {
		m := cloneMerkleBlock(valid)
		f(m)
		return m
	}
	tests := []struct {
		name string
		mb   *wire.MsgMerkleBlock
		want error
	}{
		{"zero transactions", with(func(m *wire.MsgMerkleBlock) { m.Transactions = 0 }), ErrMerkleNoTransactions},
		{"count beyond a block", with(func(m *wire.MsgMerkleBlock) { m.Transactions = MaxMerkleTransactions + 1 }), ErrMerkleTooManyTransactions},
		{"count max uint32", with(func(m *wire.MsgMerkleBlock) { m.Transactions = 1<<32 - 1 }), ErrMerkleTooManyTransactions},
		{"more hashes than transactions", with(func(m *wire.MsgMerkleBlock) { m.Hashes = append(m.Hashes, h(3)) }), ErrMerkleSurplusHashes},
		{"fewer bits than hashes", &wire.MsgMerkleBlock{Transactions: 9, Hashes: []*chainhash.Hash{h(1), h(2), h(3), h(4), h(5), h(6), h(7), h(8), h(9)}, Flags: []byte{0xff}}, ErrMerkleMissingBits},
		{"no flags", with(func(m *wire.MsgMerkleBlock) { m.Flags = nil }), ErrMerkleMissingBits},
		{"no hashes", with(func(m *wire.MsgMerkleBlock) { m.Hashes = nil }), ErrMerkleMissingHashes},
		{"nil hash", with(func(m *wire.MsgMerkleBlock) { m.Hashes[1] = nil }), ErrMerkleNonCanonical},
		{"surplus flag byte", with(func(m *wire.MsgMerkleBlock) { m.Flags = append(m.Flags, 0) }), ErrMerkleSurplusBits},
		{"non-zero padding", with(func(m *wire.MsgMerkleBlock) { m.Flags[0] |= 0x80 }), ErrMerkleSurplusBits},
		{"missing hash", with(func(m *wire.MsgMerkleBlock) { m.Transactions = 3; m.Flags[0] = 0b1111 }), ErrMerkleMissingHashes},
		{"unused hash", with(func(m *wire.MsgMerkleBlock) { m.Flags[0] = 0 }), ErrMerkleSurplusHashes},
		{"identical siblings", with(func(m *wire.MsgMerkleBlock) { m.Hashes[1] = &leaf1 }), ErrMerkleMutated},
		{"root mismatch", with(func(m *wire.MsgMerkleBlock) { m.Header.MerkleRoot = leaf1 }), ErrMerkleRootMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := VerifyMerkleBlock(tt.mb)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v (matches %v), want %v", err, got, tt.want)
			}
			if got != nil {
				t.Fatalf("matches %v returned with an error", got)
			}
		})
	}
	// The precise kinds are all malformed encodings.
	for _, e := range []error{ErrMerkleSurplusHashes, ErrMerkleMissingHashes, ErrMerkleSurplusBits, ErrMerkleMissingBits, ErrMerkleNonCanonical} {
		if !errors.Is(e, ErrMerkleBadEncoding) {
			t.Errorf("%v is not an ErrMerkleBadEncoding", e)
		}
	}
}

func TestDecodeMerkleBlock(t *testing.T) {
	v := loadMerkleVectors(t)
	tc := v.TxidCases[0]
	block := v.block(t, tc.Block)
	mb, _ := NewMerkleBlockFromTxids(block, []chainhash.Hash{pmtHash(t, tc.Txids[0])})
	payload, err := EncodeMerkleBlock(mb)
	if err != nil {
		t.Fatal(err)
	}

	// Every proper prefix is truncated.
	for n := range len(payload) {
		if _, err := DecodeMerkleBlock(payload[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix of %d bytes: %v, want ErrTruncated", n, err)
		}
	}
	if _, err := DecodeMerkleBlock(append(slices.Clone(payload), 0)); !errors.Is(err, ErrTrailingData) {
		t.Fatalf("trailing byte: %v, want ErrTrailingData", err)
	}

	head := payload[:84]
	cat := func(parts ...[]byte) []byte { return bytes.Join(append([][]byte{head}, parts...), nil) }
	tests := []struct {
		name    string
		payload []byte
		want    error
	}{
		{"hash count 0xfd non-canonical", cat([]byte{0xfd, 0x01, 0x00}), ErrMerkleNonCanonical},
		{"hash count 0xfe non-canonical", cat([]byte{0xfe, 0xff, 0xff, 0, 0}), ErrMerkleNonCanonical},
		{"hash count 0xff non-canonical", cat([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}), ErrMerkleNonCanonical},
		{"huge hash count", cat([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), ErrTruncated},
		{"hash count cut short", cat([]byte{0xfe, 0x00}), ErrTruncated},
		{"huge flag count", cat([]byte{0x00, 0xfe, 0xff, 0xff, 0xff, 0xff}), ErrTruncated},
		{"flag count non-canonical", cat([]byte{0x00, 0xfd, 0x00, 0x00}), ErrMerkleNonCanonical},
		{"no flag count", cat([]byte{0x00}), ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeMerkleBlock(tt.payload); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}

	// Empty hash and flag lists decode (and fail verification, not
	// decoding).
	mb2, err := DecodeMerkleBlock(cat([]byte{0, 0}))
	if err != nil || len(mb2.Hashes) != 0 || len(mb2.Flags) != 0 {
		t.Fatalf("empty lists: %v", err)
	}
	if _, err := VerifyMerkleBlock(mb2); !errors.Is(err, ErrMerkleBadEncoding) {
		t.Fatalf("empty lists verify: %v", err)
	}
}

// TestDecodeMerkleBlockHugeCountAllocs checks that a count claiming more
// than the payload holds is refused before anything is allocated for it.
func TestDecodeMerkleBlockHugeCountAllocs(t *testing.T) {
	payload := append(make([]byte, 84), 0xfe, 0xff, 0xff, 0xff, 0x00) // 16M hashes
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := DecodeMerkleBlock(payload); err == nil {
			t.Fatal("decoded")
		}
	})
	if allocs > 8 {
		t.Fatalf("%v allocations for a refused count", allocs)
	}
}

// TestDecodeMerkleBlockMatchesBtcd decodes random valid proofs with both
// DecodeMerkleBlock and btcd's wire decoder.
func TestDecodeMerkleBlockMatchesBtcd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		ntx := 1 + rng.IntN(600)
		txids := make([]chainhash.Hash, ntx)
		for i := range txids {
			pmtFill(rng, txids[i][:])
		}
		match := make([]bool, ntx)
		for i := range match {
			match[i] = rng.IntN(8) == 0
		}
		hdr := wire.BlockHeader{Version: rng.Int32(), Bits: rng.Uint32(), Nonce: rng.Uint32(), MerkleRoot: pmtRoot(txids)}
		mb := buildMerkleBlock(&hdr, txids, match)
		payload, err := EncodeMerkleBlock(mb)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := DecodeMerkleBlock(payload)
		if err != nil {
			t.Fatal(err)
		}
		var theirs wire.MsgMerkleBlock
		if err := theirs.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			t.Fatal(err)
		}
		if ours.Header != theirs.Header || ours.Transactions != theirs.Transactions ||
			!bytes.Equal(ours.Flags, theirs.Flags) || len(ours.Hashes) != len(theirs.Hashes) {
			t.Fatal("decoders disagree")
		}
		for i := range ours.Hashes {
			if *ours.Hashes[i] != *theirs.Hashes[i] {
				t.Fatalf("hash %d differs", i)
			}
		}
	}
}

// pmtRandomBlock returns a block of ntx distinct random transactions with
// a correct merkle root (computed by btcd's blockchain package). Inputs
// carry a well-formed signature and public key push; a quarter of them
// spend an output of an earlier transaction of the block, so that filter
// updates matter; outputs are P2PKH or, one in four, P2PK.
func pmtRandomBlock(rng *rand.Rand, ntx int) *wire.MsgBlock {
	blk := &wire.MsgBlock{Header: wire.BlockHeader{Version: 4, Bits: 0x1d00ffff, Nonce: rng.Uint32()}}
	var earlier []chainhash.Hash
	for range ntx {
		tx := wire.NewMsgTx(2)
		for range 1 + rng.IntN(3) {
			var prev chainhash.Hash
			pmtFill(rng, prev[:])
			index := rng.Uint32N(4)
			if len(earlier) > 0 && rng.IntN(4) == 0 {
				prev, index = earlier[rng.IntN(len(earlier))], 0
			}
			sig := make([]byte, 1+71+1+33)
			pmtFill(rng, sig)
			sig[0], sig[72] = 71, 33
			tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&prev, index), sig, nil))
		}
		for range 1 + rng.IntN(3) {
			var script []byte
			if rng.IntN(4) == 0 {
				pk := make([]byte, 33)
				pmtFill(rng, pk)
				script = append(append([]byte{33}, pk...), 0xac)
			} else {
				pkh := make([]byte, 20)
				pmtFill(rng, pkh)
				script = append(append([]byte{0x76, 0xa9, 0x14}, pkh...), 0x88, 0xac)
			}
			tx.AddTxOut(wire.NewTxOut(rng.Int64N(1e8), script))
		}
		tx.LockTime = rng.Uint32()
		blk.Transactions = append(blk.Transactions, tx)
		earlier = append(earlier, tx.TxHash())
	}
	utx := make([]*btcutil.Tx, ntx)
	for i, tx := range blk.Transactions {
		utx[i] = btcutil.NewTx(tx)
	}
	blk.Header.MerkleRoot = blockchain.CalcMerkleRoot(utx, false)
	return blk
}

// TestNewMerkleBlockMatchesBtcutil runs NewMerkleBlock and btcutil's
// bloom.NewMerkleBlock on random blocks with identical filters (same bits,
// hash functions, tweak and flags) holding txids, output pushes, input
// pushes and spent outpoints: the payloads, the matches and the updated
// filters must be identical.
func TestNewMerkleBlockMatchesBtcutil(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	totalMatches, updated := 0, 0
	for _, flags := range []wire.BloomUpdateType{wire.BloomUpdateNone, wire.BloomUpdateAll, wire.BloomUpdateP2PubkeyOnly} {
		for _, ntx := range []int{1, 2, 3, 5, 8, 13, 64, 99, 300} {
			blk := pmtRandomBlock(rng, ntx)
			theirs := bloom.NewFilter(uint32(ntx), rng.Uint32(), 1e-5, flags)
			ours, err := FilterFromMsg(theirs.MsgFilterLoad())
			if err != nil {
				t.Fatal(err)
			}
			for _, tx := range blk.Transactions {
				var elem []byte
				switch rng.IntN(12) {
				case 0:
					h := tx.TxHash()
					elem = h[:]
				case 1:
					script := tx.TxOut[0].PkScript
					if len(script) == 25 {
						elem = script[3:23]
					} else {
						elem = script[1:34]
					}
				case 2:
					elem = tx.TxIn[0].SignatureScript[73:]
				case 3:
					op := tx.TxIn[0].PreviousOutPoint
					theirs.AddOutPoint(&op)
					ours.AddOutPoint(&op)
				}
				if elem != nil {
					theirs.Add(elem)
					ours.Add(elem)
				}
			}
			before := ours.Bits()
			mbTheirs, idx := bloom.NewMerkleBlock(btcutil.NewBlock(blk), theirs)
			mbOurs, matches := NewMerkleBlock(blk, ours)
			a, _ := EncodeMerkleBlock(mbOurs)
			b, _ := EncodeMerkleBlock(mbTheirs)
			if !bytes.Equal(a, b) {
				t.Fatalf("flags %v ntx %d: payload differs from btcutil's", flags, ntx)
			}
			if len(matches) != len(idx) {
				t.Fatalf("flags %v ntx %d: %d matches, btcutil %d", flags, ntx, len(matches), len(idx))
			}
			for i, m := range matches {
				if m.Index != idx[i] || m.Txid != blk.Transactions[idx[i]].TxHash() {
					t.Fatalf("flags %v ntx %d: match %d is %d, btcutil %d", flags, ntx, i, m.Index, idx[i])
				}
			}
			if !bytes.Equal(ours.Bits(), theirs.MsgFilterLoad().Filter) {
				t.Fatalf("flags %v ntx %d: updated filters differ", flags, ntx)
			}
			pmtCheckProof(t, mbOurs, matches)
			totalMatches += len(matches)
			if !bytes.Equal(before, ours.Bits()) {
				updated++
			}
		}
	}
	// Guard against a vacuous comparison.
	if totalMatches == 0 || updated == 0 {
		t.Fatalf("%d matches, %d filters updated: the test exercises nothing", totalMatches, updated)
	}
	t.Logf("%d matches, %d filters updated by matches, all as btcutil", totalMatches, updated)
}

// TestNewMerkleBlockFromTxidsMatchesBtcutil builds merkle blocks with
// btcutil's bloom.NewMerkleBlock (a filter holding some txids) and with
// NewMerkleBlockFromTxids for the transactions btcutil matched: the
// payloads must be identical and verify to the same matches.
func TestNewMerkleBlockFromTxidsMatchesBtcutil(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, ntx := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 33, 100, 255, 257, 1000} {
		for range 6 {
			blk := pmtRandomBlock(rng, ntx)
			ublk := btcutil.NewBlock(blk)
			bf := bloom.NewFilter(uint32(ntx), 0, 1e-6, wire.BloomUpdateNone)
			for _, tx := range blk.Transactions {
				if rng.IntN(3) == 0 {
					h := tx.TxHash()
					bf.AddHash(&h)
				}
			}
			theirs, idx := bloom.NewMerkleBlock(ublk, bf)
			var ids []chainhash.Hash
			var want []MerkleMatch
			for _, i := range idx {
				h := blk.Transactions[i].TxHash()
				ids = append(ids, h)
				want = append(want, MerkleMatch{Txid: h, Index: i})
			}
			ours, matches := NewMerkleBlockFromTxids(blk, ids)
			if !slices.Equal(matches, want) && len(matches)+len(want) != 0 {
				t.Fatalf("ntx %d: matches %v, btcutil %v", ntx, pmtMatches(matches), pmtMatches(want))
			}
			a, _ := EncodeMerkleBlock(ours)
			b, _ := EncodeMerkleBlock(theirs)
			if !bytes.Equal(a, b) {
				t.Fatalf("ntx %d: payload differs from btcutil's\n ours   %x\n theirs %x", ntx, a, b)
			}
			pmtCheckProof(t, theirs, want)
		}
	}
}

func TestNewMerkleBlockEmptyBlock(t *testing.T) {
	mb, matches := NewMerkleBlockFromTxids(&wire.MsgBlock{}, nil)
	if mb.Transactions != 0 || len(mb.Hashes) != 0 || len(matches) != 0 {
		t.Fatalf("empty block: %+v %v", mb, matches)
	}
	if _, err := VerifyMerkleBlock(mb); !errors.Is(err, ErrMerkleNoTransactions) {
		t.Fatalf("got %v", err)
	}
}

// TestNewMerkleBlockNilFilter: a nil filter matches nothing (Core's
// constructor with a null filter) instead of panicking.
func TestNewMerkleBlockNilFilter(t *testing.T) {
	block := pmtRandomBlock(rand.New(rand.NewPCG(5, 6)), 7)
	mb, matches := NewMerkleBlock(block, nil)
	if len(matches) != 0 || mb.Transactions != 7 || len(mb.Hashes) != 1 {
		t.Fatalf("nil filter: %d matches, %d transactions, %d hashes", len(matches), mb.Transactions, len(mb.Hashes))
	}
	got, err := VerifyMerkleBlock(mb)
	if err != nil || len(got) != 0 {
		t.Fatalf("verify: %v, %d matches", err, len(got))
	}
}
