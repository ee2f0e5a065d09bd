package universe

import (
	"bufio"
	"bytes"
	"io"
)

// utf8BOM is the byte order mark Windows editors write at the start of a
// UTF-8 file.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// skipBOM returns r without a leading UTF-8 byte order mark, so a
// universe saved by a Windows editor reads as its first line says.
func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	return br
}
