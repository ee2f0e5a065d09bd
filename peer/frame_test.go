package peer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
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
	var blk bytes.Buffer
	if err := chaincfg.RegressionNetParams.GenesisBlock.Serialize(&blk); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		stream []byte
		want   error // also matched with errors.Is, unless nil
		as     bool  // the cause is a *wire.MessageError
		says   string
		also   string // said too, if not ""
	}{
		{"cfcheckpt of 100,001 headers", rawFrame(wire.CmdCFCheckpt, insane), wire.ErrInsaneCFHeaderCount, false, `"cfcheckpt"`, ""},
		{"cfheaders of 2,001 hashes", rawFrame(wire.CmdCFHeaders, cfheaders), nil, true, `"cfheaders"`, ""},
		{"a ping of 4 bytes", rawFrame(wire.CmdPing, make([]byte, 4)), io.ErrUnexpectedEOF, false, `"ping"`, ""},
		{"an inv of 50,001 entries", rawFrame(wire.CmdInv, []byte{0xfd, 0x51, 0xc3}), nil, true, `"inv"`, ""},
		{"a cfilter cut inside its data", rawFrame(wire.CmdCFilter, append(make([]byte, 33), 5, 1, 2)), io.ErrUnexpectedEOF, false, `"cfilter"`, ""},
		{"another network", otherNet, nil, false, "network", ""},
		{"a block and 1 byte", rawFrame(wire.CmdBlock, append(bytes.Clone(blk.Bytes()), 0)), nil, false, `"block"`, "1 byte after the message"},
		{"a block and 2 bytes", rawFrame(wire.CmdBlock, append(bytes.Clone(blk.Bytes()), 0, 0)), nil, false, `"block"`, "2 bytes after the message"},
		{"a cfilter and 1 byte", rawFrame(wire.CmdCFilter, append(make([]byte, 33), 1, 7, 0)), nil, false, `"cfilter"`, "1 byte after the filter"},
		{"a cfilter and 2 bytes", rawFrame(wire.CmdCFilter, append(make([]byte, 33), 1, 7, 0, 0)), nil, false, `"cfilter"`, "2 bytes after the filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := playToEnd(t, Config{}, tt.stream)
			err := p.Err()
			checkPeerError(t, err, p.Addr(), ErrProtocol)
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %q does not wrap %v", err, tt.want)
			}
			var me *wire.MessageError
			if tt.as && !errors.As(err, &me) {
				t.Fatalf("error %q holds no *wire.MessageError", err)
			}
			if !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), tt.also) {
				t.Fatalf("error %q does not say %s %s", err, tt.says, tt.also)
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

// TestOversizedFrames: a message whose header claims more than its
// command allows, and an unknown command claiming more than Core's
// 4,000,000-byte message limit, is refused from its header with an
// *OversizeError naming the command and length, before any byte of its
// payload is read; an unknown command within the limit is skipped.
func TestOversizedFrames(t *testing.T) {
	huge := rawFrame("junk", nil)
	huge[16], huge[17], huge[18], huge[19] = 0, 0, 0, 3 // 48 MiB, never sent
	tests := []struct {
		name   string
		stream []byte
		want   *OversizeError // nil: skipped, then the node hangs up
	}{
		{"unknown of 48 MiB", huge, &OversizeError{"junk", 3 << 24, maxPayload}},
		{"unknown of 5,000,000 bytes", rawFrame("junk", make([]byte, 5_000_000)), &OversizeError{"junk", 5_000_000, maxPayload}},
		{"unknown of 4,000,001 bytes", rawFrame("junk", make([]byte, maxPayload+1)), &OversizeError{"junk", maxPayload + 1, maxPayload}},
		{"block of 4,000,001 bytes", rawFrame(wire.CmdBlock, make([]byte, maxPayload+1)), &OversizeError{"block", maxPayload + 1, maxPayload}},
		{"cfcheckpt of 1 MiB and 1 byte", rawFrame(wire.CmdCFCheckpt, make([]byte, 1<<20+1)), &OversizeError{"cfcheckpt", 1<<20 + 1, 1 << 20}},
		{"unknown of 3,999,000 bytes", rawFrame("junk", make([]byte, 3_999_000)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := playToEnd(t, Config{}, tt.stream)
			err := p.Err()
			if tt.want == nil {
				checkPeerError(t, err, p.Addr(), ErrDisconnected)
				if got := p.BytesReceived(); got != uint64(len(tt.stream)) {
					t.Fatalf("%d bytes read, want the %d sent", got, len(tt.stream))
				}
				return
			}
			checkPeerError(t, err, p.Addr(), ErrProtocol)
			var oe *OversizeError
			if !errors.As(err, &oe) || *oe != *tt.want {
				t.Fatalf("error %q, want %+v", err, tt.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q message of %d bytes", tt.want.Command, tt.want.Length)) {
				t.Fatalf("error %q does not name the command and length", err)
			}
			if got := p.BytesReceived(); got != wire.MessageHeaderSize {
				t.Fatalf("%d bytes read, want the header's %d alone", got, wire.MessageHeaderSize)
			}
		})
	}
}

// playToEnd plays stream to a peer with cfg and no request in flight,
// and returns it when the connection ended.
func playToEnd(t *testing.T, cfg Config, stream []byte) *Peer {
	t.Helper()
	p := pipePeer(t, cfg, stream, false)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
	}
	return p
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

// TestPayloadGrowsAsItArrives: a frame's claimed length is the node's
// word, so a payload larger than the read buffer is read into pieces,
// each allocated when the bytes before it came, never more than
// payloadStep ahead of them; the pieces decode to the block that was
// sent, and their checksum is the payload's.
func TestPayloadGrowsAsItArrives(t *testing.T) {
	const slack = 256 << 10 // the test's own allocations
	pr, pw := io.Pipe()
	defer pr.Close()
	fr := frameReader{br: bufio.NewReaderSize(pr, readBufferSize), net: chaincfg.RegressionNetParams.Net}
	blk := benchBlock(8000)
	whole := frame(t, blk)
	size := len(whole) - wire.MessageHeaderSize
	if size <= 3*payloadStep || size > maxPayload {
		t.Fatalf("a block of %d bytes", size)
	}
	type result struct {
		f   wireFrame
		err error
	}
	done := make(chan result, 1)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() {
		f, err := fr.next(wire.ProtocolVersion)
		done <- result{f, err}
	}()
	// A pipe's write returns when the reader took every byte: after the
	// second, the reader has sized its buffer and waits for more.
	pw.Write(whole[:wire.MessageHeaderSize])
	sent := wire.MessageHeaderSize + 100
	pw.Write(whole[wire.MessageHeaderSize:sent])
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes allocated when 100 bytes of a %d-byte payload came", got, size)
	if got > payloadStep+slack {
		t.Fatalf("%d bytes allocated when 100 bytes of a %d-byte payload came, want at most %d", got, size, payloadStep+slack)
	}
	// Halfway and more, what is held (after a collection) is what came
	// and one step.
	for _, upTo := range []int{size / 2, size * 3 / 4} {
		pw.Write(whole[sent : wire.MessageHeaderSize+upTo])
		sent = wire.MessageHeaderSize + upTo
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("%d bytes held when %d payload bytes came", held, upTo)
		if held > int64(upTo+payloadStep+slack) {
			t.Fatalf("%d bytes held when %d bytes came, want at most %d", held, upTo, upTo+payloadStep+slack)
		}
	}
	go pw.Write(whole[sent:])
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.f.size != len(whole) || len(r.f.more) != 3 {
		t.Fatalf("frame of %d bytes in %d pieces, want %d in 4", r.f.size, 1+len(r.f.more), len(whole))
	}
	if !r.f.sumOK() {
		t.Fatal("the pieces do not match the payload's checksum")
	}
	m, err := r.f.decode(wire.ProtocolVersion)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	m.BtcEncode(&b, wire.ProtocolVersion, wire.WitnessEncoding)
	if !bytes.Equal(b.Bytes(), whole[wire.MessageHeaderSize:]) {
		t.Fatal("the pieces decode to another block")
	}
	last := r.f.more[2]
	last[len(last)-1] ^= 1
	if r.f.sumOK() {
		t.Fatal("a damaged last piece matches the checksum")
	}
}

// TestPiecesReader: a payload read in pieces reads as the bytes joined,
// whatever the sizes of the reads.
func TestPiecesReader(t *testing.T) {
	for _, sizes := range [][]int{{5}, {1, 1}, {3, 7, 2}, {1 << 10, 1, 300}} {
		var f wireFrame
		var want []byte
		for i, n := range sizes {
			piece := bytes.Repeat([]byte{byte(i + 1)}, n)
			want = append(want, piece...)
			if i == 0 {
				f.payload = piece
			} else {
				f.more = append(f.more, piece)
			}
		}
		r := f.reader()
		if r.Len() != len(want) {
			t.Fatalf("pieces %v: Len %d, want %d", sizes, r.Len(), len(want))
		}
		if err := iotest.TestReader(r, want); err != nil {
			t.Fatalf("pieces %v: %v", sizes, err)
		}
	}
}

// TestStartedFrameMustComplete: a connection may idle between messages,
// but a node that sends a message's header and then holds back its
// payload is cut off with ErrStalled naming the message after
// Config.Timeout (never before, also when a deadline set for an earlier
// payload still runs; a quarter more at most, also when its bytes trickle
// in meanwhile), with or without a request, and does not hold our
// buffer for it; a message whose payload comes in parts within the
// timeout is read, and the idle connection after it lives on.
func TestStartedFrameMustComplete(t *testing.T) {
	const timeout = 300 * time.Millisecond
	t.Run("held back", func(t *testing.T) {
		client, node := socketPair(t)
		defer node.Close()
		p := startPeer(t, Config{Timeout: timeout}, client)
		whole := rawFrame(wire.CmdBlock, make([]byte, 2_000_000))
		node.Write(whole[:wire.MessageHeaderSize+100])
		select {
		case <-p.Done():
		case <-time.After(10 * timeout):
			t.Fatal("the connection outlived a payload held back")
		}
		err := p.Err()
		checkPeerError(t, err, p.Addr(), ErrStalled)
		if !strings.Contains(err.Error(), `"block" message of 2000000 bytes`) {
			t.Fatalf("error %q does not name the message", err)
		}
	})
	t.Run("held back after one in parts", func(t *testing.T) {
		// The deadline the first payload set serves the second: not one
		// moment of the timeout is taken from it.
		p, node := junkInParts(t, timeout, timeout/8)
		time.Sleep(timeout / 8)
		second := rawFrame(wire.CmdBlock, make([]byte, 2_000_000))
		node.Write(second[:wire.MessageHeaderSize+100])
		start := time.Now()
		select {
		case <-p.Done():
		case <-time.After(10 * timeout):
			t.Fatal("the connection outlived a payload held back")
		}
		if took := time.Since(start); took < timeout {
			t.Fatalf("cut %v after the header, before the timeout of %v", took, timeout)
		} else if most := timeout + timeout/boundSlack; took > most+timeout {
			// A deadline moved on by each payload, or by each byte of it,
			// would hold the connection longer.
			t.Fatalf("cut %v after the header: the payload's deadline runs %v at most", took, most)
		}
		checkPeerError(t, p.Err(), p.Addr(), ErrStalled)
	})
	t.Run("trickled", func(t *testing.T) {
		client, node := socketPair(t)
		defer node.Close()
		p := startPeer(t, Config{Timeout: timeout}, client)
		whole := rawFrame(wire.CmdBlock, make([]byte, 100_000))
		node.Write(whole[:wire.MessageHeaderSize])
		start := time.Now()
		go func() {
			for _, b := range whole[wire.MessageHeaderSize:] {
				if _, err := node.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(timeout / 30)
			}
		}()
		select {
		case <-p.Done():
		case <-time.After(10 * timeout):
			t.Fatal("the connection outlived a payload trickled byte by byte")
		}
		if took, most := time.Since(start), timeout+timeout/boundSlack; took < timeout || took > most+timeout {
			t.Fatalf("cut %v after the header, want %v to %v", took, timeout, most)
		}
		checkPeerError(t, p.Err(), p.Addr(), ErrStalled)
	})
	t.Run("in parts, then idle", func(t *testing.T) {
		p, _ := junkInParts(t, timeout, timeout/3)
		select {
		case <-p.Done():
			t.Fatalf("a message whole within the timeout, or the idle after it, ended the connection: %v", p.Err())
		case <-time.After(3 * timeout):
		}
		if got, want := p.BytesReceived(), uint64(wire.MessageHeaderSize+junkSize); got != want {
			t.Fatalf("%d bytes read, want %d", got, want)
		}
	})
}

// junkSize is the payload of the message junkInParts sends.
const junkSize = 200_000

// junkInParts starts a peer with the timeout and sends it a message of
// an unknown command in two halves, pause apart; it returns the peer and
// the node's end of the connection, closed when the test ends.
func junkInParts(t *testing.T, timeout, pause time.Duration) (*Peer, *net.UnixConn) {
	client, node := socketPair(t)
	t.Cleanup(func() { node.Close() })
	p := startPeer(t, Config{Timeout: timeout}, client)
	whole := rawFrame("junk", make([]byte, junkSize))
	node.Write(whole[:len(whole)/2])
	time.Sleep(pause)
	node.Write(whole[len(whole)/2:])
	return p, node
}

// TestBufferedWhole: the read loop lets a getcfilters answer gather only
// while the next frame is not in its buffer whole, so a frame whose
// header came without its payload is waited for, not read alone; a frame
// larger than the buffer counts once its header is there, and the bytes
// of the frame last read (peeked, not yet discarded) do not count.
func TestBufferedWhole(t *testing.T) {
	cf := frame(t, wire.NewMsgCFilter(wire.GCSFilterRegular, &chainhash.Hash{1}, make([]byte, 1200)))
	big := frame(t, wire.NewMsgCFilter(wire.GCSFilterRegular, &chainhash.Hash{2}, make([]byte, 3000)))
	for _, tc := range []struct {
		name   string
		stream []byte
		size   int  // of the buffer
		read   int  // frames read before asking
		want   bool // buffered
	}{
		{"nothing", nil, 4096, 0, false},
		{"part of a header", cf[:10], 4096, 0, false},
		{"a header alone", cf[:wire.MessageHeaderSize], 4096, 0, false},
		{"all but the last byte", cf[:len(cf)-1], 4096, 0, false},
		{"a whole frame", cf, 4096, 0, true},
		{"the frame read is not the next", cf, 4096, 1, false},
		{"the next after the frame read", append(slices.Clone(cf), cf...), 4096, 1, true},
		{"the next cut after the frame read", append(slices.Clone(cf), cf[:100]...), 4096, 1, false},
		{"a header of a frame larger than the buffer", big[:wire.MessageHeaderSize], 2048, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := frameReader{br: bufio.NewReaderSize(bytes.NewReader(tc.stream), tc.size), net: chaincfg.RegressionNetParams.Net}
			for range tc.read {
				if _, err := fr.next(wire.ProtocolVersion); err != nil {
					t.Fatal(err)
				}
			}
			fr.br.Peek(len(tc.stream)) // what came, buffered
			if got := fr.buffered(); got != tc.want {
				t.Fatalf("buffered %d of %d bytes (%d pending): %v, want %v", fr.br.Buffered(), len(tc.stream), fr.pending, got, tc.want)
			}
		})
	}
}
