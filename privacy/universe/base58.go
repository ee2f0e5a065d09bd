package universe

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
)

// base58Val maps a base58 character (Bitcoin alphabet) to its value and
// anything else to 0xff.
var base58Val = func() (t [256]byte) {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// decodeBase58Check25 decodes a base58check string that holds exactly 25
// bytes (a version byte, a 20-byte hash, a 4-byte checksum), the form of
// every P2PKH and P2SH address, into out without allocating. It reports
// false for anything else, including a bad checksum; it accepts exactly
// what btcutil's base58.CheckDecode accepts with a 20-byte payload (tested).
func decodeBase58Check25(s []byte, out *[25]byte) bool {
	if len(s) < 25 || len(s) > 35 {
		return false
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// The number in 32-bit limbs, least significant first, fed five
	// characters at a time (58^5 < 2^30).
	var limbs [7]uint32
	for i := 0; i < len(s); i += 5 {
		end := min(i+5, len(s))
		acc, mul := uint64(0), uint64(1)
		for _, c := range s[i:end] {
			v := base58Val[c]
			if v == 0xff {
				return false
			}
			acc = acc*58 + uint64(v)
			mul *= 58
		}
		carry := acc
		for k := range limbs {
			t := uint64(limbs[k])*mul + carry
			limbs[k] = uint32(t)
			carry = t >> 32
		}
		if carry != 0 {
			return false // more than 28 bytes
		}
	}
	var full [28]byte
	for k, l := range limbs {
		binary.BigEndian.PutUint32(full[24-4*k:], l)
	}
	if full[0]|full[1]|full[2] != 0 {
		return false // more than 25 bytes
	}
	copy(out[:], full[3:])
	// The decoded length is the leading '1's plus the significant bytes
	// of the number: it must be 25.
	lead := 0
	for lead < 25 && out[lead] == 0 {
		lead++
	}
	if lead != zeros {
		return false
	}
	sum := sha256.Sum256(out[:21])
	sum = sha256.Sum256(sum[:])
	return bytes.Equal(sum[:4], out[21:25])
}
