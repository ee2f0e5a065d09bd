package peer

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// barrierNode is a scripted node on conn: for each request message the
// client sends (getcfilters, getcfheaders), it waits for the barrier
// ping that follows and calls answer with the ping's nonce and the
// nonces of the barriers before it; what answer returns is written.
func barrierNode(t *testing.T, conn net.Conn, answer func(req int, nonce uint64, earlier []uint64) []wire.Message) {
	go func() {
		var nonces []uint64
		req := 0
		for {
			_, m, _, err := wire.ReadMessageWithEncodingN(conn, wire.ProtocolVersion, chaincfg.RegressionNetParams.Net, wire.WitnessEncoding)
			if err != nil {
				return
			}
			ping, ok := m.(*wire.MsgPing)
			if !ok {
				continue
			}
			out := answer(req, ping.Nonce, append([]uint64(nil), nonces...))
			nonces = append(nonces, ping.Nonce)
			req++
			for _, o := range out {
				if _, err := wire.WriteMessageWithEncodingN(conn, o, wire.ProtocolVersion, chaincfg.RegressionNetParams.Net, wire.WitnessEncoding); err != nil {
					return
				}
			}
		}
	}()
}

// TestBarrierOrderingAttacks plays a node that moves its barrier pongs
// around an answer: a pong of another or an earlier barrier neither ends
// a request nor is taken for its answer (the replay is charged as
// unsolicited once its barrier was forgotten); the request's own pong
// before or amid its answer ends it at once with an UnansweredError
// counting what came, the connection dropped so that the late rest of
// the answer is never taken for the next request's.
func TestBarrierOrderingAttacks(t *testing.T) {
	blocks := []chainhash.Hash{{1}, {2}, {3}}
	cf := func(i int) wire.Message {
		return wire.NewMsgCFilter(wire.GCSFilterRegular, &blocks[i], []byte{byte(i)})
	}
	tests := []struct {
		name   string
		answer func(req int, nonce uint64, earlier []uint64) []wire.Message
		got    int // filters handed to fn in the last request
		err    error
		unansw int // UnansweredError.Got, or -1
	}{
		{"other nonce amid filters", func(req int, n uint64, _ []uint64) []wire.Message {
			return []wire.Message{cf(0), wire.NewMsgPong(n + 1), cf(1), cf(2), wire.NewMsgPong(n)}
		}, 3, nil, -1},
		{"earlier barrier's pong replayed amid the next answer", func(req int, n uint64, e []uint64) []wire.Message {
			if req == 0 {
				return []wire.Message{cf(0), cf(1), cf(2), wire.NewMsgPong(n)}
			}
			return []wire.Message{cf(0), wire.NewMsgPong(e[0]), wire.NewMsgPong(e[0]), cf(1), cf(2), wire.NewMsgPong(n)}
		}, 3, nil, -1},
		{"pong amid the filters, the rest late", func(req int, n uint64, _ []uint64) []wire.Message {
			return []wire.Message{cf(0), wire.NewMsgPong(n), cf(1), cf(2)}
		}, 1, ErrStalled, 1},
		{"pong first, the answer late", func(req int, n uint64, _ []uint64) []wire.Message {
			return []wire.Message{wire.NewMsgPong(n), cf(0), cf(1), cf(2)}
		}, 0, ErrStalled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, node := socketPair(t)
			p := startPeer(t, Config{Timeout: 5 * time.Second}, client)
			barrierNode(t, node, tt.answer)
			var err error
			got := 0
			for range 2 {
				got = 0
				err = p.GetCFilters(context.Background(), 1, blocks, func(i int, data []byte) error {
					if i != got || len(data) != 1 || int(data[0]) != i {
						t.Errorf("filter %d handed as %d: %x", got, i, data)
					}
					got++
					return nil
				})
				if err != nil {
					break
				}
			}
			if !errors.Is(err, tt.err) || got != tt.got {
				t.Fatalf("%d filters, %v; want %d, %v", got, err, tt.got, tt.err)
			}
			var ue *UnansweredError
			if tt.unansw >= 0 {
				if !errors.As(err, &ue) || ue.Got != tt.unansw || ue.Want != 3 {
					t.Fatalf("%v, want an UnansweredError of %d of 3", err, tt.unansw)
				}
				// The late rest of the answer is never the next
				// request's: the connection is gone.
				if _, _, err := p.GetCFHeaders(context.Background(), 1, blocks[2], 3); !errors.Is(err, ErrDisconnected) {
					t.Fatalf("the next request after an unanswered one: %v, want ErrDisconnected", err)
				}
				return
			}
			if err := p.Err(); err != nil {
				t.Fatalf("connection ended: %v", err)
			}
		})
	}
}
