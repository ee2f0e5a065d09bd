package bip37

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// vectorDir holds the official vectors, each file naming its source.
var vectorDir = filepath.Join("..", "testvectors", "bip37")

func loadVectors(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func mustHash(t testing.TB, s string) chainhash.Hash {
	t.Helper()
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		t.Fatalf("bad hash %q: %v", s, err)
	}
	return *h
}

func mustTx(t testing.TB, s string) *wire.MsgTx {
	t.Helper()
	tx := new(wire.MsgTx)
	if err := tx.Deserialize(bytes.NewReader(mustHex(t, s))); err != nil {
		t.Fatal(err)
	}
	return tx
}

func TestMurmurHash3Vectors(t *testing.T) {
	var file struct {
		Source  string
		Vectors []struct {
			Seed     uint32
			Data     string
			Expected uint32
		}
	}
	loadVectors(t, "murmurhash3.json", &file)
	if file.Source == "" || len(file.Vectors) != 14 {
		t.Fatalf("murmurhash3.json: source %q, %d vectors", file.Source, len(file.Vectors))
	}
	for _, v := range file.Vectors {
		if got := MurmurHash3(v.Seed, mustHex(t, v.Data)); got != v.Expected {
			t.Errorf("MurmurHash3(%#x, %q) = %#08x, want %#08x", v.Seed, v.Data, got, v.Expected)
		}
	}
}

func TestFilterVectors(t *testing.T) {
	var file struct {
		Filters []struct {
			Name, Source           string
			Elements               uint32
			FPRate                 float64
			Tweak                  uint32
			Flags                  wire.BloomUpdateType
			Insert, NotContains    []string
			AfterClearNotContains  []string `json:"after_clear_not_contains"`
			WIF                    string
			InsertPubKeyAndHash160 bool `json:"insert_pubkey_and_hash160"`
			Payload                string
		}
	}
	loadVectors(t, "filters.json", &file)
	if len(file.Filters) != 3 {
		t.Fatalf("filters.json: %d vectors, want 3", len(file.Filters))
	}
	for _, v := range file.Filters {
		t.Run(v.Name, func(t *testing.T) {
			if v.Source == "" {
				t.Fatal("vector without source")
			}
			f := NewFilter(v.Elements, v.FPRate, v.Tweak, v.Flags)
			var elems [][]byte
			for _, s := range v.Insert {
				elems = append(elems, mustHex(t, s))
			}
			if v.InsertPubKeyAndHash160 {
				wif, err := btcutil.DecodeWIF(v.WIF)
				if err != nil {
					t.Fatal(err)
				}
				pub := wif.SerializePubKey()
				elems = append(elems, pub, btcutil.Hash160(pub))
			}
			for _, e := range elems {
				f.Add(e)
				if !f.Contains(e) {
					t.Errorf("does not contain %x just inserted", e)
				}
			}
			for _, s := range v.NotContains {
				if f.Contains(mustHex(t, s)) {
					t.Errorf("contains %s", s)
				}
			}
			got, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != v.Payload {
				t.Errorf("payload %x, want %s", got, v.Payload)
			}
			g, err := DecodeFilterLoad(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(g.Bits(), f.Bits()) || g.HashFuncs() != f.HashFuncs() || g.Tweak() != v.Tweak || g.Flags() != v.Flags {
				t.Errorf("decoded payload differs from the filter")
			}
			f.Reset()
			for _, s := range v.AfterClearNotContains {
				if f.Contains(mustHex(t, s)) {
					t.Errorf("contains %s after Reset", s)
				}
			}
		})
	}
}

// insertSpec is one element of a vector's insert list: raw hex, a hash in
// display (reversed) order as Core's uint256S, or an outpoint.
type insertSpec struct {
	Hex      string
	Hash     string
	OutPoint *struct {
		Txid  string
		Index uint32
	}
}

func (s insertSpec) apply(t *testing.T, f *Filter) {
	t.Helper()
	switch {
	case s.Hex != "":
		f.Add(mustHex(t, s.Hex))
	case s.Hash != "":
		h := mustHash(t, s.Hash)
		f.Add(h[:])
	case s.OutPoint != nil:
		f.AddOutPoint(wire.NewOutPoint(ptr(mustHash(t, s.OutPoint.Txid)), s.OutPoint.Index))
	default:
		t.Fatal("empty insert spec")
	}
}

func ptr[T any](v T) *T { return &v }

func TestMatchVectors(t *testing.T) {
	var file struct {
		Source   string
		Elements uint32
		FPRate   float64
		Tweak    uint32
		Flags    wire.BloomUpdateType
		Txs      map[string]struct{ Txid, Hex string }
		Cases    []struct {
			Name   string
			Insert []insertSpec
			Checks []struct {
				Tx    string
				Match bool
			}
		}
	}
	loadVectors(t, "match.json", &file)
	if file.Source == "" || len(file.Cases) != 12 {
		t.Fatalf("match.json: source %q, %d cases", file.Source, len(file.Cases))
	}
	txs := map[string]*wire.MsgTx{}
	for name, v := range file.Txs {
		tx := mustTx(t, v.Hex)
		// Cross-check the stored transaction against its published txid.
		if got := tx.TxHash(); got != mustHash(t, v.Txid) {
			t.Fatalf("%s: txid %v, want %s (damaged vector?)", name, got, v.Txid)
		}
		txs[name] = tx
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			f := NewFilter(file.Elements, file.FPRate, file.Tweak, file.Flags)
			for _, s := range c.Insert {
				s.apply(t, f)
			}
			for _, chk := range c.Checks {
				tx, ok := txs[chk.Tx]
				if !ok {
					t.Fatalf("unknown tx %q", chk.Tx)
				}
				if got := f.MatchTxAndUpdate(tx); got != chk.Match {
					t.Errorf("MatchTxAndUpdate(%s) = %v, want %v", chk.Tx, got, chk.Match)
				}
			}
		})
	}
}

