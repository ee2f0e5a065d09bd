package universe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseCandidate(t *testing.T) {
	// The key of Bitcoin Core's and BIP 173's examples.
	pub := mustHex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	pubHash := btcutil.Hash160(pub)
	// BIP 350 P2TR test vector and BIP 173 P2WSH vector.
	p2trProg := mustHex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	p2wshProg := mustHex("1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262")
	p2shScript := mustHex("a914" + hex.EncodeToString(pubHash) + "87")
	p2sh, _ := btcutil.NewAddressScriptHashFromHash(pubHash, &chaincfg.MainNetParams)
	p2pkhTest, _ := btcutil.NewAddressPubKeyHash(pubHash, &chaincfg.TestNet3Params)
	multisig, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(pub).AddData(pub[:33]).AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()

	tests := []struct {
		line  string
		kind  Kind
		text  string
		elems [][]byte
	}{
		{"1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", KindAddress, "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", [][]byte{mustHex("751e76e8199196d454941c45d1b3a323f1433bd6")}},
		{p2sh.EncodeAddress(), KindAddress, p2sh.EncodeAddress(), [][]byte{pubHash}},
		{p2pkhTest.EncodeAddress() + "  # testnet", KindAddress, p2pkhTest.EncodeAddress(), [][]byte{pubHash}},
		{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", KindAddress, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", [][]byte{mustHex("751e76e8199196d454941c45d1b3a323f1433bd6")}},
		{"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", KindAddress, "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", [][]byte{mustHex("751e76e8199196d454941c45d1b3a323f1433bd6")}},
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", KindAddress, "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", [][]byte{p2wshProg}},
		{"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", KindAddress, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", [][]byte{p2trProg}},
		{"  " + hex.EncodeToString(pub) + "\r", KindPubKey, hex.EncodeToString(pub), [][]byte{pub, pubHash}},
		{strings.ToUpper(hex.EncodeToString(pubHash)), KindHash, strings.ToUpper(hex.EncodeToString(pubHash)), [][]byte{pubHash}},
		{hex.EncodeToString(p2wshProg), KindHash, hex.EncodeToString(p2wshProg), [][]byte{p2wshProg}},
		{hex.EncodeToString(p2shScript), KindScript, hex.EncodeToString(p2shScript), [][]byte{pubHash}},
		{hex.EncodeToString(multisig), KindScript, hex.EncodeToString(multisig), [][]byte{pub, pub[:33]}},
	}
	var p Parser
	for _, tt := range tests {
		c, err := p.Parse([]byte(tt.line))
		if err != nil || c == nil {
			t.Errorf("%q: candidate %v err=%v", tt.line, c, err)
			continue
		}
		if c.Kind != tt.kind || string(c.Text) != tt.text {
			t.Errorf("%q: kind %v text %q, want %v %q", tt.line, c.Kind, c.Text, tt.kind, tt.text)
		}
		if len(c.Elems) != len(tt.elems) {
			t.Errorf("%q: %d elements, want %d", tt.line, len(c.Elems), len(tt.elems))
			continue
		}
		for i := range c.Elems {
			if !bytes.Equal(c.Elems[i], tt.elems[i]) {
				t.Errorf("%q: element %d = %x, want %x", tt.line, i, c.Elems[i], tt.elems[i])
			}
		}
		if c.Pair() != (tt.kind == KindPubKey) {
			t.Errorf("%q: Pair() = %v", tt.line, c.Pair())
		}
	}
}

func TestParseCandidateSkipsAndErrors(t *testing.T) {
	var p Parser
	for _, line := range []string{"", "   ", "# comment", "\t# indented comment", "\r"} {
		if c, err := p.Parse([]byte(line)); c != nil || err != nil {
			t.Errorf("%q: candidate %v err=%v, want skipped", line, c, err)
		}
	}
	bad := []string{
		"1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMX",                                         // bad checksum
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",                                 // bad checksum
		"bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx", // v1 with bech32 checksum
		"zz", "abc", "0x1234", "00ff 11", "4c", // 4c: OP_PUSHDATA1 without length
		"6a", // script without pushes
		strings.Repeat("ab", maxLine),
	}
	for _, line := range bad {
		c, err := p.Parse([]byte(line))
		if err == nil || c != nil || !errors.Is(err, ErrBadCandidate) {
			t.Errorf("%.40q: candidate %v err=%v, want ErrBadCandidate", line, c, err)
		}
	}
}

func TestReadLineNumbers(t *testing.T) {
	in := "# header\n751e76e8199196d454941c45d1b3a323f1433bd6\n\nnot-a-candidate\n"
	n, err := Read(strings.NewReader(in), func(int, *Candidate) error { return nil })
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 || !errors.Is(err, ErrBadCandidate) {
		t.Fatalf("error %v, want a LineError at line 4", err)
	}
	if !strings.Contains(err.Error(), "line 4") {
		t.Errorf("message %q does not name the line", err)
	}
	_ = n
	var lines []int
	n, err = Read(strings.NewReader("# x\n751e76e8199196d454941c45d1b3a323f1433bd6\n\n751e76e8199196d454941c45d1b3a323f1433bd7"), func(l int, c *Candidate) error {
		lines = append(lines, l)
		return nil
	})
	if err != nil || n != 2 || len(lines) != 2 || lines[0] != 2 || lines[1] != 4 {
		t.Fatalf("n=%d lines=%v err=%v", n, lines, err)
	}
}

// TestReadParallelChunks crosses chunk boundaries with many workers and
// checks every line is seen once with its number, and that bad lines are
// skipped, counted and the first ten named in order whichever worker met
// them.
func TestReadParallelChunks(t *testing.T) {
	var b strings.Builder
	const lines = 60000
	var bad []int
	for i := 0; i < lines; i++ {
		switch {
		case i%7 == 3:
			b.WriteString("# comment line\n")
			continue
		case i%997 == 5:
			b.WriteString("not a candidate\n")
			bad = append(bad, i+1)
			continue
		case i%5 == 1:
			b.WriteString("0x") // accepted before hex
		}
		b.WriteString(hex.EncodeToString(bytes.Repeat([]byte{byte(i)}, 20)))
		if i%3 == 0 {
			b.WriteByte('\r') // CRLF
		}
		b.WriteByte('\n')
	}
	for _, strict := range []bool{false, true} {
		seen := make([][]int, 3)
		scan, err := ReadParallel(strings.NewReader(b.String()), ReadOptions{Workers: 3, Strict: strict}, func(w int) Visitor {
			return visitFunc(func(line int, c *Candidate) error {
				if c.Elems[0][0] != byte(line-1) {
					return errors.New("line number does not match content")
				}
				seen[w] = append(seen[w], line)
				return nil
			})
		})
		if strict {
			var le *LineError
			if !errors.As(err, &le) || le.Line != bad[0] {
				t.Fatalf("strict: error %v, want line %d", err, bad[0])
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, s := range seen {
			total += len(s)
		}
		want := lines - (lines+3)/7 - len(bad)
		if int(scan.CandidatesTested) != want || total != want || scan.LinesRead != lines || int(scan.LinesSkipped) != len(bad) {
			t.Fatalf("scan %+v seen=%d, want %d tested of %d lines, %d skipped", scan, total, want, lines, len(bad))
		}
		if len(scan.BadLines) != MaxBadLines {
			t.Fatalf("%d bad lines named, want %d", len(scan.BadLines), MaxBadLines)
		}
		for i, bl := range scan.BadLines {
			if bl.Line != bad[i] || !strings.Contains(bl.Reason, "not a candidate") {
				t.Errorf("bad line %d: %+v, want line %d", i, bl, bad[i])
			}
		}
	}
}

// TestReadParallelEmpty: a universe without candidates is an error, with
// or without lines that were skipped.
func TestReadParallelEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "# only a comment\n", "bogus\r\nzz"} {
		scan, err := ReadParallel(strings.NewReader(in), ReadOptions{Workers: 2}, func(int) Visitor {
			return visitFunc(func(int, *Candidate) error { return nil })
		})
		if err == nil {
			err = scan.RequireCandidates()
		}
		if !errors.Is(err, ErrEmpty) {
			t.Errorf("%q: error %v, want ErrEmpty", in, err)
		}
	}
}

// TestSegwitAddressVectors checks the BIP 350 vectors: valid addresses
// give their witness program, invalid ones are rejected.
func TestSegwitAddressVectors(t *testing.T) {
	b, err := os.ReadFile("../../testvectors/privacy/segwit_addresses.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Source string `json:"source"`
		Valid  []struct {
			Address      string `json:"address"`
			ScriptPubKey string `json:"script_pubkey"`
		} `json:"valid"`
		Invalid []struct {
			Address string `json:"address"`
			Reason  string `json:"reason"`
		} `json:"invalid"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Source, "BIP 350") || len(v.Valid) != 8 || len(v.Invalid) != 15 {
		t.Fatalf("vector file damaged: %d valid, %d invalid", len(v.Valid), len(v.Invalid))
	}
	var p Parser
	for _, tt := range v.Valid {
		spk := mustHex(tt.ScriptPubKey)
		// scriptPubKey: OP_n, a push of the program.
		if len(spk) < 4 || int(spk[1]) != len(spk)-2 {
			t.Fatalf("%s: malformed scriptPubKey in the vector file", tt.Address)
		}
		c, err := p.Parse([]byte(tt.Address))
		if err != nil || c == nil || c.Kind != KindAddress {
			t.Errorf("%s: %v", tt.Address, err)
			continue
		}
		if !bytes.Equal(c.Elems[0], spk[2:]) {
			t.Errorf("%s: program %x, want %x", tt.Address, c.Elems[0], spk[2:])
		}
	}
	for _, tt := range v.Invalid {
		c, err := p.Parse([]byte(tt.Address))
		if tt.Reason == "Invalid human-readable part" {
			if err != nil {
				t.Errorf("%s: any network's address is a candidate: %v", tt.Address, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s (%s) accepted as %v", tt.Address, tt.Reason, c.Kind)
		}
	}
}

// TestDecodeHex20 checks the word-at-a-time decoder against encoding/hex
// on random digits of both cases and on every byte value at every position.
func TestDecodeHex20(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const digits = "0123456789abcdefABCDEF"
	for trial := 0; trial < 200; trial++ {
		line := make([]byte, 40)
		for i := range line {
			line[i] = digits[rng.IntN(len(digits))]
		}
		for pos := 0; pos < 40; pos++ {
			for v := 0; v < 256; v++ {
				if trial > 3 && v%17 != trial%17 {
					continue // every value at every position in the first trials
				}
				s := append([]byte(nil), line...)
				s[pos] = byte(v)
				var got [20]byte
				ok := decodeHex20(&got, s)
				want, err := hex.DecodeString(string(s))
				if ok != (err == nil) {
					t.Fatalf("%q: ok=%v, encoding/hex error %v", s, ok, err)
				}
				if ok && !bytes.Equal(got[:], want) {
					t.Fatalf("%q: %x, want %x", s, got, want)
				}
			}
		}
	}
}

// TestReadSkipsByteOrderMark checks that a universe saved with a UTF-8 byte
// order mark reads its first candidate, and that the mark on a later line
// is still a bad line.
func TestReadSkipsByteOrderMark(t *testing.T) {
	const c = "751e76e8199196d454941c45d1b3a323f1433bd6"
	var lines []int
	n, err := Read(strings.NewReader("\ufeff"+c+"\n"+c+"\n"), func(l int, _ *Candidate) error {
		lines = append(lines, l)
		return nil
	})
	if err != nil || n != 2 || len(lines) != 2 || lines[0] != 1 || lines[1] != 2 {
		t.Fatalf("with a byte order mark: n=%d lines=%v err=%v; want 2 candidates on lines 1 and 2", n, lines, err)
	}
	_, err = Read(strings.NewReader(c+"\n\ufeff"+c+"\n"), func(int, *Candidate) error { return nil })
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("a mark on line 2: %v, want a *LineError of line 2", err)
	}
}
