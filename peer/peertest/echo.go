package peertest

import (
	"bytes"
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
	Addr string
	ln   net.Listener
	net  wire.BitcoinNet

	mu  sync.Mutex
	txs map[chainhash.Hash]*wire.MsgTx
	wg  sync.WaitGroup
}

// NewEcho starts an Echo on 127.0.0.1 in front of the node at target; it
// stops when the test ends.
func NewEcho(t testing.TB, target string, btcnet wire.BitcoinNet) *Echo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &Echo{Addr: ln.Addr().String(), ln: ln, net: btcnet, txs: map[chainhash.Hash]*wire.MsgTx{}}
	var conns []net.Conn
	var connMu sync.Mutex
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			node, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			connMu.Lock()
			conns = append(conns, client, node)
			connMu.Unlock()
			e.relay(client, node)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		connMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connMu.Unlock()
		e.wg.Wait()
	})
	return e
}

// Held reports whether the echo holds txid, given by a client.
func (e *Echo) Held(txid chainhash.Hash) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.txs[txid] != nil
}

// relay pipes one client connection to the node, taking transactions on
// the way.
func (e *Echo) relay(client, node net.Conn) {
	var writeMu sync.Mutex // both directions write to the client
	toClient := func(frame []byte) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		_, err := client.Write(frame)
		return err
	}
	encode := func(m wire.Message) []byte {
		var buf bytes.Buffer
		wire.WriteMessageWithEncodingN(&buf, m, wire.ProtocolVersion, e.net, wire.WitnessEncoding)
		return buf.Bytes()
	}
	closeBoth := func() { client.Close(); node.Close() }
	e.wg.Add(2)
	go func() {
		defer e.wg.Done()
		defer closeBoth()
		for {
			_, frame, err := readFrame(node)
			if err != nil || toClient(frame) != nil {
				return
			}
		}
	}()
	go func() {
		defer e.wg.Done()
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
				_, m, _, err := wire.ReadMessageWithEncodingN(bytes.NewReader(frame), wire.ProtocolVersion, e.net, wire.WitnessEncoding)
				if err != nil {
					return
				}
				reply, forward = e.take(m)
			}
			for _, m := range reply {
				if toClient(encode(m)) != nil {
					return
				}
			}
			if forward {
				if _, err := node.Write(frame); err != nil {
					return
				}
			}
		}
	}()
}

// take handles one client message: it returns the echo's answers and
// whether the message goes on to the node.
func (e *Echo) take(m wire.Message) ([]wire.Message, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
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
		e.txs[m.TxHash()] = m
		return nil, false
	case *wire.MsgGetData:
		var out []wire.Message
		for _, iv := range m.InvList {
			if tx := e.txs[iv.Hash]; tx != nil {
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
