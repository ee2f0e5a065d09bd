package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/btcsuite/btcd/wire"
)

// decodeTx reads raw, given as what (--tx, TX_HEX), as one whole
// serialized transaction, witness serialization allowed. Bytes that are
// none are bad input that says, in the tool's words, where and why the
// decoding stopped.
func decodeTx(what string, raw []byte) (*wire.MsgTx, error) {
	r := bytes.NewReader(raw)
	var tx wire.MsgTx
	if err := tx.Deserialize(r); err != nil {
		if kind := wireKind(raw); kind != "" {
			return nil, usageError{&restated{fmt.Sprintf("%s: %s are %s, not a transaction: give one transaction (getrawtransaction TXID prints one)", what, plural(len(raw), "byte"), kind), err}}
		}
		n := fmt.Sprintf("%d bytes are", len(raw))
		if len(raw) == 1 {
			n = "1 byte is"
		}
		msg := fmt.Sprintf("%s: %s not a whole transaction: %s (give a whole transaction's hex, as getrawtransaction TXID prints it)",
			what, n, txProblem(err, raw, len(raw)-r.Len()))
		return nil, usageError{&restated{msg, err}}
	}
	if r.Len() != 0 {
		return nil, badInput("%s: %s after the end of the transaction", what, plural(r.Len(), "byte"))
	}
	return &tx, nil
}

// wireLimit matches the limits btcd's wire puts on a transaction's counts
// and sizes: "too many input transactions to fit into max message size
// [count C, max M]", "signature script is larger than the max allowed
// size [count C, max M]".
var (
	wireTooMany = regexp.MustCompile(`^too many (input transactions|output transactions|witness items) to fit into max message size \[count (\d+), max (\d+)\]$`)
	wireTooBig  = regexp.MustCompile(`^(.+) is larger than the max allowed size \[count (\d+), max (\d+)\]$`)
)

// wireItems names what btcd's wire counts in the tool's words.
var wireItems = map[string]string{
	"input transactions":  "inputs",
	"output transactions": "outputs",
	"witness items":       "witness items in an input",
}

// txProblem says why raw is no transaction: err is what decoding it
// returned after reading read bytes.
func txProblem(err error, raw []byte, read int) string {
	segwit := len(raw) > 4 && raw[4] == 0x00 // the marker where the input count would be
	var me *wire.MessageError
	switch {
	case len(raw) == 0:
		return "empty: no data at all"
	case (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) && segwit && read <= 6:
		return "the data end after the segwit marker 00 (at byte 5, where the input count would be): a flag 01 and the inputs should follow"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the data end too early, after byte %d", read)
	case !errors.As(err, &me):
		return words(err)
	}
	d := me.Description
	if m := wireTooMany.FindStringSubmatch(d); m != nil {
		return fmt.Sprintf("it announces %s %s, more than a transaction can hold (at most %s)", m[2], wireItems[m[1]], m[3])
	}
	if m := wireTooBig.FindStringSubmatch(d); m != nil {
		return fmt.Sprintf("a %s of %s bytes is announced, more than a transaction can hold (at most %s)", m[1], m[2], m[3])
	}
	switch {
	case segwit && len(raw) > 5 && strings.HasPrefix(d, "witness tx but flag byte is"):
		return fmt.Sprintf("byte 6 is %02x where the flag 01 of a segwit transaction must be (byte 5, 00, is read as the segwit marker, since a transaction has at least one input)", raw[5])
	case strings.HasPrefix(d, "non-canonical varint"):
		return fmt.Sprintf("the count (CompactSize) ending at byte %d is not written in its shortest form, as a transaction must write it", read)
	}
	return d
}