// merkleRoot computes a block's merkle root from its txids, to check that a
// stored block is intact.
func merkleRoot(txs []*wire.MsgTx) chainhash.Hash {
	level := make([]chainhash.Hash, len(txs))
	for i, tx := range txs {
		level[i] = tx.TxHash()
	}
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := make([]chainhash.Hash, len(level)/2)
		for i := range next {
			var buf [64]byte
			copy(buf[:32], level[2*i][:])
			copy(buf[32:], level[2*i+1][:])
			first := sha256.Sum256(buf[:])
			next[i] = sha256.Sum256(first[:])
		}
		level = next
	}
	return level[0]
}

func TestUpdateFlagVectors(t *testing.T) {
	var file struct {
		Source string
		Blocks map[string]struct{ Hash, Hex string }
		Cases  []struct {
			Name     string
			Block    string
			Elements uint32
			FPRate   float64
			Tweak    uint32
			Flags    wire.BloomUpdateType
			Steps    []struct {
				Insert  []insertSpec
				Matched []int
			}
			ContainsOutPoints []struct {
				Txid  string
				Index uint32
				Want  bool
			} `json:"contains_outpoints"`
		}
	}
	loadVectors(t, "update_flags.json", &file)
	if file.Source == "" || len(file.Cases) != 5 {
		t.Fatalf("update_flags.json: source %q, %d cases", file.Source, len(file.Cases))
	}
	blocks := map[string]*wire.MsgBlock{}
	for name, v := range file.Blocks {
		b := new(wire.MsgBlock)
		if err := b.Deserialize(bytes.NewReader(mustHex(t, v.Hex))); err != nil {
			t.Fatal(err)
		}
		if got := b.BlockHash(); got != mustHash(t, v.Hash) {
			t.Fatalf("%s: block hash %v, want %s (damaged vector?)", name, got, v.Hash)
		}
		if got := merkleRoot(b.Transactions); got != b.Header.MerkleRoot {
			t.Fatalf("%s: merkle root %v, header says %v (damaged vector?)", name, got, b.Header.MerkleRoot)
		}
		blocks[name] = b
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			block := blocks[c.Block]
			f := NewFilter(c.Elements, c.FPRate, c.Tweak, c.Flags)
			for i, step := range c.Steps {
				for _, s := range step.Insert {
					s.apply(t, f)
				}
				matched := []int{}
				for j, tx := range block.Transactions {
					if f.MatchTxAndUpdate(tx) {
						matched = append(matched, j)
					}
				}
				if step.Matched != nil && !equalInts(matched, step.Matched) {
					t.Errorf("step %d: matched %v, want %v", i, matched, step.Matched)
				}
			}
			for _, op := range c.ContainsOutPoints {
				got := f.ContainsOutPoint(wire.NewOutPoint(ptr(mustHash(t, op.Txid)), op.Index))
				if got != op.Want {
					t.Errorf("ContainsOutPoint(%s:%d) = %v, want %v", op.Txid, op.Index, got, op.Want)
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
