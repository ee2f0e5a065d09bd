package chain

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// FuzzHeaders feeds untrusted headers messages to the header-chain checks:
// they must be rejected or accepted without a panic, and an accepted chain
// must link up.
func FuzzHeaders(f *testing.F) {
	params := &chaincfg.RegressionNetParams
	// Seed: one valid regtest block on top of the genesis block, found
	// by grinding the nonce (the regtest target passes half of all
	// hashes).
	h := params.GenesisBlock.Header
	h.PrevBlock = params.GenesisBlock.BlockHash()
	h.Timestamp = h.Timestamp.Add(600e9)
	for !New(params).tryHeader(&h) {
		h.Nonce++
	}
	msg := wire.NewMsgHeaders()
	msg.AddBlockHeader(&h)
	var buf bytes.Buffer
	if err := msg.BtcEncode(&buf, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0x01})
	f.Add([]byte{0xfd, 0xd1, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m wire.MsgHeaders
		if err := m.BtcDecode(bytes.NewReader(b), wire.ProtocolVersion, wire.BaseEncoding); err != nil || len(m.Headers) == 0 {
			return
		}
		c := New(params)
		if err := extend(c, m.Headers); err != nil {
			return
		}
		for i := int32(1); i <= c.Height(); i++ {
			hdr := c.Header(i)
			if hdr.PrevBlock != c.Hash(i-1) {
				t.Fatalf("accepted chain does not link at height %d", i)
			}
		}
	})
}

// tryHeader reports whether h would be accepted on top of the chain.
func (c *Chain) tryHeader(h *wire.BlockHeader) bool {
	return c.checkHeader(h, c.Height()+1) == nil
}

// FuzzMinDifficultyHeaders feeds untrusted headers to a chain under the
// minimum-difficulty rules: the first byte picks testnet3's or testnet4's
// (BIP 94) rules on an easy limit, the rest is a headers message. Accepted
// headers must link up and carry the bits the rules demand.
func FuzzMinDifficultyHeaders(f *testing.F) {
	networks := []*chaincfg.Params{easyParams(&chaincfg.TestNet3Params), easyParams(&TestNet4Params)}
	// Seeds: across a retarget whose last block took the exception, a
	// chain valid under each network's rules; and a time warp at the
	// retarget, valid on testnet3 only.
	late := append(steps(8, fast), slow, fast, step{gap: time.Minute})
	for i, p := range networks {
		c := build(f, p, late)
		f.Add(append([]byte{byte(i)}, headersMessage(f, c, 1)...))
	}
	warp := build(f, networks[0], append(steps(9, fast), step{gap: -601 * time.Second}))
	f.Add(append([]byte{1}, headersMessage(f, warp, 1)...))
	hs := make([]*wire.BlockHeader, 0, warp.Height())
	for h := int32(1); h <= warp.Height(); h++ {
		hdr := warp.Header(h)
		hs = append(hs, &hdr)
	}
	if _, err := New(networks[1]).Extend(hs); err == nil || !strings.Contains(err.Error(), "time-warp") {
		f.Fatalf("time-warp seed on testnet4: %v", err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		params := networks[int(b[0])%len(networks)]
		var m wire.MsgHeaders
		if err := m.BtcDecode(bytes.NewReader(b[1:]), wire.ProtocolVersion, wire.BaseEncoding); err != nil || len(m.Headers) == 0 {
			return
		}
		c := New(params)
		c.Now = func() time.Time { return time.Unix(1<<32, 0) }
		// What was appended before a bad header stays: check it too.
		up, err := c.Extend(m.Headers)
		// A backed chain does the same, and writes it to its store.
		st := newMemStore(params)
		bc, lerr := backed(params, st, testWindow)
		if lerr != nil {
			t.Fatal(lerr)
		}
		bc.Now = c.Now
		if bup, berr := bc.Extend(m.Headers); fmt.Sprint(berr) != fmt.Sprint(err) || !reflect.DeepEqual(bup, up) ||
			bc.Height() != c.Height() || st.Height() != c.Height() || bc.Hash(bc.Height()) != c.Hash(c.Height()) {
			t.Fatalf("backed chain: %+v, %v at %d; in memory %+v, %v at %d", bup, berr, bc.Height(), up, err, c.Height())
		}
		check := New(params)
		for i := int32(1); i <= c.Height(); i++ {
			hdr := c.Header(i)
			if hdr.PrevBlock != c.Hash(i-1) {
				t.Fatalf("accepted chain does not link at height %d", i)
			}
			if want := check.requiredBits(i, hdr.Timestamp); hdr.Bits != want {
				t.Fatalf("height %d accepted with bits %08x, rules demand %08x", i, hdr.Bits, want)
			}
			check.push(&hdr, hdr.BlockHash())
		}
	})
}

