package universe

// bech32Val maps a bech32 data character (either case) to its 5-bit value
// and anything else to 0xff.
var bech32Val = func() (t [256]byte) {
	const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(charset); i++ {
		c := charset[i]
		t[c] = byte(i)
		if c >= 'a' && c <= 'z' {
			t[c-'a'+'A'] = byte(i)
		}
	}
	return t
}()

// Checksum constants of BIP 173 (bech32) and BIP 350 (bech32m).
const (
	bech32Const  = 1
	bech32mConst = 0x2bc830a3
)

// bech32Polymod steps BIP 173's checksum by one 5-bit value, branch-free:
// -(bit) is all ones when the bit is set.
func bech32Polymod(chk uint32, v byte) uint32 {
	top := chk >> 25
	chk = (chk&0x1ffffff)<<5 ^ uint32(v)
	chk ^= -(top & 1) & 0x3b6a57b2
	chk ^= -(top >> 1 & 1) & 0x26508e6d
	chk ^= -(top >> 2 & 1) & 0x1ea119fa
	chk ^= -(top >> 3 & 1) & 0x3d4233dd
	chk ^= -(top >> 4 & 1) & 0x2a1462b3
	return chk
}

// decodeSegwit decodes a segwit address of any network (BIP 173, BIP 350)
// into its witness program, written to out, without allocating. It reports
// false for anything that is not a valid segwit address, and agrees with
// btcutil's bech32 decoding plus the segwit rules (tested).
func decodeSegwit(s []byte, out *[40]byte) (prog []byte, ok bool) {
	if len(s) < 8 || len(s) > 90 {
		return nil, false
	}
	sep := -1
	lower, upper := false, false
	for i, c := range s {
		switch {
		case c < 33 || c > 126:
			return nil, false
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		}
		if c == '1' {
			sep = i
		}
	}
	// The data part holds the version, at least 2 bytes of program (4
	// characters) and the 6-character checksum.
	if lower && upper || sep < 1 || len(s)-sep-1 < 1+4+6 {
		return nil, false
	}
	chk := uint32(1)
	for _, c := range s[:sep] {
		chk = bech32Polymod(chk, fold(c)>>5)
	}
	chk = bech32Polymod(chk, 0)
	for _, c := range s[:sep] {
		chk = bech32Polymod(chk, fold(c)&31)
	}
	data := s[sep+1:]
	for _, c := range data {
		v := bech32Val[c]
		if v == 0xff {
			return nil, false
		}
		chk = bech32Polymod(chk, v)
	}
	version := bech32Val[data[0]]
	switch {
	case version > 16:
		return nil, false
	case version == 0 && chk != bech32Const, version != 0 && chk != bech32mConst:
		return nil, false
	}
	// 5-bit groups to bytes, refusing more than 4 bits of padding or
	// non-zero padding.
	var acc uint32
	bits, n := 0, 0
	for _, c := range data[1 : len(data)-6] {
		acc = acc<<5 | uint32(bech32Val[c])
		bits += 5
		if bits >= 8 {
			bits -= 8
			if n == len(out) {
				return nil, false
			}
			out[n] = byte(acc >> bits)
			n++
		}
	}
	if bits > 4 || acc&(1<<bits-1) != 0 {
		return nil, false
	}
	switch {
	case n < 2 || n > 40:
		return nil, false
	case version == 0 && n != 20 && n != 32:
		return nil, false
	}
	return out[:n], true
}

// fold lowercases an ASCII letter.
func fold(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
