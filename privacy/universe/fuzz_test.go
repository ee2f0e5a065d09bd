package universe

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
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
	var p Parser
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

// FuzzIndexReader feeds arbitrary bytes to the index reader: errors,
// never panics, and entries come in increasing order within the range.
func FuzzIndexReader(f *testing.F) {
	ix := NewIndexWriter(f.TempDir(), 0)
	ix.Add("mipkm7Am1Y9NgzRVm1oFChJLCg8bHJ3ESw", 3)
	ix.Add("mipkm7Am1Y9NgzRVm1oFChJLCg8bHJ3ESw", 5)
	ix.AddTx("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", 4, 0)
	ix.AddTx("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", 4, 7)
	ix.AddTx("mzBc4XEFSdzCDcTxAgf6EZXgsZWpztRhef", 8, 1)
	ix.AddRole("mzBc4XEFSdzCDcTxAgf6EZXgsZWpztRhef", 6, 2, RolePaid)
	ix.AddRole("mzBc4XEFSdzCDcTxAgf6EZXgsZWpztRhef", 7, 0, RoleSpent)
	ix.AddRole("mzBc4XEFSdzCDcTxAgf6EZXgsZWpztRhef", 7, 0, RolePaid)
	ix.AddRole("mzBc4XEFSdzCDcTxAgf6EZXgsZWpztRhef", 7, 9, RoleSpent)
	hd := &IndexHeader{Network: "regtest", First: 3}
	for h := int32(3); h < 9; h++ {
		hd.Hashes = append(hd.Hashes, blockHash(h))
	}
	var good bytes.Buffer
	if _, err := ix.WriteTo(&good, hd); err != nil {
		f.Fatal(err)
	}
	ix.Close()
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:len(good.Bytes())/2])
	f.Add([]byte("SPVFIDX\x01\x07regtest\x00\xff\xff\xff\xff\x0f"))
	f.Add([]byte("SPVFIDX\x02\x07regtest\x00\x01" + string(make([]byte, 32)) + "\x01a\x01\x00\x02\x00\x00\x00\x01"))
	f.Add([]byte("SPVFIDX\x01"))
	// Versions 3 and 4 of one entry, the roles' bits read as positions
	// in 3 and the other way about.
	f.Add(oldIndex(3, []byte{1, 'a', 2, 0, 2, 2, 3, 1, 1, 0}))
	f.Add(oldIndex(4, []byte{1, 'a', 2, 0, 2, 2<<2 | 1, 3<<2 | 3, 1, 1, 0}))
	f.Add(oldIndex(4, []byte{1, 'a', 2, 0, 2, 2, 3, 1, 1, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		ir, err := NewIndexReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		hd := ir.Header()
		prev := ""
		for i := 0; ; i++ {
			e, err := ir.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				return
			}
			if i > 0 && e.Candidate <= prev || len(e.Heights) == 0 {
				t.Fatalf("entry %q after %q, %d heights", e.Candidate, prev, len(e.Heights))
			}
			for j, h := range e.Heights {
				if h < hd.First || h > hd.Last() || j > 0 && h <= e.Heights[j-1] {
					t.Fatalf("%q: heights %v outside %d..%d or not increasing", e.Candidate, e.Heights, hd.First, hd.Last())
				}
			}
			if e.Txs != nil && len(e.Txs) != len(e.Heights) {
				t.Fatalf("%q: %d heights, %d transaction lists", e.Candidate, len(e.Heights), len(e.Txs))
			}
			for _, txs := range e.Txs {
				for j, tx := range txs {
					if tx >= maxBlockTxs || j > 0 && tx <= txs[j-1] {
						t.Fatalf("%q: transactions %v", e.Candidate, txs)
					}
				}
			}
			if (e.Roles != nil) != (hd.Version >= 4) || e.Roles != nil && len(e.Roles) != len(e.Txs) {
				t.Fatalf("%q: version %d, %d transaction lists, roles %v", e.Candidate, hd.Version, len(e.Txs), e.Roles)
			}
			for i, roles := range e.Roles {
				if len(roles) != len(e.Txs[i]) || slices.ContainsFunc(roles, func(r Role) bool { return r&^roleBits != 0 }) {
					t.Fatalf("%q: roles %v of transactions %v", e.Candidate, roles, e.Txs[i])
				}
			}
			prev = e.Candidate
		}
	})
}
