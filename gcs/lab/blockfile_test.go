package lab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
)

// linkedTestChain is newTestChain's blocks made a chain: each header
// names the block before and its transactions' merkle root.
func linkedTestChain(seed uint64, n int) []*wire.MsgBlock {
	blocks := newTestChain(seed, n).blocks
	for i, b := range blocks {
		txs := make([]*btcutil.Tx, len(b.Transactions))
		for k, tx := range b.Transactions {
			txs[k] = btcutil.NewTx(tx)
		}
		b.Header.MerkleRoot = blockchain.CalcMerkleRoot(txs, false)
		if i > 0 {
			b.Header.PrevBlock = blocks[i-1].BlockHash()
		}
	}
	return blocks
}

// writeBlockFile writes blocks from height first into a block file.
func writeBlockFile(t testing.TB, first int32, blocks []*wire.MsgBlock) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewBlockFileWriter(&buf, wire.TestNet)
	for i, b := range blocks {
		if err := w.Add(first+int32(i), b); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// readChain reads a block file into a Chain.
func readChain(file []byte) (*Chain, BlockFileInfo, error) {
	c := NewChain(0)
	info, err := ReadBlockFile(bytes.NewReader(file), c.Add)
	return c, info, err
}

// TestBlockFileRoundTrip: the blocks read back from a block file make,
// through a Chain, the very Blocks the blocks written make.
func TestBlockFileRoundTrip(t *testing.T) {
	blocks := linkedTestChain(3, 25)
	const first = 700
	file := writeBlockFile(t, first, blocks)
	want := NewChain(0)
	for i, b := range blocks {
		if err := want.Add(first+int32(i), b); err != nil {
			t.Fatal(err)
		}
	}
	got, info, err := readChain(file)
	if err != nil {
		t.Fatal(err)
	}
	if info != (BlockFileInfo{Net: wire.TestNet, First: first, Blocks: len(blocks)}) || info.Last() != first+24 {
		t.Errorf("info %+v, last %d", info, info.Last())
	}
	if !reflect.DeepEqual(got.Blocks(), want.Blocks()) {
		t.Error("the blocks read back differ from the blocks written")
	}
	if u, _ := got.Unknown(); u != 0 {
		t.Errorf("%d unknown inputs", u)
	}
	if !strings.HasPrefix(string(file), "spvfilter blocks 1\n") {
		t.Errorf("file starts %q", file[:20])
	}
}

// TestBlockFileWriterRefuses: the writer refuses a block that does not
// follow the one before, by height or by hash.
func TestBlockFileWriterRefuses(t *testing.T) {
	blocks := linkedTestChain(4, 3)
	for _, c := range []struct {
		name    string
		heights []int32
		order   []int
		want    string
	}{
		{"gap in heights", []int32{5, 7}, []int{0, 1}, "after height 5"},
		{"not the next block", []int32{5, 6}, []int{0, 2}, "does not follow"},
		{"negative height", []int32{-1}, []int{0}, "height -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := NewBlockFileWriter(new(bytes.Buffer), wire.TestNet)
			var err error
			for i, k := range c.order {
				if err = w.Add(c.heights[i], blocks[k]); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestReadBlockFileCut: a file cut anywhere is an error, but at the end
// of a block, where it is that many blocks.
func TestReadBlockFileCut(t *testing.T) {
	blocks := linkedTestChain(5, 3)
	file := writeBlockFile(t, 0, blocks)
	ends := map[int]int{} // a block's end offset -> blocks before it
	off := blockFileHeaderLen
	for i, b := range blocks {
		off += 4 + b.SerializeSize()
		ends[off] = i + 1
	}
	for n := 0; n < len(file); n++ {
		_, info, err := readChain(file[:n])
		if want, ok := ends[n]; ok {
			if err != nil || info.Blocks != want {
				t.Fatalf("cut at the end of block %d (byte %d): %d blocks, %v", want, n, info.Blocks, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadBlockFile) {
			t.Fatalf("cut at byte %d of %d: error %v, want ErrBadBlockFile", n, len(file), err)
		}
	}
}

// TestReadBlockFileBad: each fault of a block file is an error that says
// what is wrong and where.
func TestReadBlockFileBad(t *testing.T) {
	blocks := linkedTestChain(6, 3)
	good := writeBlockFile(t, 10, blocks)
	second := blockFileHeaderLen + 4 + blocks[0].SerializeSize() // offset of block 2
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "does not start with"},
		{"other format", []byte(`["Block Height,Block Hash"]`), "does not start with"},
		{"header cut", good[:blockFileHeaderLen-2], "header: unexpected EOF"},
		{"no blocks", good[:blockFileHeaderLen], "no blocks"},
		{"negative first height", edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[len(blockFileMagic)+4:], 0xffffffff)
			return b
		}), "first height -1"},
		{"length too large", edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[second:], wire.MaxBlockPayload+1)
			return b
		}), "block 2 (height 11) at byte " + strconv.Itoa(second) + ": length 4000001"},
		{"length beyond the block", edit(func(b []byte) []byte {
			n := binary.LittleEndian.Uint32(b[second:])
			binary.LittleEndian.PutUint32(b[second:], n+1)
			return append(b, 0)
		}), "ends 1 byte before its length"},
		{"length short of the block", edit(func(b []byte) []byte {
			n := binary.LittleEndian.Uint32(b[second:])
			binary.LittleEndian.PutUint32(b[second:], n-1)
			return b
		}), "block 2 (height 11)"},
		{"a transaction changed", edit(func(b []byte) []byte {
			b[len(b)-5] ^= 1 // the last transaction's last output script or lock time
			return b
		}), "block 3 (height 12)"},
		{"blocks out of order", func() []byte {
			return writeBlockFileUnchecked(10, blocks[0], blocks[2], blocks[1])
		}(), "names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readChain(c.file)
			if !errors.Is(err, ErrBadBlockFile) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ErrBadBlockFile saying %q", err, c.want)
			}
		})
	}
}

