package privacy

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/wire"
)

// FuzzParseCandidate feeds arbitrary universe lines to the parser: it must
// never panic, and what it accepts must be usable.
func FuzzParseCandidate(f *testing.F) {
	for _, s := range []string{
		"", "# comment", "751e76e8199196d454941c45d1b3a323f1433bd6", "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH",
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4 # x", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
		"0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
		"76a914751e76e8199196d454941c45d1b3a323f1433bd688ac", "4c", "4dffff", "00 11", "zz\t#", "\r\n",
		"1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262",
		"0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798 # pair 1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH, listed bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4, height 1",
		"0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798 # listed 1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH,,pair",
		"0x751e76e8199196d454941c45d1b3a323f1433bd6", "0X751E76E8199196D454941C45D1B3A323F1433BD6\r",
		"751e76e8199196d454941c45d1b3a323f1433bd6\r", "0x", "0x0x751e76e8199196d454941c45d1b3a323f1433bd6",
		"0x76a914751e76e8199196d454941c45d1b3a323f1433bd688ac # x\r", "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH\r",
	} {
		f.Add([]byte(s))
	}
	var p CandidateParser
	f.Fuzz(func(t *testing.T, line []byte) {
		// The allocation-free base58check decoder agrees with btcutil's.
		var out [25]byte
		payload, version, err := base58.CheckDecode(string(line))
		if got, want := decodeBase58Check25(line, &out), err == nil && len(payload) == 20; got != want ||
			got && (out[0] != version || !bytes.Equal(out[1:21], payload)) {
			t.Fatalf("base58 %q: ours %v %x, btcutil %v %x", line, got, out, want, payload)
		}
		// So does the allocation-free segwit decoder with btcutil's bech32.
		var prog [40]byte
		got, ok := decodeSegwit(line, &prog)
		if want, wantOK := segwitReference(string(line)); ok != wantOK || ok && !bytes.Equal(got, want) {
			t.Fatalf("segwit %q: ours %v %x, btcutil %v %x", line, ok, got, wantOK, want)
		}
		c, err := p.Parse(line)
		if err != nil {
			if c != nil {
				t.Fatal("candidate with an error")
			}
			return
		}
		if c == nil {
			return
		}
		if len(c.Text) == 0 || len(c.Elems) == 0 || c.Kind < KindAddress || c.Kind > KindScript {
			t.Fatalf("accepted %q as %+v", line, c)
		}
		if !bytes.Contains(line, c.Text) {
			t.Fatalf("text %q not from the line %q", c.Text, line)
		}
		if c.Kind == KindPubKey && (len(c.Elems) != 2 || len(c.Elems[1]) != 20) {
			t.Fatalf("pubkey without its hash: %+v", c)
		}
		if c.PairAddress != nil && (c.Kind != KindPubKey || !bytes.Contains(line, c.PairAddress)) ||
			c.Listed != nil && c.PairAddress == nil {
			t.Fatalf("pair marker %q read as %+v", line, c)
		}
		for _, e := range c.Elems {
			if len(e) == 0 {
				t.Fatalf("empty element from %q", line)
			}
		}
	})
}

