package peertest

import (
	"math/rand/v2"
	"slices"

	"github.com/btcsuite/btcd/wire"
)

// TxShape is the shape of a transaction: how many outputs it spends
// and how many it pays (the last of two or more is the payer's change),
// and its share of the transactions drawn (Weight).
type TxShape struct {
	Inputs, Outputs int
	Weight          float64
}

// MainnetShapes are the shapes of a real chain's transactions by inputs
// and outputs, rounded from the input/output distribution of mainnet
// transactions that mainnet.observer charts ("Transaction Input/Output
// Distribution"; transactionfee.info charts the same counts): a payment
// with change (one input, two outputs) about half of them; a payment
// from two or three coins with change, a self-transfer or sweep (one
// to one), a payment to two payees with change and a consolidation
// (several to one) each a tenth or less; a batched payout an
// occasional one. They are not fitted to any labelled wallet of a test.
var MainnetShapes = []TxShape{
	{Inputs: 1, Outputs: 2, Weight: 0.50},
	{Inputs: 2, Outputs: 2, Weight: 0.13},
	{Inputs: 1, Outputs: 1, Weight: 0.12},
	{Inputs: 1, Outputs: 3, Weight: 0.08},
	{Inputs: 3, Outputs: 2, Weight: 0.08},
	{Inputs: 2, Outputs: 1, Weight: 0.04},
	{Inputs: 1, Outputs: 5, Weight: 0.03},
	{Inputs: 3, Outputs: 1, Weight: 0.02},
}

// DrawShape draws a shape of shapes by their weights.
func DrawShape(rng *rand.Rand, shapes []TxShape) TxShape {
	total := 0.0
	for _, s := range shapes {
		total += s.Weight
	}
	x := rng.Float64() * total
	for _, s := range shapes {
		if x < s.Weight {
			return s
		}
		x -= s.Weight
	}
	return shapes[len(shapes)-1]
}

// minShapedCoin is the least a background output a shaped transaction
// spends or pays holds, in satoshis: far above the dust limit and Fee,
// so that splitting coins never makes one unspendable.
const minShapedCoin = 50_000

// shaped sends a round's shaped background transactions (Shaped): each
// spends outputs drawn from the unspent background outputs and pays
// fresh keys in a shape drawn from Shapes, the payees first, then the
// change; the outputs join the unspent ones after the round, so that
// no transaction spends another of its block.
func (b *labelledBuilder) shaped(h int32) []*wire.MsgTx {
	shapes := b.spec.Shapes
	if len(shapes) == 0 {
		shapes = MainnetShapes
	}
	var txs []*wire.MsgTx
	var made []Output
	for range b.spec.Shaped {
		s := DrawShape(b.rng, shapes)
		var ins []Output
		var value int64
		for range s.Inputs {
			if len(b.pending) == 0 {
				break
			}
			i := b.rng.IntN(len(b.pending))
			if b.pending[i].Value < minShapedCoin {
				// Too small to spend on its own: it stays unspent.
				continue
			}
			ins = append(ins, b.pending[i])
			value += b.pending[i].Value
			b.pending = slices.Delete(b.pending, i, i+1)
		}
		if len(ins) == 0 {
			continue
		}
		n := s.Outputs
		for n > 1 && (value-Fee)/int64(n) < minShapedCoin {
			n--
		}
		left := value - Fee
		var outs []*wire.TxOut
		var keys []*Key
		for j := range n {
			k := b.fresh("noise")
			v := left
			if j < n-1 {
				// A payee's share: between a half and one and a half
				// of an even split, the change taking the rest.
				v = min(int64(float64(left)/float64(n-j)*(0.5+b.rng.Float64())), left-int64(n-1-j)*minShapedCoin)
				v = max(v, minShapedCoin)
			}
			left -= v
			outs = append(outs, wire.NewTxOut(v, k.PkScript()))
			keys = append(keys, k)
		}
		tx := b.node.Spend(b.t, ins, outs...)
		txs = append(txs, tx)
		for _, in := range ins {
			b.seen(in.Key, h)
		}
		for j, k := range keys {
			b.seen(k, h)
			made = append(made, OutputOf(tx, uint32(j), k))
		}
	}
	b.pending = append(b.pending, made...)
	return txs
}
