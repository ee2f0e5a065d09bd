package lab

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
)

const vectorFile = "../../testvectors/bip158/testnet-19.json"

func readVectorFile(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestReadVectors reads BIP 158's vectors: ten blocks, each set giving
// the row's filter (which ReadVectors checks) and BuildBasic's.
func TestReadVectors(t *testing.T) {
	raw := readVectorFile(t)
	blocks, err := ReadVectors(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 10 {
		t.Fatalf("%d blocks, want the BIP's 10", len(blocks))
	}
	var rows [][]any
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		row := rows[i+1]
		if int(row[0].(float64)) != int(b.Height) || row[1].(string) != b.Hash.String() {
			t.Errorf("block %d: height %d hash %v, row %v %v", i, b.Height, b.Hash, row[0], row[1])
		}
		if want := len(row[2].(string)) / 2; b.Size != want {
			t.Errorf("height %d: size %d, want %d", b.Height, b.Size, want)
		}
		f, err := gcs.Build(b.Key(), gcs.BasicP, gcs.BasicM, b.Elements)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.NBytes(); string(got) != string(mustHex(t, row[5].(string))) {
			t.Errorf("height %d: filter %x, row %s", b.Height, got, row[5])
		}
	}
}

// TestReadVectorsRejectsDamage damages one field of one row at a time:
// each is an error wrapping ErrBadVectors that names the row.
func TestReadVectorsRejectsDamage(t *testing.T) {
	raw := readVectorFile(t)
	damage := func(edit func(rows [][]any)) string {
		var rows [][]any
		if err := json.Unmarshal(raw, &rows); err != nil {
			t.Fatal(err)
		}
		edit(rows)
		out, err := json.Marshal(rows)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	// Row 6 (index 5, height 49291) spends eight outputs and pays to an
	// empty script.
	flip := func(s string, at int) string { // another hex digit
		const digits = "0123456789abcdef"
		b := []byte(s)
		b[at] = digits[(strings.IndexByte(digits, b[at])+1)%16]
		return string(b)
	}
	tests := []struct {
		name, file, want string
	}{
		{"not JSON", "{", ""},
		{"no rows", "[]", "0 rows"},
		{"header only", `[["names"]]`, "1 row, want"},
		{"no header", damage(func(rows [][]any) { rows[0] = rows[1] }), "first row"},
		{"short row", damage(func(rows [][]any) { rows[5] = rows[5][:7] }), "row 6: 7 columns"},
		{"a row of one column", damage(func(rows [][]any) { rows[5] = rows[5][:1] }), "row 6: 1 column, want"},
		{"height a string", damage(func(rows [][]any) { rows[5][0] = "49291" }), "row 6: height"},
		{"block hash", damage(func(rows [][]any) { rows[5][1] = flip(rows[5][1].(string), 63) }), "row 6: the block hashes to"},
		{"block header byte", damage(func(rows [][]any) { rows[5][2] = flip(rows[5][2].(string), 10) }), "row 6: the block hashes to"},
		{"transaction byte", damage(func(rows [][]any) {
			s := rows[5][2].(string)
			rows[5][2] = flip(s, len(s)-20)
		}), "row 6"},
		{"bytes after the block", damage(func(rows [][]any) { rows[5][2] = rows[5][2].(string) + "00" }), "row 6: block: 1 byte after"},
		{"a script less", damage(func(rows [][]any) { rows[5][3] = rows[5][3].([]any)[1:] }), "row 6: 7 previous output scripts for 8 inputs"},
		{"a script changed", damage(func(rows [][]any) {
			ps := rows[5][3].([]any)
			ps[0] = flip(ps[0].(string), 5)
		}), "row 6: the block's scripts give the basic filter"},
		{"filter", damage(func(rows [][]any) { rows[5][5] = flip(rows[5][5].(string), 9) }), "row 6: the block's scripts give the basic filter"},
		{"filter not hex", damage(func(rows [][]any) { rows[5][5] = "zz" }), "row 6: basic filter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadVectors(strings.NewReader(tt.file))
			if !errors.Is(err, ErrBadVectors) {
				t.Fatalf("%v, want ErrBadVectors", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v, want it to say %q", err, tt.want)
			}
		})
	}
	big := strings.NewReader("[" + strings.Repeat(" ", MaxVectorsBytes) + "]")
	if _, err := ReadVectors(big); !errors.Is(err, ErrBadVectors) {
		t.Errorf("a file over the bound: %v", err)
	}
}

// FuzzReadVectors: whatever the bytes, ReadVectors returns blocks or an
// error wrapping ErrBadVectors, and every block it returns builds its
// row's filter (checked inside), never panics.
func FuzzReadVectors(f *testing.F) {
	raw := readVectorFile(f)
	f.Add(raw)
	var rows []json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		f.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		f.Add([]byte("[" + string(rows[0]) + "," + string(rows[i]) + "]"))
	}
	f.Add([]byte(`[["x"],[0,"",""]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := ReadVectors(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadVectors) {
				t.Fatalf("error %v does not wrap ErrBadVectors", err)
			}
			return
		}
		for _, b := range blocks {
			if b.Size <= wire.MaxBlockHeaderPayload {
				t.Fatalf("block %v of %d bytes accepted", b.Hash, b.Size)
			}
		}
	})
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