// FuzzReadCapture feeds arbitrary capture files to the reader and the
// replay: errors, never panics.
func FuzzReadCapture(f *testing.F) {
	rec, err := NewFilterLoadRecord(time.Unix(1700000000, 0), "127.0.0.1:1", "s-1", &wire.MsgFilterLoad{Filter: []byte{0xff, 0x01}, HashFuncs: 3, Tweak: 9, Flags: 1})
	if err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(rec)
	f.Add(append(good, '\n'))
	// The older form, with the bit array and its parameters.
	f.Add([]byte(`{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:2","command":"filterload","filter":"ff01","hash_funcs":3,"tweak":9,"flags":1}` + "\n"))
	f.Add([]byte(`{"client":"c","session":"x","command":"filterload","filterload":"02ff010300000009000000"}` + "\n" +
		`{"client":"c","session":"x","command":"filteradd","data":"01"}` + "\n" + `{"client":"c","session":"y","command":"filterclear"}`))
	f.Add([]byte(`{"command":"filterload","filterload":"02ff01030000000900000001","filter":"ff"}`))
	f.Add([]byte(`{"command":"filterload","filterload":"fd0100"}`))
	f.Add([]byte(`{"command":"filterload","filterload":"0"}`))
	f.Add([]byte(`{"time":"2024-01-01T00:00:00Z","client":"c","command":"filteradd","data":"0102"}` + "\n"))
	f.Add([]byte(`{"time":"2024-01-01T00:00:00Z","client":"c","command":"filterclear"}`))
	f.Add([]byte(`{"command":"filterload","filter":"zz"}`))
	f.Add([]byte(`{"command":"filterload","filter":"00","hash_funcs":51}`))
	f.Add([]byte(`{"command":"bogus"}{"x":1}`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadCapture(bytes.NewReader(data))
		if err != nil {
			return
		}
		cf, err := CapturedFilters(recs)
		if err != nil {
			t.Fatalf("records accepted by ReadCapture fail to replay: %v", err)
		}
		sessions, err := CaptureSessions(recs)
		if err != nil {
			t.Fatalf("records accepted by ReadCapture fail to group: %v", err)
		}
		n := 0
		for _, s := range sessions {
			n += len(s.Filters)
		}
		if n != len(cf) {
			t.Fatalf("%d filters in sessions, %d captured", n, len(cf))
		}
		for _, c := range cf {
			if c.Filter == nil {
				t.Fatal("captured filter without a filter")
			}
			c.Filter.Contains([]byte("x"))
		}
	})
}

// FuzzRelayFrame feeds arbitrary client bytes through the relay's message
// handling: frame reading, recording and the version patch. Nothing may
// panic, and no buffer may grow past the bytes actually present.
func FuzzRelayFrame(f *testing.F) {
	v := wire.NewMsgVersion(&wire.NetAddress{}, &wire.NetAddress{}, 1, 0)
	var vb bytes.Buffer
	v.BtcEncode(&vb, wire.ProtocolVersion, wire.BaseEncoding)
	var fl bytes.Buffer
	(&wire.MsgFilterLoad{Filter: []byte{1, 2, 3}, HashFuncs: 2, Tweak: 5}).BtcEncode(&fl, wire.ProtocolVersion, wire.BaseEncoding)
	f.Add(frame(wire.TestNet, "version", vb.Bytes()))
	f.Add(append(frame(wire.TestNet, "filterload", fl.Bytes()), frame(wire.TestNet, "filteradd", []byte{2, 9, 9})...))
	f.Add(frame(wire.TestNet, "filterclear", nil))
	f.Add(frame(wire.TestNet, "filterload", []byte{0xfe, 0xff, 0xff, 0xff, 0xff}))
	f.Add(append(frame(wire.TestNet, "ping", nil)[:16], 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := bytes.NewReader(data)
		var hdr [frameHeaderSize]byte
		var payload bytes.Buffer
		for {
			cmd, err := readFrame(rd, wire.TestNet, &hdr, &payload)
			if err != nil {
				return
			}
			if payload.Cap() > len(data)+64*1024 {
				t.Fatalf("payload buffer of %d bytes for %d bytes of input", payload.Cap(), len(data))
			}
			body := payload.Bytes()
			if rec, ok, err := clientRecord(cmd, body, "fuzz", "s", time.Unix(0, 0)); err == nil && ok {
				if _, err := json.Marshal(rec); err != nil {
					t.Fatal(err)
				}
				if rec.Command == CmdFilterLoad {
					if _, err := rec.LoadedFilter(); err != nil {
						t.Fatalf("recorded filterload does not load: %v", err)
					}
				}
			}
			if cmd == "version" {
				before := append([]byte(nil), hdr[:]...)
				patchVersionServices(&hdr, body)
				// The patched frame must still pass the checksum.
				fr := append(hdr[:], body...)
				if _, err := readFrame(bytes.NewReader(fr), wire.TestNet, &hdr, &bytes.Buffer{}); err != nil {
					t.Fatalf("patched version frame invalid: %v (header was %x)", err, before)
				}
			}
		}
	})
}
