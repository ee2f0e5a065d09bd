package chain

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// testNet4GenesisHex is testnet4's genesis block as BIP 94 prints it.
const testNet4GenesisHex = "0100000000000000000000000000000000000000000000000000000000000000000000004e7b2b9128fe0291db0693af2ae418b767e657cd407e80cb1434221eaea7a07a046f3566ffff001dbb0c78170101000000010000000000000000000000000000000000000000000000000000000000000000ffffffff5504ffff001d01044c4c30332f4d61792f323032342030303030303030303030303030303030303030303165626435386332343439373062336161396437383362623030313031316662653865613865393865303065ffffffff0100f2052a010000002321000000000000000000000000000000000000000000000000000000000000000000ac00000000"

// TestTestNet4Genesis recomputes testnet4's genesis block from its fields:
// its serialisation is BIP 94's, the coinbase hashes to the merkle root,
// the header hashes to the genesis hash and meets its target.
func TestTestNet4Genesis(t *testing.T) {
	p := &TestNet4Params
	var buf bytes.Buffer
	if err := p.GenesisBlock.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(buf.Bytes()); got != testNet4GenesisHex {
		t.Fatalf("genesis block serialises to\n%s\nBIP 94 gives\n%s", got, testNet4GenesisHex)
	}
	h := p.GenesisBlock.Header
	if root := p.GenesisBlock.Transactions[0].TxHash(); root != h.MerkleRoot {
		t.Fatalf("coinbase hash %v, merkle root %v", root, h.MerkleRoot)
	}
	hash := h.BlockHash()
	want := "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043"
	if hash.String() != want || *p.GenesisHash != hash {
		t.Fatalf("genesis hash %v (params say %v), want %s", hash, p.GenesisHash, want)
	}
	if blockchain.HashToBig(&hash).Cmp(blockchain.CompactToBig(h.Bits)) > 0 || blockchain.CompactToBig(p.PowLimitBits).Cmp(p.PowLimit) > 0 {
		t.Fatal("genesis block misses its target, or the limit bits exceed the limit")
	}
	if c := New(p); c.Hash(0) != hash {
		t.Fatalf("chain starts at %v", c.Hash(0))
	}
}

func TestTestNet4Params(t *testing.T) {
	p := &TestNet4Params
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], uint32(p.Net))
	if hex.EncodeToString(magic[:]) != "1c163f28" {
		t.Errorf("message start %x, BIP 94 says 1c163f28", magic)
	}
	for _, other := range []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.TestNet3Params, &chaincfg.RegressionNetParams, &chaincfg.SimNetParams, &chaincfg.SigNetParams} {
		if other.Net == p.Net {
			t.Errorf("magic shared with %s", other.Name)
		}
	}
	if p.Name != "testnet4" || p.DefaultPort != "48333" || p.PowLimit.Cmp(chaincfg.TestNet3Params.PowLimit) != 0 ||
		!p.ReduceMinDifficulty || retargetInterval(p) != 2016 {
		t.Errorf("params %s port %s limit %x interval %d", p.Name, p.DefaultPort, p.PowLimit, retargetInterval(p))
	}
	copied := *p
	if !BIP94(p) || !BIP94(&copied) || BIP94(&chaincfg.TestNet3Params) || BIP94(&chaincfg.SimNetParams) {
		t.Error("BIP94 does not single out testnet4")
	}
}

// TestTestNet4Addresses: without registration, btcutil encodes and decodes
// testnet4 addresses, since testnet3 registered the same prefixes.
func TestTestNet4Addresses(t *testing.T) {
	p := &TestNet4Params
	hash := bytes.Repeat([]byte{0x51}, 20)
	wpkh, err := btcutil.NewAddressWitnessPubKeyHash(hash, p)
	if err != nil {
		t.Fatal(err)
	}
	pkh, err := btcutil.NewAddressPubKeyHash(hash, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []btcutil.Address{wpkh, pkh} {
		s := a.EncodeAddress()
		got, err := btcutil.DecodeAddress(s, p)
		if err != nil || got.String() != s || !got.IsForNet(p) {
			t.Errorf("%s: %v, %v", s, got, err)
		}
	}
	if s := wpkh.EncodeAddress(); s[:3] != "tb1" {
		t.Errorf("segwit address %s", s)
	}
	if a, err := btcutil.DecodeAddress(wpkh.EncodeAddress(), &chaincfg.MainNetParams); err == nil && a.IsForNet(&chaincfg.MainNetParams) {
		t.Error("a testnet4 address is taken for a mainnet one")
	}
}

// TestTestNet4Checkpoints: the block checkpoints are the hashes Bitcoin
// Core names for those heights.
func TestTestNet4Checkpoints(t *testing.T) {
	want := map[int32]string{
		90000: "0000000002ebe8bcda020e0dd6ccfbdfac531d2f6a81457191b99fc2df2dbe3b", // assumeutxo snapshot block
		91000: "000000000000000180a58e7fa3b0db84b5ea76377524894f53660d93ac839d9b", // default assume-valid block
	}
	if len(TestNet4Params.Checkpoints) != len(want) {
		t.Fatalf("%d checkpoints", len(TestNet4Params.Checkpoints))
	}
	for _, cp := range TestNet4Params.Checkpoints {
		h, err := chainhash.NewHashFromStr(want[cp.Height])
		if err != nil || *h != *cp.Hash {
			t.Errorf("checkpoint %d: %v", cp.Height, cp.Hash)
		}
	}
}
