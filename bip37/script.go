package bip37

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// Script opcodes used by the parser and the output-type checks.
const (
	opPushData1     = 0x4c
	opPushData2     = 0x4d
	opPushData4     = 0x4e
	op1             = 0x51
	op16            = 0x60
	opCheckSig      = 0xac
	opCheckMultiSig = 0xae
	opInvalid       = 0xff
)

// maxPubKeysPerMultisig is Core's MAX_PUBKEYS_PER_MULTISIG.
const maxPubKeysPerMultisig = 20

// ScriptElements returns the data pushes of an output script by which a
// node matches the output (MatchTxAndUpdate): its non-empty pushes up to
// the first malformed one, each once, in order. A filter that holds one of
// them matches every output paying the script; a script without any
// cannot be watched with a filter.
func ScriptElements(script []byte) [][]byte {
	var out [][]byte
	for pc := 0; pc < len(script); {
		_, data, next, ok := nextOp(script, pc)
		if !ok {
			break
		}
		pc = next
		if len(data) > 0 && !slices.ContainsFunc(out, func(e []byte) bool { return bytes.Equal(e, data) }) {
			out = append(out, data)
		}
	}
	return out
}

// nextOp decodes the operation at script[pc:] the way Core's GetScriptOp
// does. It returns the opcode, the pushed data (nil for non-push opcodes;
// a subslice of script, never a copy), the position after the operation and
// whether the operation was well formed. A push whose length runs past the
// end of the script is malformed, and Core stops parsing there.
func nextOp(script []byte, pc int) (op byte, data []byte, next int, ok bool) {
	if pc >= len(script) {
		return opInvalid, nil, pc, false
	}
	op = script[pc]
	pc++
	if op > opPushData4 {
		return op, nil, pc, true
	}
	var size int
	rest := len(script) - pc
	switch op {
	case opPushData1:
		if rest < 1 {
			return opInvalid, nil, pc, false
		}
		size = int(script[pc])
		pc++
	case opPushData2:
		if rest < 2 {
			return opInvalid, nil, pc, false
		}
		size = int(binary.LittleEndian.Uint16(script[pc:]))
		pc += 2
	case opPushData4:
		if rest < 4 {
			return opInvalid, nil, pc, false
		}
		n := binary.LittleEndian.Uint32(script[pc:])
		pc += 4
		if uint64(n) > uint64(len(script)-pc) {
			return opInvalid, nil, pc, false
		}
		size = int(n)
	default:
		size = int(op)
	}
	if size > len(script)-pc {
		return opInvalid, nil, pc, false
	}
	return op, script[pc : pc+size : pc+size], pc + size, true
}

// pubKeyLen is Core's CPubKey::GetLen: the length a public key with this
// header byte must have, or 0 for an invalid header.
func pubKeyLen(header byte) int {
	switch header {
	case 2, 3:
		return 33
	case 4, 6, 7:
		return 65
	}
	return 0
}

// validPubKeySize is Core's CPubKey::ValidSize.
func validPubKeySize(b []byte) bool {
	return len(b) > 0 && pubKeyLen(b[0]) == len(b)
}

// isPayToPubKey reports whether Core's Solver classifies script as PUBKEY:
// <33 or 65 byte key> OP_CHECKSIG with a well-formed key header.
func isPayToPubKey(script []byte) bool {
	switch len(script) {
	case 67:
		return script[0] == 65 && script[66] == opCheckSig && validPubKeySize(script[1:66])
	case 35:
		return script[0] == 33 && script[34] == opCheckSig && validPubKeySize(script[1:34])
	}
	return false
}

// scriptNumber is Core's GetScriptNumber in solver.cpp: OP_1..OP_16, or a
// minimally pushed, minimally encoded number, within [min, max].
func scriptNumber(op byte, data []byte, min, max int) (int, bool) {
	var n int
	switch {
	case op >= op1 && op <= op16:
		n = int(op-op1) + 1
	case op > 0 && op <= opPushData4:
		if !minimalPush(op, data) {
			return 0, false
		}
		v, ok := decodeMinimalScriptNum(data)
		if !ok {
			return 0, false
		}
		n = v
	default:
		return 0, false
	}
	if n < min || n > max {
		return 0, false
	}
	return n, true
}

// minimalPush is Core's CheckMinimalPush.
func minimalPush(op byte, data []byte) bool {
	switch {
	case len(data) == 0:
		return op == 0
	case len(data) == 1 && data[0] >= 1 && data[0] <= 16:
		return false
	case len(data) == 1 && data[0] == 0x81:
		return false
	case len(data) <= 75:
		return int(op) == len(data)
	case len(data) <= 255:
		return op == opPushData1
	case len(data) <= 65535:
		return op == opPushData2
	}
	return true
}

// decodeMinimalScriptNum decodes a CScriptNum of at most 4 bytes with the
// minimal-encoding rule; it reports false where Core throws.
func decodeMinimalScriptNum(b []byte) (int, bool) {
	if len(b) > 4 {
		return 0, false
	}
	if len(b) > 0 && b[len(b)-1]&0x7f == 0 {
		if len(b) <= 1 || b[len(b)-2]&0x80 == 0 {
			return 0, false
		}
	}
	if len(b) == 0 {
		return 0, true
	}
	var v int64
	for i, c := range b {
		v |= int64(c) << (8 * i)
	}
	if b[len(b)-1]&0x80 != 0 {
		v &^= int64(0x80) << (8 * (len(b) - 1))
		v = -v
	}
	return int(v), true
}

// isMultisig reports whether Core's Solver classifies script as MULTISIG:
// <m> <pubkey>... <n> OP_CHECKMULTISIG with 1 <= m <= n <= 20, n keys of
// valid size, nothing after.
func isMultisig(script []byte) bool {
	if len(script) < 1 || script[len(script)-1] != opCheckMultiSig {
		return false
	}
	op, data, pc, ok := nextOp(script, 0)
	if !ok {
		return false
	}
	required, ok := scriptNumber(op, data, 1, maxPubKeysPerMultisig)
	if !ok {
		return false
	}
	keys := 0
	for {
		op, data, pc, ok = nextOp(script, pc)
		if !ok {
			op, data = opInvalid, nil
			break
		}
		if !validPubKeySize(data) {
			break
		}
		keys++
	}
	n, ok := scriptNumber(op, data, required, maxPubKeysPerMultisig)
	if !ok || n != keys {
		return false
	}
	return pc+1 == len(script)
}
