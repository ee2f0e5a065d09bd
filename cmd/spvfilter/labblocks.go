package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs/lab"
)

// readLabBlocks reads the blocks of a block file (--blocks) and returns
// them, the source's name and the warnings their sets leave.
func readLabBlocks(path string) ([]lab.Block, string, []string, error) {
	file, err := openInputFile("--blocks", path)
	if errors.Is(err, fs.ErrNotExist) {
		// privacy simulate's --blocks is a count: say which this is.
		msg := err.Error()
		if strings.Trim(path, "0123456789") == "" {
			msg += ", not a count (with nodes, --from and --to choose the blocks)"
		}
		return nil, "", nil, usageError{&restated{msg, err}}
	}
	if err != nil {
		return nil, "", nil, err
	}
	defer file.Close()
	name := strings.TrimPrefix(path, "@")
	chain := lab.NewChain(0)
	head := newHeadReader(file)
	info, err := lab.ReadBlockFile(bufio.NewReader(head), chain.Add)
	if err != nil {
		return nil, "", nil, blockFileError(name, head, err)
	}
	source := fmt.Sprintf("%s blocks %d..%d from %s", networkOf(info.Net), info.First, info.Last(), name)
	return chain.Blocks(), source, chainWarnings(chain, "the file's first block"), nil
}

// blockFileError is the error of the --blocks file name, read through
// head, that lab.ReadBlockFile refused: BIP 158's test vectors are named
// as such, with the flag that takes them; any other file that is no
// block file says which file is wanted. The file is not opened again (a
// named pipe would wait for a writer): what was read tells.
func blockFileError(name string, head *headReader, err error) error {
	if !errors.Is(err, lab.ErrBadBlockFile) {
		return badInputWords("--blocks "+name, err)
	}
	k := head.kind()
	if _, verr := lab.ReadVectors(bytes.NewReader(head.head)); verr == nil {
		return usageError{&restated{fmt.Sprintf("--blocks %s: BIP 158's test vectors, not a block file: give it to --vectors", name), err}}
	}
	if k != kindUnknown && k != kindBlocks {
		return otherKind("--blocks", name, k, err)
	}
	if len(head.head) == 0 {
		return usageError{&restated{fmt.Sprintf("--blocks %s: empty (want a block file that lab --save-blocks writes)", name), err}}
	}
	return usageError{&restated{fmt.Sprintf("--blocks %s: %s (want a block file that lab --save-blocks writes)", name, words(err)), err}}
}

// vectorsError is the error of the --vectors file name, read through
// head, that lab.ReadVectors refused: a block file of lab --save-blocks,
// a file of the privacy commands or an empty one is named as such, told
// from what was read (the file is not opened again).
func vectorsError(name string, head *headReader, err error) error {
	const want = "want the JSON file of BIP 158's test vectors, testnet-19.json in the BIP's folder"
	k := head.kind()
	if bytes.HasPrefix(head.head, []byte(blockFileOpening)) {
		return usageError{&restated{fmt.Sprintf("--vectors %s: a block file of lab --save-blocks, not BIP 158's test vectors: give it to --blocks", name), err}}
	}
	if k != kindUnknown {
		return otherKind("--vectors", name, k, err)
	}
	if len(head.head) == 0 {
		return usageError{&restated{fmt.Sprintf("--vectors %s: empty (%s)", name, want), err}}
	}
	if binaryHead(head.head[:min(len(head.head), 4096)]) {
		return usageError{&restated{fmt.Sprintf("--vectors %s: binary data, not JSON (%s)", name, want), err}}
	}
	return usageError{&restated{fmt.Sprintf("--vectors %s: %s (%s)", name, words(err), want), err}}
}

// blockFileOpening opens a block file of lab --save-blocks, of any
// version (see gcs/lab's package documentation).
const blockFileOpening = "spvfilter blocks "

// networkOf names a network by its wire magic.
func networkOf(net wire.BitcoinNet) string {
	for _, n := range knownNetworks {
		if n.params.Net == net {
			return n.params.Name
		}
	}
	return fmt.Sprintf("network %#08x", uint32(net))
}

// chainWarnings are the warnings a chain's sets leave: inputs spending
// outputs created before its first block (before), outputs not tracked.
func chainWarnings(chain *lab.Chain, before string) []string {
	var warnings []string
	unknown, untracked := chain.Unknown()
	if unknown > 0 {
		warnings = append(warnings, fmt.Sprintf("%s outputs created before %s (or not tracked): their scripts are missing from the sets", countVerb(unknown, "input", "spends", "spend"), before))
	}
	if untracked > 0 {
		warnings = append(warnings, fmt.Sprintf("%s not tracked beyond %d unspent ones: their later spends count as unknown", countVerb(untracked, "output", "was", "were"), lab.DefaultMaxTracked))
	}
	return warnings
}

// blockSaver writes the downloaded blocks to --save-blocks, a
// pendingFile: a download that fails leaves no file cut short.
type blockSaver struct {
	out  *outputs
	file *pendingFile
	buf  *bufio.Writer
	w    *lab.BlockFileWriter
}

// newBlockSaver starts a block file of network net at path.
func newBlockSaver(out *outputs, path string, net wire.BitcoinNet) (*blockSaver, error) {
	file, err := out.createStream("--save-blocks", path)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(file, 1<<20)
	return &blockSaver{out: out, file: file, buf: buf, w: lab.NewBlockFileWriter(buf, net)}, nil
}

// add writes the block at height.
func (s *blockSaver) add(height int32, block *wire.MsgBlock) error {
	if err := s.w.Add(height, block); err != nil {
		return failureWords("--save-blocks "+s.file.path, err)
	}
	return nil
}

// commit finishes the file and puts it at its path.
func (s *blockSaver) commit() error {
	if err := s.buf.Flush(); err != nil {
		s.abort()
		return failureWords("--save-blocks "+s.file.path, err)
	}
	return s.out.commit(s.file)
}

// abort removes the unfinished file.
func (s *blockSaver) abort() { s.out.abort(s.file) }
