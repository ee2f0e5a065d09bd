package peertest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Fee is the fee, in satoshis, of every transaction the helpers create.
const Fee = 10000

// Key is a private key a test controls. PkScript is its P2PKH output
// script; P2PKScript, P2WPKHScript and P2TRScript are its other
// single-key outputs, all of which Spend can sign.
type Key struct {
	Priv *btcec.PrivateKey
}

// NewKey derives a key deterministically from seed, so tests are
// repeatable.
func NewKey(seed string) *Key {
	sum := sha256.Sum256([]byte(seed))
	priv, _ := btcec.PrivKeyFromBytes(sum[:])
	return &Key{Priv: priv}
}

// Address returns the key's P2PKH address (compressed public key).
func (k *Key) Address(params *chaincfg.Params) *btcutil.AddressPubKeyHash {
	pkh := btcutil.Hash160(k.Priv.PubKey().SerializeCompressed())
	addr, err := btcutil.NewAddressPubKeyHash(pkh, params)
	if err != nil {
		panic(err) // cannot happen: pkh is 20 bytes
	}
	return addr
}

// PkScript returns the key's P2PKH output script.
func (k *Key) PkScript() []byte {
	pkh := btcutil.Hash160(k.Priv.PubKey().SerializeCompressed())
	script, err := txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).
		AddOp(txscript.OP_HASH160).AddData(pkh).AddOp(txscript.OP_EQUALVERIFY).
		AddOp(txscript.OP_CHECKSIG).Script()
	if err != nil {
		panic(err)
	}
	return script
}

// P2PKScript returns the key's pay-to-pubkey output script, whose spend
// reveals only a signature.
func (k *Key) P2PKScript() []byte {
	return append(append([]byte{33}, k.Priv.PubKey().SerializeCompressed()...), txscript.OP_CHECKSIG)
}

// P2WPKHScript returns the key's version 0 witness key-hash script.
func (k *Key) P2WPKHScript() []byte {
	return append([]byte{txscript.OP_0, 20}, btcutil.Hash160(k.Priv.PubKey().SerializeCompressed())...)
}

// P2TRScript returns the key's taproot output script (key path only, no
// script tree), whose key-path spend reveals only a signature.
func (k *Key) P2TRScript() []byte {
	script, err := txscript.PayToTaprootScript(txscript.ComputeTaprootKeyNoScript(k.Priv.PubKey()))
	if err != nil {
		panic(err)
	}
	return script
}

// Output is a transaction output a key can spend. Its PkScript, when
// set, is one of the key's scripts (P2PKH when nil).
type Output struct {
	OutPoint wire.OutPoint
	Value    int64
	Key      *Key
	PkScript []byte
}

