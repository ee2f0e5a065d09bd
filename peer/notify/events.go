package notify

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Confirmation is where a transaction of a confirmation registration was
// mined.
type Confirmation struct {
	BlockHash chainhash.Hash
	Height    uint32
	// TxIndex is the transaction's position in the block.
	TxIndex uint32
	Tx      *wire.MsgTx
	// OnePeer, if set, names the only peer whose chain held the block
	// when its filter was checked: the notification rests on it.
	OnePeer string
}

// ConfirmationEvent is the notifications of a confirmation registration.
// Its channels are closed by Cancel and Notifier.Stop.
type ConfirmationEvent struct {
	// Confirmed receives the confirmation once the transaction has the
	// confirmations asked for: again after a NegativeConf, when it is
	// mined anew.
	Confirmed <-chan Confirmation
	// Updates receives, at each block, how many confirmations are left
	// (a reader that lags gets the newest).
	Updates <-chan uint32
	// NegativeConf receives the depth of the reorganization when it
	// takes the confirmed transaction's block out of the chain: the
	// blocks disconnected so far, that one included, as lnd counts.
	NegativeConf <-chan int32
	// Done receives once the confirmation is ReorgSafety deep: the
	// registration is over, and its channels are closed.
	Done <-chan struct{}
	// Cancel ends the registration and closes its channels.
	Cancel func()
	// Err returns, once the channels are closed, why the registration
	// ended before Done or Cancel: a *StallError when its reader let a
	// notification wait Options.MaxReaderWait, or maxPending of them
	// pile up. It returns nil otherwise.
	Err func() error
}

// SpendDetail is the spend of a spend registration's output.
type SpendDetail struct {
	// OutPoint is the output spent.
	OutPoint    wire.OutPoint
	SpenderTxid chainhash.Hash
	SpendingTx  *wire.MsgTx
	// InputIndex is the input of SpendingTx that spends it.
	InputIndex uint32
	Height     int32
	BlockHash  chainhash.Hash
	// OnePeer, as in Confirmation.
	OnePeer string
}

// SpendEvent is the notifications of a spend registration. Its channels
// are closed by Cancel and Notifier.Stop.
type SpendEvent struct {
	// Spend receives the spend once it is in a block: again after a
	// Reorg, when it is mined anew.
	Spend <-chan SpendDetail
	// Reorg receives when the spend's block left the chain.
	Reorg <-chan struct{}
	// Done receives once the spend is ReorgSafety deep: the
	// registration is over, and its channels are closed.
	Done <-chan struct{}
	// Cancel ends the registration and closes its channels.
	Cancel func()
	// Err, as in ConfirmationEvent.
	Err func() error
}

// BlockEpoch is a block connected to the chain.
type BlockEpoch struct {
	Hash   chainhash.Hash
	Height int32
	Header wire.BlockHeader
}

// BlockEpochEvent is the notifications of a block epoch registration. Its
// channel is closed by Cancel and Notifier.Stop; a reader that lags only
// delays its own epochs (nothing queues), and Notifier.Stalls lists it
// while an epoch waits for it.
type BlockEpochEvent struct {
	Epochs <-chan BlockEpoch
	// Cancel ends the registration and closes its channel.
	Cancel func()
}
