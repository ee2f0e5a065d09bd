package gcs

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// vectorRow is one row of the BIP 158 test vectors (testvectors/bip158).
type vectorRow struct {
	Height      int
	BlockHash   chainhash.Hash // internal order
	Block       *wire.MsgBlock
	PrevScripts [][]byte
	PrevHeader  chainhash.Hash
	Filter      []byte
	Header      chainhash.Hash
	Notes       string
}

const vectorFile = "../testvectors/bip158/testnet-19.json"

// loadVectors parses the BIP 158 vectors and checks each row against its
// own block bytes (hash and merkle root) so damaged data cannot pass.
func loadVectors(t testing.TB) []vectorRow {
	t.Helper()
	raw, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: %d rows", vectorFile, len(rows))
	}
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("bad hex %q: %v", s, err)
		}
		return b
	}
	hash := func(s string) chainhash.Hash {
		h, err := chainhash.NewHashFromStr(s)
		if err != nil {
			t.Fatalf("bad hash %q: %v", s, err)
		}
		return *h
	}
	var out []vectorRow
	for _, r := range rows[1:] {
		if len(r) != 8 {
			t.Fatalf("row %v: %d columns, want 8", r[0], len(r))
		}
		var v vectorRow
		v.Height = int(r[0].(float64))
		v.BlockHash = hash(r[1].(string))
		v.Block = new(wire.MsgBlock)
		if err := v.Block.Deserialize(bytes.NewReader(unhex(r[2].(string)))); err != nil {
			t.Fatalf("height %d: block: %v", v.Height, err)
		}
		for _, s := range r[3].([]any) {
			v.PrevScripts = append(v.PrevScripts, unhex(s.(string)))
		}
		v.PrevHeader = hash(r[4].(string))
		v.Filter = unhex(r[5].(string))
		v.Header = hash(r[6].(string))
		v.Notes = r[7].(string)
		if got := v.Block.BlockHash(); got != v.BlockHash {
			t.Fatalf("height %d: block hashes to %v, row says %v (damaged vector)", v.Height, got, v.BlockHash)
		}
		if got := merkleRoot(v.Block); got != v.Block.Header.MerkleRoot {
			t.Fatalf("height %d: transactions give merkle root %v, header says %v (damaged vector)",
				v.Height, got, v.Block.Header.MerkleRoot)
		}
		out = append(out, v)
	}
	return out
}

// merkleRoot computes a block's transaction merkle root (txids, the last
// node of an odd level paired with itself).
func merkleRoot(b *wire.MsgBlock) chainhash.Hash {
	level := make([]chainhash.Hash, len(b.Transactions))
	for i, tx := range b.Transactions {
		level[i] = tx.TxHash()
	}
	for len(level) > 1 {
		var next []chainhash.Hash
		for i := 0; i < len(level); i += 2 {
			j := min(i+1, len(level)-1)
			var buf [64]byte
			copy(buf[:32], level[i][:])
			copy(buf[32:], level[j][:])
			next = append(next, chainhash.DoubleHashH(buf[:]))
		}
		level = next
	}
	return level[0]
}

// basicElements lists what BIP 158 puts in a block's basic filter, with
// duplicates.
func basicElements(b *wire.MsgBlock, prev [][]byte) [][]byte {
	var out [][]byte
	for _, tx := range b.Transactions {
		for _, o := range tx.TxOut {
			if len(o.PkScript) > 0 && o.PkScript[0] != 0x6a {
				out = append(out, o.PkScript)
			}
		}
	}
	for _, s := range prev {
		if len(s) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func TestBIP158Vectors(t *testing.T) {
	rows := loadVectors(t)
	if len(rows) != 10 {
		t.Fatalf("%d vector rows, want the BIP's 10", len(rows))
	}
	rng := rand.New(rand.NewPCG(158, 158))
	for _, v := range rows {
		t.Run("height_"+strconv.Itoa(v.Height), func(t *testing.T) {
			f, err := BuildBasic(v.Block, v.PrevScripts)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.NBytes(); !bytes.Equal(got, v.Filter) {
				t.Fatalf("filter %x, want %x", got, v.Filter)
			}
			// The oracle agrees with the row too (a damaged row would not).
			bf, err := builder.BuildBasicFilter(v.Block, v.PrevScripts)
			if err != nil {
				t.Fatal(err)
			}
			if bn, _ := bf.NBytes(); !bytes.Equal(bn, v.Filter) {
				t.Fatalf("btcutil builds %x, row says %x", bn, v.Filter)
			}
			d, err := DecodeBasic(v.Filter)
			if err != nil {
				t.Fatalf("DecodeBasic: %v", err)
			}
			if !bytes.Equal(d.NBytes(), v.Filter) || d.N() != f.N() {
				t.Fatalf("decoded filter does not round-trip")
			}
			if got := d.Header(&v.PrevHeader); got != v.Header {
				t.Fatalf("header %v, want %v", got, v.Header)
			}
			fh := d.Hash()
			if got := MakeHeader(&fh, &v.PrevHeader); got != v.Header {
				t.Fatalf("MakeHeader %v, want %v", got, v.Header)
			}
			if want, _ := builder.GetFilterHash(bf); fh != want {
				t.Fatalf("filter hash %v, btcutil %v", fh, want)
			}
			key := BasicKey(&v.BlockHash)
			elems := basicElements(v.Block, v.PrevScripts)
			for _, e := range elems {
				if !d.Match(key, e) {
					t.Errorf("element %x does not match", e)
				}
				if !d.MatchAny(key, [][]byte{e}) {
					t.Errorf("MatchAny of element %x is false", e)
				}
			}
			if len(elems) > 0 {
				if !d.MatchAny(key, elems) || !NewMatcher(elems).Match(d, key) {
					t.Errorf("MatchAny/Matcher of all elements is false")
				}
			}
			// Random 32-byte items: a false positive is a 1/M event per
			// item, so with a fixed seed none of these matches.
			for range 200 {
				var e [32]byte
				for i := range e {
					e[i] = byte(rng.Uint32())
				}
				if d.Match(key, e[:]) {
					t.Errorf("random element %x matches", e)
				}
			}
			// The wrong key finds nothing either.
			var other [16]byte
			for _, e := range elems {
				if d.Match(other, e) && d.Match(BasicKey(&chainhash.Hash{1}), e) {
					t.Errorf("element %x matches under two wrong keys", e)
				}
			}
		})
	}
}