// SpendCoinbase spends the oldest mature, not yet spent coinbase of the
// node's MinerKey to outs, sending the rest (less Fee) back to the miner,
// and submits it with sendrawtransaction. The transaction is in the
// mempool on return; mine a block to confirm it.
func (n *Node) SpendCoinbase(t testing.TB, outs ...*wire.TxOut) *wire.MsgTx {
	t.Helper()
	tx, err := n.SpendCoinbaseErr(outs...)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// SpendCoinbaseErr is SpendCoinbase for callers without a testing.TB.
func (n *Node) SpendCoinbaseErr(outs ...*wire.TxOut) (*wire.MsgTx, error) {
	return n.coinbaseSpend(true, outs)
}

// BuildCoinbaseSpend is SpendCoinbase without submitting the transaction:
// it is signed and ready to send, and its coinbase is not used again.
func (n *Node) BuildCoinbaseSpend(t testing.TB, outs ...*wire.TxOut) *wire.MsgTx {
	t.Helper()
	tx, err := n.coinbaseSpend(false, outs)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func (n *Node) coinbaseSpend(submit bool, outs []*wire.TxOut) (*wire.MsgTx, error) {
	if n.MinerKey == nil {
		return nil, errors.New("peertest: node mines to an external address; no coinbase to spend")
	}
	tip, err := n.rpc.GetBlockCount()
	if err != nil {
		return nil, fmt.Errorf("peertest: getblockcount: %w", err)
	}
	maturity := int64(n.Params.CoinbaseMaturity)
	n.mu.Lock()
	defer n.mu.Unlock()
	for h := int64(1); h+maturity <= tip+1; h++ {
		if n.spent[h] {
			continue
		}
		hash, err := n.rpc.GetBlockHash(h)
		if err != nil {
			return nil, fmt.Errorf("peertest: getblockhash %d: %w", h, err)
		}
		block, err := n.rpc.GetBlock(hash)
		if err != nil {
			return nil, fmt.Errorf("peertest: getblock %d: %w", h, err)
		}
		cb := block.Transactions[0]
		var need int64 = Fee
		for _, o := range outs {
			need += o.Value
		}
		if cb.TxOut[0].Value < need || string(cb.TxOut[0].PkScript) != string(n.MinerKey.PkScript()) {
			n.spent[h] = true // unusable
			continue
		}
		in := Output{
			OutPoint: wire.OutPoint{Hash: cb.TxHash(), Index: 0},
			Value:    cb.TxOut[0].Value,
			Key:      n.MinerKey,
		}
		all := append([]*wire.TxOut{}, outs...)
		if change := in.Value - need; change > 0 {
			all = append(all, wire.NewTxOut(change, n.MinerKey.PkScript()))
		}
		tx, err := sign([]Output{in}, all)
		if err == nil && submit {
			err = n.submit(tx)
		}
		if err != nil {
			return nil, err
		}
		n.spent[h] = true
		return tx, nil
	}
	return nil, fmt.Errorf("peertest: no mature unspent coinbase at tip %d (mine more blocks)", tip)
}

// Spend spends ins (outputs of their keys, of any ScriptKind) to outs
// and submits the transaction. The caller chooses the amounts; whatever
// ins hold beyond outs is the fee.
func (n *Node) Spend(t testing.TB, ins []Output, outs ...*wire.TxOut) *wire.MsgTx {
	t.Helper()
	tx, err := n.send(ins, outs)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// SpendErr is Spend for callers without a testing.TB.
func (n *Node) SpendErr(ins []Output, outs ...*wire.TxOut) (*wire.MsgTx, error) {
	return n.send(ins, outs)
}

func (n *Node) send(ins []Output, outs []*wire.TxOut) (*wire.MsgTx, error) {
	tx, err := sign(ins, outs)
	if err != nil {
		return nil, err
	}
	return tx, n.submit(tx)
}

func (n *Node) submit(tx *wire.MsgTx) error {
	if _, err := n.rpc.SendRawTransaction(tx, true); err != nil {
		return fmt.Errorf("peertest: sendrawtransaction: %w", err)
	}
	return nil
}

// sign builds the transaction spending ins to outs, signed.
func sign(ins []Output, outs []*wire.TxOut) (*wire.MsgTx, error) {
	tx := wire.NewMsgTx(wire.TxVersion)
	prevOuts := txscript.NewMultiPrevOutFetcher(nil)
	for _, in := range ins {
		tx.AddTxIn(wire.NewTxIn(&in.OutPoint, nil, nil))
		prevOuts.AddPrevOut(in.OutPoint, wire.NewTxOut(in.Value, in.script()))
	}
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	hashes := txscript.NewTxSigHashes(tx, prevOuts)
	for i, in := range ins {
		if err := in.sign(tx, i, hashes); err != nil {
			return nil, fmt.Errorf("peertest: signing input %d: %w", i, err)
		}
	}
	return tx, nil
}

func (o Output) script() []byte {
	if o.PkScript != nil {
		return o.PkScript
	}
	return o.Key.PkScript()
}

// sign signs input i of tx, which spends o, for o's script type (one of
// the key's ScriptKinds).
func (o Output) sign(tx *wire.MsgTx, i int, hashes *txscript.TxSigHashes) error {
	kind, ok := o.Key.kindOf(o.script())
	if !ok {
		return fmt.Errorf("script %x is not one of the key's", o.script())
	}
	return o.Key.signAs(kind, tx, i, o.Value, hashes)
}

// OutputOf returns output index of tx as an Output spendable by key; the
// output's script must be one of the key's.
func OutputOf(tx *wire.MsgTx, index uint32, key *Key) Output {
	o := Output{
		OutPoint: wire.OutPoint{Hash: tx.TxHash(), Index: index},
		Value:    tx.TxOut[index].Value,
		Key:      key,
	}
	if s := tx.TxOut[index].PkScript; string(s) != string(key.PkScript()) {
		o.PkScript = s
	}
	return o
}

// InMempool reports whether the node's mempool holds txid.
func (n *Node) InMempool(t testing.TB, txid chainhash.Hash) bool {
	t.Helper()
	pool, err := n.rpc.GetRawMempool()
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(pool, func(h *chainhash.Hash) bool { return *h == txid })
}

// Confirm mines one block and checks that it holds every given
// transaction.
func (n *Node) Confirm(t testing.TB, txs ...*wire.MsgTx) *chainhash.Hash {
	t.Helper()
	hash, err := n.ConfirmErr(txs...)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// ConfirmErr is Confirm for callers without a testing.TB.
func (n *Node) ConfirmErr(txs ...*wire.MsgTx) (*chainhash.Hash, error) {
	hashes, err := n.GenerateErr(1)
	if err != nil {
		return nil, err
	}
	block, err := n.rpc.GetBlock(hashes[0])
	if err != nil {
		return nil, fmt.Errorf("peertest: getblock: %w", err)
	}
	in := make(map[chainhash.Hash]bool)
	for _, tx := range block.Transactions {
		in[tx.TxHash()] = true
	}
	for _, tx := range txs {
		if !in[tx.TxHash()] {
			return nil, fmt.Errorf("peertest: block %v does not contain %v", hashes[0], tx.TxHash())
		}
	}
	return hashes[0], nil
}
