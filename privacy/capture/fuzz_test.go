package capture

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

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
		recs, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		cf, err := replay(recs)
		if err != nil {
			t.Fatalf("records accepted by Read fail to replay: %v", err)
		}
		sessions, err := Sessions(recs)
		if err != nil {
			t.Fatalf("records accepted by Read fail to group: %v", err)
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
					if _, err := rec.loadedFilter(); err != nil {
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
