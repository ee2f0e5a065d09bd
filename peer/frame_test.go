package peer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestUndecodablePayloads plays a node whose message frames are whole but
// whose payloads do not decode: each ends the connection with ErrProtocol
// naming the command and wrapping the decoder's error, not as a node that
// hung up. A frame the stream cuts short is the node hanging up.
func TestUndecodablePayloads(t *testing.T) {
	insane := insaneCheckpoints()
	cfheaders := make([]byte, 1+32+32+3)
	cfheaders[65], cfheaders[66], cfheaders[67] = 0xfd, 0xd1, 0x07 // 2,001 filter hashes
	otherNet := frame(t, wire.NewMsgPing(1))
	otherNet[0] ^= 1
	tests := []struct {
		name   string
		stream []byte
		want   error // also matched with errors.Is, unless nil
		as     bool  // the cause is a *wire.MessageError
		says   string
	}{
		{"cfcheckpt of 100,001 headers", rawFrame(wire.CmdCFCheckpt, insane), wire.ErrInsaneCFHeaderCount, false, `"cfcheckpt"`},
		{"cfheaders of 2,001 hashes", rawFrame(wire.CmdCFHeaders, cfheaders), nil, true, `"cfheaders"`},
		{"a ping of 4 bytes", rawFrame(wire.CmdPing, make([]byte, 4)), io.ErrUnexpectedEOF, false, `"ping"`},
		{"an inv of 50,001 entries", rawFrame(wire.CmdInv, []byte{0xfd, 0x51, 0xc3}), nil, true, `"inv"`},
		{"a cfilter cut inside its data", rawFrame(wire.CmdCFilter, append(make([]byte, 33), 5, 1, 2)), io.ErrUnexpectedEOF, false, `"cfilter"`},
		{"another network", otherNet, nil, false, "network"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pipePeer(t, Config{}, tt.stream, false)
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the connection did not end")
			}
			err := p.Err()
			checkPeerError(t, err, p.Addr(), ErrProtocol)
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %q does not wrap %v", err, tt.want)
			}
			var me *wire.MessageError
			if tt.as && !errors.As(err, &me) {
				t.Fatalf("error %q holds no *wire.MessageError", err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %q does not say %s", err, tt.says)
			}
		})
	}
}

// TestCutFrameIsDisconnect: a stream that ends inside a frame's header or
// payload is the node hanging up, not a protocol violation.
func TestCutFrameIsDisconnect(t *testing.T) {
	whole := frame(t, wire.NewMsgPing(1))
	for _, cut := range []int{10, len(whole) - 3} {
		p := pipePeer(t, Config{}, whole[:cut], false)
		<-p.Done()
		checkPeerError(t, p.Err(), p.Addr(), ErrDisconnected)
	}
}

// TestRequestSeesUndecodableAnswer: a request whose answer does not
// decode fails with ErrProtocol naming the message, not with a
// disconnection.
func TestRequestSeesUndecodableAnswer(t *testing.T) {
	p := pipePeer(t, Config{Timeout: 5 * time.Second}, rawFrame(wire.CmdCFCheckpt, insaneCheckpoints()), true)
	_, err := p.GetCFCheckpt(context.Background(), *chaincfg.RegressionNetParams.GenesisHash, 1)
	checkPeerError(t, err, p.Addr(), ErrProtocol)
	if !errors.Is(err, wire.ErrInsaneCFHeaderCount) || !strings.Contains(err.Error(), `"cfcheckpt"`) {
		t.Fatalf("error %q", err)
	}
}

// TestUnknownCommandOverLimit: an unknown command is skipped, but not one
// claiming more than the protocol's largest payload, which is refused
// before it is read.
func TestUnknownCommandOverLimit(t *testing.T) {
	f := rawFrame("junk", nil)
	f[16], f[17], f[18], f[19] = 0, 0, 0, 3 // 48 MiB
	p := pipePeer(t, Config{}, f, false)
	<-p.Done()
	checkPeerError(t, p.Err(), p.Addr(), ErrProtocol)
	if !strings.Contains(p.Err().Error(), `"junk"`) {
		t.Fatalf("error %q does not name the command", p.Err())
	}
}

// insaneCheckpoints is the payload of a cfcheckpt claiming 100,001
// filter headers, more than btcd's wire decodes.
func insaneCheckpoints() []byte {
	return append(make([]byte, 1+chainhash.HashSize), 0xfe, 0xa1, 0x86, 0x01, 0x00)
}

// TestDamageToldFromLies: a filter or block whose payload checksum is
// left to the check against its commitment (not checked as it is read)
// fails that check either way; when its payload does not match the
// checksum the node gave it, the failure is damage on the way
// (ErrDamaged, neither ErrProtocol nor a lie), and only when it matches
// is it the node's lie.
func TestDamageToldFromLies(t *testing.T) {
	genesis := chaincfg.RegressionNetParams.GenesisBlock
	hash := genesis.BlockHash()
	filter := append(append([]byte{0}, hash[:]...), 3, 1, 2, 3)
	var blk bytes.Buffer
	if err := genesis.Serialize(&blk); err != nil {
		t.Fatal(err)
	}
	liar := errors.New("filter does not hash to its header")
	getFilter := func(p *Peer) error {
		return p.GetCFilters(context.Background(), 0, []chainhash.Hash{hash}, func(int, []byte) error { return liar })
	}
	getBlock := func(p *Peer) error {
		return p.GetBlocks(context.Background(), []chainhash.Hash{hash}, func(int, *wire.MsgBlock) error { return nil })
	}
	tests := []struct {
		name    string
		cmd     string
		payload []byte
		get     func(*Peer) error
		lie     error
	}{
		{"filter", wire.CmdCFilter, filter, getFilter, liar},
		{"block", wire.CmdBlock, blk.Bytes(), getBlock, ErrBadBlock},
	}
	for _, tt := range tests {
		lie := rawFrame(tt.cmd, flipLast(tt.payload))
		damaged := rawFrame(tt.cmd, tt.payload)
		damaged[len(damaged)-1] ^= 1
		for _, c := range []struct {
			name   string
			stream []byte
			want   error
		}{{"lie", lie, tt.lie}, {"damaged", damaged, ErrDamaged}} {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				p := pipePeer(t, Config{Timeout: 5 * time.Second}, c.stream, true)
				err := tt.get(p)
				if !errors.Is(err, c.want) {
					t.Fatalf("error %v, want %v", err, c.want)
				}
				if c.want != ErrDamaged && errors.Is(err, ErrDamaged) {
					t.Fatalf("a lie taken for damage: %v", err)
				}
				if c.want == ErrDamaged && (errors.Is(err, ErrProtocol) || errors.Is(err, ErrBadBlock)) {
					t.Fatalf("damage taken for a lie: %v", err)
				}
			})
		}
	}
}

// flipLast returns a copy of b with its last bit flipped.
func flipLast(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)-1] ^= 1
	return b
}