// headersMessage encodes c's headers from height from on as a headers
// message.
func headersMessage(tb testing.TB, c *Chain, from int32) []byte {
	msg := wire.NewMsgHeaders()
	for h := from; h <= c.Height(); h++ {
		hdr := c.Header(h)
		if err := msg.AddBlockHeader(&hdr); err != nil {
			tb.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := msg.BtcEncode(&buf, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzBranch feeds a branch received in two untrusted headers messages to
// a chain of 12 blocks: the first byte picks the chain (in memory or
// backed), the second splits the headers message that follows into the
// branch's two messages. A branch is adopted only whole, checked and with
// more work; otherwise the chain is unchanged.
func FuzzBranch(f *testing.F) {
	params := &chaincfg.RegressionNetParams
	main := New(params)
	grow(f, main, 12, time.Minute)
	path := main.headers
	// Seeds: branches from 6 of 8 and of 4 headers, and of 7 that fork
	// at the tip, split in the middle.
	for _, seed := range []struct{ fork, n int }{{6, 8}, {6, 4}, {12, 7}} {
		alt := New(params)
		if err := extend(alt, ptrs(path[1:seed.fork+1])); err != nil {
			f.Fatal(err)
		}
		grow(f, alt, seed.n, 2*time.Minute)
		for kind := byte(0); kind < 2; kind++ {
			f.Add(append([]byte{kind, byte(seed.n / 2)}, headersMessage(f, alt, int32(seed.fork+1))...))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		var m wire.MsgHeaders
		if err := m.BtcDecode(bytes.NewReader(b[2:]), wire.ProtocolVersion, wire.BaseEncoding); err != nil || len(m.Headers) == 0 {
			return
		}
		c, err := Load(params, slices.Clone(path))
		if b[0]%2 == 1 {
			c, err = backed(params, storeOf(path...), 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		split := min(int(b[1]), len(m.Headers))
		first, second := m.Headers[:split], m.Headers[split:]
		if len(first) == 0 {
			first, second = second, nil
		}
		br, err := c.NewBranch(first)
		if err == nil {
			err = br.Add(second)
		}
		var up Update
		if err == nil {
			up, err = c.Adopt(br)
		}
		if err != nil {
			if tip, hash := c.Tip(); tip != 12 || hash != path[12].BlockHash() {
				t.Fatalf("a refused branch (%v) changed the chain", err)
			}
			return
		}
		// Adopted: the chain is the branch over the path below its fork,
		// and every header links up.
		if up.Fork != br.Fork() || c.Height() != up.Fork+int32(up.Connected) {
			t.Fatalf("update %+v, tip %d", up, c.Height())
		}
		for h := int32(1); h <= c.Height(); h++ {
			if c.Header(h).PrevBlock != c.Hash(h-1) {
				t.Fatalf("the adopted chain does not link at %d", h)
			}
		}
		// Every regtest block has the same work: more is longer.
		if c.Hash(up.Fork) != path[up.Fork].BlockHash() || up.Connected <= 12-int(up.Fork) {
			t.Fatalf("fork %d kept %v, %d connected", up.Fork, c.Hash(up.Fork), up.Connected)
		}
	})
}
