package bip37

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

func TestFilterLoadRoundTripMatchesBtcd(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 300; i++ {
		size := r.IntN(MaxFilterSize + 1)
		if i%3 == 0 {
			size = r.IntN(300) // both CompactSize widths
		}
		f, err := NewFilterFromParams(randBytes(r, size), uint32(r.IntN(MaxHashFuncs+1)), r.Uint32(), wire.BloomUpdateType(r.IntN(3)))
		if err != nil {
			t.Fatal(err)
		}
		payload, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		// btcd's encoder is the oracle for the byte layout.
		var buf bytes.Buffer
		if err := f.MsgFilterLoad().BtcEncode(&buf, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(payload, buf.Bytes()) {
			t.Fatalf("payload differs from btcd's encoding")
		}
		g, err := DecodeFilterLoad(payload)
		if err != nil {
			t.Fatal(err)
		}
		h, err := FilterFromMsg(f.MsgFilterLoad())
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*Filter{g, h} {
			if !bytes.Equal(x.Bits(), f.Bits()) || x.HashFuncs() != f.HashFuncs() || x.Tweak() != f.Tweak() || x.Flags() != f.Flags() {
				t.Fatal("decoded filter differs")
			}
		}
		var u Filter
		if err := u.UnmarshalBinary(payload); err != nil || !bytes.Equal(u.Bits(), f.Bits()) {
			t.Fatalf("UnmarshalBinary: %v", err)
		}
	}
}

func TestDecodeFilterLoadErrors(t *testing.T) {
	tail := "0500000000000000" + "01" // 5 funcs, tweak 0, flags 1
	tests := []struct {
		name    string
		payload string
		want    error
	}{
		{"ok", "03614e9b" + tail, nil},
		{"empty filter ok", "00" + tail, nil},
		{"empty payload", "", ErrTruncated},
		{"truncated CompactSize", "fd01", ErrTruncated},
		{"non-canonical CompactSize", "fd0300614e9b" + tail, ErrNonCanonicalSize},
		{"non-canonical 4-byte CompactSize", "fe03000000614e9b" + tail, ErrNonCanonicalSize},
		{"too large", "fda18c" + strings.Repeat("00", 36001) + tail, ErrFilterTooLarge},
		{"huge length, few bytes", "ffffffffffffffffff", ErrFilterTooLarge},
		{"bits truncated", "05614e9b" + tail, ErrTruncated},
		{"tail truncated", "03614e9b05000000", ErrTruncated},
		{"trailing byte", "03614e9b" + tail + "00", ErrTrailingData},
		{"51 hash funcs", "03614e9b" + "33000000" + "00000000" + "01", ErrTooManyHashFuncs},
		// Core and btcd accept any flags byte; only its two low bits count.
		{"flags 3", "03614e9b" + "05000000" + "00000000" + "03", nil},
		{"flags 0x81", "03614e9b" + "05000000" + "00000000" + "81", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeFilterLoad(mustHex(t, tt.payload))
			if !errorIs(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// TestUndefinedFlagsRoundTrip checks that a flags byte BIP 37 gives no
// meaning survives decoding and encoding unchanged, and acts on matching
// through its two low bits only, as in Core.
func TestUndefinedFlagsRoundTrip(t *testing.T) {
	for _, flags := range []byte{3, 0x80, 0x81, 0xff} {
		payload := mustHex(t, "03614e9b"+"05000000"+"00000000"+hex.EncodeToString([]byte{flags}))
		f, err := DecodeFilterLoad(payload)
		if err != nil {
			t.Fatalf("flags %#x: %v", flags, err)
		}
		if f.Flags() != wire.BloomUpdateType(flags) {
			t.Errorf("flags %#x decoded as %#x", flags, f.Flags())
		}
		again, err := f.MarshalBinary()
		if err != nil || !bytes.Equal(again, payload) {
			t.Errorf("flags %#x: re-encoded %x, %v; want %x", flags, again, err, payload)
		}
	}
}

func TestFilterAdd(t *testing.T) {
	f := NewFilter(3, 0.01, 0, wire.BloomUpdateAll)
	ok := bytes.Repeat([]byte{1}, MaxFilterAddDataSize)
	if err := f.FilterAdd(ok); err != nil || !f.Contains(ok) {
		t.Fatalf("520-byte element: %v", err)
	}
	before := f.Bits()
	big := bytes.Repeat([]byte{2}, MaxFilterAddDataSize+1)
	if err := f.FilterAdd(big); !errors.Is(err, ErrFilterAddTooLarge) {
		t.Fatalf("521-byte element: error %v", err)
	}
	if !bytes.Equal(before, f.Bits()) {
		t.Fatal("a rejected filteradd changed the filter")
	}
	if err := ValidateFilterAdd(nil); err != nil {
		t.Fatal(err)
	}
}

func TestFilterLoadCoreVectorHex(t *testing.T) {
	// The payload of Core's bloom_create_insert_serialize, decoded and
	// checked field by field.
	f, err := DecodeFilterLoad(mustHex(t, "03614e9b050000000000000001"))
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(f.Bits()) != "614e9b" || f.HashFuncs() != 5 || f.Tweak() != 0 || f.Flags() != wire.BloomUpdateAll {
		t.Fatalf("decoded %x %d %d %d", f.Bits(), f.HashFuncs(), f.Tweak(), f.Flags())
	}
}
