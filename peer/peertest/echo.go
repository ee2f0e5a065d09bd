package peertest

import (
	"net"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Echo is a test peer that takes transactions and never relays them: a
// proxy in front of a real node that answers the client's inv of a
// transaction with a getdata of its own, keeps the transaction it is then
// sent instead of passing it on, and serves it back to any getdata for it,
// as a node holding it in its mempool would. Everything else goes to and
// from the node unchanged.
type Echo struct {
	Addr   string
	srv    server
	target string
	net    wire.BitcoinNet
	reject string // EchoRejects' reason; empty keeps transactions
	pool   *echoPool
}

// echoPool holds the transactions an Echo and its twins were given.
type echoPool struct {
	mu  sync.Mutex
	txs map[chainhash.Hash]*wire.MsgTx
}

// EchoOption changes how an Echo behaves.
type EchoOption func(*Echo)

// EchoRejects makes the Echo answer every transaction it is sent with a
// reject message (RejectInvalid, reason) instead of keeping it: a forged
// verdict on a transaction it never passes on.
func EchoRejects(reason string) EchoOption {
	return func(e *Echo) { e.reject = reason }
}

// NewEcho starts an Echo on 127.0.0.1 in front of the node at target; it
// stops when the test ends.
func NewEcho(t testing.TB, target string, btcnet wire.BitcoinNet, opts ...EchoOption) *Echo {
	t.Helper()
	e := &Echo{target: target, net: btcnet, pool: &echoPool{txs: map[chainhash.Hash]*wire.MsgTx{}}}
	for _, opt := range opts {
		opt(e)
	}
	e.Addr = e.srv.start(t, e.serve)
	return e
}

// Twin starts another Echo in front of the same node, with the same
// options, that shares e's transactions: one given to either is served
// by both, as by two nodes run by one party. It stops when the test ends.
func (e *Echo) Twin(t testing.TB) *Echo {
	t.Helper()
	twin := &Echo{target: e.target, net: e.net, reject: e.reject, pool: e.pool}
	twin.Addr = twin.srv.start(t, twin.serve)
	return twin
}

// Held reports whether the echo holds txid, given by a client.
func (e *Echo) Held(txid chainhash.Hash) bool {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return e.pool.txs[txid] != nil
}

// serve pipes one client connection to the node, taking transactions on
// the way.
func (e *Echo) serve(client net.Conn) {
	node, err := net.Dial("tcp", e.target)
	if err != nil || !e.srv.track(node) {
		client.Close()
		return
	}
	var writeMu sync.Mutex // both directions write to the client
	toClient := func(frame []byte) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		_, err := client.Write(frame)
		return err
	}
	closeBoth := func() { client.Close(); node.Close() }
	e.srv.run(func() {
		defer closeBoth()
		for {
			_, frame, err := readFrame(node)
			if err != nil || toClient(frame) != nil {
				return
			}
		}
	})
	defer closeBoth()
	for {
		cmd, frame, err := readFrame(client)
		if err != nil {
			return
		}
		var reply []wire.Message
		forward := true
		switch cmd {
		case wire.CmdInv, wire.CmdGetData, wire.CmdTx:
			m, err := decodeFrame(frame, e.net)
			if err != nil {
				return
			}
			reply, forward = e.take(m)
		}
		for _, m := range reply {
			if toClient(encodeFrame(m, e.net)) != nil {
				return
			}
		}
		if forward {
			if _, err := node.Write(frame); err != nil {
				return
			}
		}
	}
}

// take handles one client message: it returns the echo's answers and
// whether the message goes on to the node.
func (e *Echo) take(m wire.Message) ([]wire.Message, bool) {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	switch m := m.(type) {
	case *wire.MsgInv:
		ask := wire.NewMsgGetData()
		for _, iv := range m.InvList {
			if iv.Type == wire.InvTypeTx || iv.Type == wire.InvTypeWitnessTx {
				ask.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &iv.Hash))
			}
		}
		if len(ask.InvList) > 0 {
			return []wire.Message{ask}, false
		}
	case *wire.MsgTx:
		if e.reject != "" {
			rej := wire.NewMsgReject(wire.CmdTx, wire.RejectInvalid, e.reject)
			rej.Hash = m.TxHash()
			return []wire.Message{rej}, false
		}
		e.pool.txs[m.TxHash()] = m
		return nil, false
	case *wire.MsgGetData:
		var out []wire.Message
		for _, iv := range m.InvList {
			if tx := e.pool.txs[iv.Hash]; tx != nil {
				out = append(out, tx)
			}
		}
		if len(out) == len(m.InvList) {
			return out, false
		}
		return out, true
	}
	return nil, true
}
