package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHandshakeErrorsTyped: the failures a caller tells the user about
// in its own words are typed, with what it needs to say them: a service
// that is no node of the network (its answer's magic, the network
// wanted, in a *NetworkError of the handshake), and a proxy that cannot
// be reached (its address, in a *ProxyError of the connection), and a
// service that never answers the version message (the time it was
// given, in a *TimeoutError of the handshake).
func TestHandshakeErrorsTyped(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	t.Run("a service that is no node", func(t *testing.T) {
		addr := peertest.NewAnswering(t, []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
		_, err := Dial(context.Background(), Config{Addr: addr, Params: params, Timeout: 5 * time.Second})
		var ne *NetworkError
		var pe *PeerError
		if !errors.As(err, &ne) || !errors.As(err, &pe) || !errors.Is(err, ErrProtocol) {
			t.Fatalf("dialing an HTTP server: %v, want a *PeerError wrapping a *NetworkError", err)
		}
		if got := wire.BitcoinNet(binary.LittleEndian.Uint32([]byte("HTTP"))); ne.Got != got || ne.Want != params.Net || pe.Op != OpHandshake || pe.Peer != addr {
			t.Errorf("error %v: Got %v Want %v Op %q Peer %q, want %v, %v, %q, %s", err, ne.Got, ne.Want, pe.Op, pe.Peer, got, params.Net, OpHandshake, addr)
		}
	})
	t.Run("a node of another network", func(t *testing.T) {
		var hdr [wire.MessageHeaderSize]byte
		binary.LittleEndian.PutUint32(hdr[:4], uint32(wire.TestNet3))
		copy(hdr[4:], "version")
		addr := peertest.NewAnswering(t, hdr[:])
		_, err := Dial(context.Background(), Config{Addr: addr, Params: params, Timeout: 5 * time.Second})
		var ne *NetworkError
		if !errors.As(err, &ne) || ne.Got != wire.TestNet3 || ne.Want != params.Net {
			t.Fatalf("a testnet3 answer: %v, want a *NetworkError naming testnet3 and regtest", err)
		}
	})
	t.Run("a version that does not decode", func(t *testing.T) {
		payload := []byte{0}
		var hdr [wire.MessageHeaderSize]byte
		binary.LittleEndian.PutUint32(hdr[:4], uint32(params.Net))
		copy(hdr[4:16], "version")
		binary.LittleEndian.PutUint32(hdr[16:20], uint32(len(payload)))
		copy(hdr[20:24], chainhash.DoubleHashB(payload)[:4])
		addr := peertest.NewAnswering(t, append(hdr[:], payload...))
		_, err := Dial(context.Background(), Config{Addr: addr, Params: params, Timeout: 5 * time.Second})
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, ErrProtocol) || !errors.Is(err, io.ErrUnexpectedEOF) || de.Command != "version" {
			t.Fatalf("a version of one byte: %v, want a *DecodeError of \"version\" wrapping ErrProtocol and io.ErrUnexpectedEOF", err)
		}
	})
	t.Run("a service that does not answer", func(t *testing.T) {
		addr := peertest.NewAnswering(t, nil)
		const within = 1500 * time.Millisecond
		_, err := Dial(context.Background(), Config{Addr: addr, Params: params, Timeout: within})
		var te *TimeoutError
		var pe *PeerError
		if !errors.As(err, &te) || !errors.As(err, &pe) || !errors.Is(err, ErrStalled) {
			t.Fatalf("a silent service: %v, want a *PeerError wrapping a *TimeoutError", err)
		}
		if te.Within != within || pe.Op != OpHandshake {
			t.Errorf("error %v: Within %v Op %q, want %v, %q", err, te.Within, pe.Op, within, OpHandshake)
		}
	})
	t.Run("a proxy that is down", func(t *testing.T) {
		down := peertest.ClosedAddr(t)
		dial, err := SOCKS5("socks5://" + down)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Dial(context.Background(), Config{Addr: "127.0.0.1:1", Params: params, Timeout: 5 * time.Second, Dial: dial})
		var px *ProxyError
		var pe *PeerError
		if !errors.As(err, &px) || px.Proxy != down || px.Err == nil || !errors.As(err, &pe) || pe.Op != OpConnect || !errors.Is(err, ErrDisconnected) {
			t.Fatalf("dialing through a proxy that is down: %v, want a *PeerError of %q wrapping a *ProxyError naming %s", err, OpConnect, down)
		}
	})
}
