package bip37

import (
	"math/rand/v2"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Deterministic generators of realistic transactions for the differential
// tests, the fuzz seeds and the benchmarks. Scripts are well formed and
// standard, so that Core's rules and btcutil's agree on them.

func genPubKey(r *rand.Rand, compressed bool) []byte {
	if compressed {
		k := randBytes(r, 33)
		k[0] = 2 + byte(r.IntN(2))
		return k
	}
	k := randBytes(r, 65)
	k[0] = 4
	return k
}

func p2pkhScript(h []byte) []byte {
	s := append([]byte{0x76, 0xa9, 0x14}, h...)
	return append(s, 0x88, 0xac)
}

func p2wpkhScript(h []byte) []byte { return append([]byte{0x00, 0x14}, h...) }

func p2pkScript(pub []byte) []byte {
	s := append([]byte{byte(len(pub))}, pub...)
	return append(s, opCheckSig)
}

func multisigScript(m int, pubs [][]byte) []byte {
	s := []byte{op1 + byte(m-1)}
	for _, p := range pubs {
		s = append(s, byte(len(p)))
		s = append(s, p...)
	}
	return append(s, op1+byte(len(pubs)-1), opCheckMultiSig)
}

// genOutputScript returns a random standard output script: mostly P2PKH
// and P2WPKH, sometimes P2PK or bare multisig when exotic is set.
func genOutputScript(r *rand.Rand, exotic bool) []byte {
	n := 2
	if exotic {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return p2pkhScript(randBytes(r, 20))
	case 1:
		return p2wpkhScript(randBytes(r, 20))
	case 2:
		return p2pkScript(genPubKey(r, r.IntN(2) == 0))
	default:
		keys := 1 + r.IntN(3)
		var pubs [][]byte
		for i := 0; i < keys; i++ {
			pubs = append(pubs, genPubKey(r, r.IntN(2) == 0))
		}
		return multisigScript(1+r.IntN(keys), pubs)
	}
}

// genTx returns a transaction spending 1-3 random outpoints (legacy inputs
// with signature and public key pushes, or segwit inputs with an empty
// scriptSig and a witness) to 1-3 outputs.
func genTx(r *rand.Rand, exotic bool) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	for i, n := 0, 1+r.IntN(3); i < n; i++ {
		var h chainhash.Hash
		copy(h[:], randBytes(r, 32))
		in := wire.NewTxIn(wire.NewOutPoint(&h, uint32(r.IntN(4))), nil, nil)
		sig := randBytes(r, 71)
		pub := genPubKey(r, true)
		if r.IntN(2) == 0 {
			in.SignatureScript = append(append(append([]byte{71}, sig...), 33), pub...)
		} else {
			in.Witness = wire.TxWitness{sig, pub}
		}
		tx.AddTxIn(in)
	}
	for i, n := 0, 1+r.IntN(3); i < n; i++ {
		tx.AddTxOut(wire.NewTxOut(int64(r.IntN(1e8)), genOutputScript(r, exotic)))
	}
	return tx
}

// pushesOf returns the data pushes of the transaction's scripts, the
// elements a wallet would put in its filter.
func pushesOf(tx *wire.MsgTx) [][]byte {
	var out [][]byte
	scripts := [][]byte{}
	for _, o := range tx.TxOut {
		scripts = append(scripts, o.PkScript)
	}
	for _, in := range tx.TxIn {
		scripts = append(scripts, in.SignatureScript)
	}
	for _, s := range scripts {
		for pc := 0; pc < len(s); {
			_, data, next, ok := nextOp(s, pc)
			if !ok {
				break
			}
			pc = next
			if len(data) > 0 {
				out = append(out, data)
			}
		}
	}
	return out
}
