package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// blockFileMagic starts a block file (see the package doc, Block files).
const blockFileMagic = "spvfilter blocks 1\n"

// blockFileHeaderLen is the length of a block file's header.
const blockFileHeaderLen = len(blockFileMagic) + 8

// ErrBadBlockFile reports a block file that is not in the format, is
// cut short, or holds blocks that do not chain.
var ErrBadBlockFile = errors.New("lab: bad block file")

// BlockFileInfo describes a block file.
type BlockFileInfo struct {
	Net    wire.BitcoinNet // the chain's network
	First  int32           // the height of the first block
	Blocks int             // the number of blocks
}

// Last returns the height of the last block (First - 1 without blocks).
func (i BlockFileInfo) Last() int32 { return i.First + int32(i.Blocks) - 1 }

// BlockFileWriter writes a block file. Its Add has the signature of
// Chain.Add, so that one download can feed both.
type BlockFileWriter struct {
	w    io.Writer
	info BlockFileInfo
	prev chainhash.Hash
}

// NewBlockFileWriter returns a writer of a block file of network net to
// w. The file's header is written with the first block.
func NewBlockFileWriter(w io.Writer, net wire.BitcoinNet) *BlockFileWriter {
	return &BlockFileWriter{w: w, info: BlockFileInfo{Net: net}}
}

// Add writes the block at height, which must follow the block added last.
func (w *BlockFileWriter) Add(height int32, block *wire.MsgBlock) error {
	if w.info.Blocks == 0 {
		if height < 0 {
			return fmt.Errorf("lab: block file: height %d", height)
		}
		w.info.First = height
		hdr := make([]byte, 0, blockFileHeaderLen)
		hdr = append(hdr, blockFileMagic...)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(w.info.Net))
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(height))
		if _, err := w.w.Write(hdr); err != nil {
			return err
		}
	} else {
		if height != w.info.Last()+1 {
			return fmt.Errorf("lab: block file: block at height %d after height %d", height, w.info.Last())
		}
		if block.Header.PrevBlock != w.prev {
			return fmt.Errorf("lab: block file: block %v at height %d does not follow block %v", block.BlockHash(), height, w.prev)
		}
	}
	size := block.SerializeSize()
	if size > wire.MaxBlockPayload {
		return fmt.Errorf("lab: block file: block %v: %s, more than %d", block.BlockHash(), plural(size, "byte"), wire.MaxBlockPayload)
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(size))
	if _, err := w.w.Write(n[:]); err != nil {
		return err
	}
	if err := block.Serialize(w.w); err != nil {
		return err
	}
	w.info.Blocks++
	w.prev = block.BlockHash()
	return nil
}

// Info returns what the writer has written so far.
func (w *BlockFileWriter) Info() BlockFileInfo { return w.info }

// ReadBlockFile reads a block file from r and passes each block to add
// (Chain.Add, for one) with its height, in order. A file not in the
// format, cut short, with a block that does not decode to exactly its
// length, whose transactions do not give its header's merkle root or
// that does not follow the block before is an error wrapping
// ErrBadBlockFile that names the block and its offset in the file; an
// error of add is returned as it is. Each block is read within its
// length, at most wire.MaxBlockPayload bytes.
func ReadBlockFile(r io.Reader, add func(height int32, block *wire.MsgBlock) error) (BlockFileInfo, error) {
	var info BlockFileInfo
	hdr := make([]byte, blockFileHeaderLen)
	n, err := io.ReadFull(r, hdr)
	if m := min(n, len(blockFileMagic)); n == 0 || string(hdr[:m]) != blockFileMagic[:m] {
		return info, fmt.Errorf("%w: does not start with %q", ErrBadBlockFile, blockFileMagic)
	}
	if err != nil {
		return info, fmt.Errorf("%w: header: %w", ErrBadBlockFile, noEOF(err))
	}
	info.Net = wire.BitcoinNet(binary.LittleEndian.Uint32(hdr[len(blockFileMagic):]))
	info.First = int32(binary.LittleEndian.Uint32(hdr[len(blockFileMagic)+4:]))
	if info.First < 0 {
		return info, fmt.Errorf("%w: first height %d", ErrBadBlockFile, info.First)
	}
	br := blockFileReader{r: r, offset: int64(blockFileHeaderLen)}
	var prev chainhash.Hash
	for {
		block, err := br.next()
		if err == io.EOF {
			break
		}
		if int64(info.First)+int64(info.Blocks) > math.MaxInt32 {
			return info, fmt.Errorf("%w: block %d: height beyond %d", ErrBadBlockFile, info.Blocks+1, math.MaxInt32)
		}
		height := info.First + int32(info.Blocks)
		if err != nil {
			return info, fmt.Errorf("%w: block %d (height %d) at byte %d: %w", ErrBadBlockFile, info.Blocks+1, height, br.start, err)
		}
		if info.Blocks > 0 && block.Header.PrevBlock != prev {
			return info, fmt.Errorf("%w: block %d (height %d) at byte %d: %v names %v before it, not %v",
				ErrBadBlockFile, info.Blocks+1, height, br.start, block.BlockHash(), block.Header.PrevBlock, prev)
		}
		if err := add(height, block); err != nil {
			return info, err
		}
		info.Blocks++
		prev = block.BlockHash()
	}
	if info.Blocks == 0 {
		return info, fmt.Errorf("%w: no blocks", ErrBadBlockFile)
	}
	return info, nil
}

// blockFileReader reads a block file's blocks, keeping the offset.
type blockFileReader struct {
	r      io.Reader
	offset int64 // bytes read
	start  int64 // offset of the block read last
}

// next reads the next block; io.EOF at the clean end of the file.
func (br *blockFileReader) next() (*wire.MsgBlock, error) {
	br.start = br.offset
	var n [4]byte
	got, err := io.ReadFull(br.r, n[:])
	br.offset += int64(got)
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("length: %w", noEOF(err))
	}
	size := int64(binary.LittleEndian.Uint32(n[:]))
	if size > wire.MaxBlockPayload {
		return nil, fmt.Errorf("length %d, more than %d", size, wire.MaxBlockPayload)
	}
	lr := &io.LimitedReader{R: br.r, N: size}
	var block wire.MsgBlock
	err = block.Deserialize(lr)
	br.offset += size - lr.N
	if err != nil {
		return nil, fmt.Errorf("block of %s: %w", plural(size, "byte"), noEOF(err))
	}
	if lr.N != 0 {
		return nil, fmt.Errorf("the block ends %s before its length %d", plural(lr.N, "byte"), size)
	}
	if err := checkMerkleRoot(&block); err != nil {
		return nil, fmt.Errorf("block %v: %w", block.BlockHash(), err)
	}
	return &block, nil
}

// noEOF turns the end of the file inside a record into
// io.ErrUnexpectedEOF: the file is cut short.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