// writeBlockFileUnchecked writes blocks as a block file without the
// writer's checks.
func writeBlockFileUnchecked(first int32, blocks ...*wire.MsgBlock) []byte {
	var buf bytes.Buffer
	buf.WriteString(blockFileMagic)
	binary.Write(&buf, binary.LittleEndian, uint32(wire.TestNet))
	binary.Write(&buf, binary.LittleEndian, first)
	for _, b := range blocks {
		binary.Write(&buf, binary.LittleEndian, uint32(b.SerializeSize()))
		b.Serialize(&buf)
	}
	return buf.Bytes()
}

// TestReadBlockFileAddError: an error of add ends the reading and is
// returned as it is.
func TestReadBlockFileAddError(t *testing.T) {
	file := writeBlockFile(t, 0, linkedTestChain(7, 3))
	stop := errors.New("stop")
	calls := 0
	_, err := ReadBlockFile(bytes.NewReader(file), func(int32, *wire.MsgBlock) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("error %v after %d calls, want stop after 1", err, calls)
	}
}

// FuzzReadBlockFile: any input is read without a panic; what reads
// without an error is written again as the same blocks.
func FuzzReadBlockFile(f *testing.F) {
	blocks := linkedTestChain(8, 3)
	good := writeBlockFile(f, 3, blocks)
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Add(good[:blockFileHeaderLen+4])
	f.Add(writeBlockFileUnchecked(0, blocks[1], blocks[0]))
	f.Add([]byte(blockFileMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, file []byte) {
		var read []*wire.MsgBlock
		info, err := ReadBlockFile(bytes.NewReader(file), func(_ int32, b *wire.MsgBlock) error {
			read = append(read, b)
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrBadBlockFile) {
				t.Fatalf("error %v does not wrap ErrBadBlockFile", err)
			}
			return
		}
		if info.Blocks != len(read) || info.Blocks == 0 {
			t.Fatalf("info %+v after %d blocks", info, len(read))
		}
		var again []*wire.MsgBlock
		again2, err := ReadBlockFile(bytes.NewReader(writeBlockFile(t, info.First, read)), func(_ int32, b *wire.MsgBlock) error {
			again = append(again, b)
			return nil
		})
		if err != nil || again2.First != info.First || len(again) != len(read) {
			t.Fatalf("written again: %+v, %v", again2, err)
		}
		for i := range read {
			if again[i].BlockHash() != read[i].BlockHash() {
				t.Fatalf("block %d: %v written again reads as %v", i, read[i].BlockHash(), again[i].BlockHash())
			}
		}
	})
}
