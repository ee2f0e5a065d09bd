package lab

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
)

// ErrBadVectors reports a file that is not in the format of BIP 158's
// test vectors, or a row that contradicts itself.
var ErrBadVectors = errors.New("lab: bad BIP 158 vectors")

// MaxVectorsBytes bounds what ReadVectors reads.
const MaxVectorsBytes = 64 << 20

// vectorColumns is the number of columns of a row of BIP 158's vectors:
// height, block hash, block, previous output scripts, previous header,
// filter, header, notes.
const vectorColumns = 8

// ReadVectors reads the blocks of a file in the format of BIP 158's test
// vectors (bip-0158/testnet-19.json: a first row naming the columns,
// then one row per block). Before a row is used, its block must hash to
// the row's hash and its transactions to the header's merkle root, the
// previous output scripts must be one per input, and the set built from
// them must give the row's basic filter byte for byte; a row that fails
// any of these is an error wrapping ErrBadVectors.
func ReadVectors(r io.Reader) ([]Block, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxVectorsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxVectorsBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadVectors, MaxVectorsBytes)
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadVectors, err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%w: %s, want the column names and at least one block", ErrBadVectors, plural(len(rows), "row"))
	}
	var names []string
	if err := json.Unmarshal(rows[0], &names); err != nil || len(names) != 1 {
		return nil, fmt.Errorf("%w: the first row is not the one string naming the columns", ErrBadVectors)
	}
	blocks := make([]Block, 0, len(rows)-1)
	for i, row := range rows[1:] {
		b, err := parseVectorRow(row)
		if err != nil {
			return nil, fmt.Errorf("%w: row %d: %w", ErrBadVectors, i+2, err)
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// parseVectorRow reads one row and checks it against itself.
func parseVectorRow(row json.RawMessage) (Block, error) {
	var cols []json.RawMessage
	if err := json.Unmarshal(row, &cols); err != nil {
		return Block{}, err
	}
	if len(cols) != vectorColumns {
		return Block{}, fmt.Errorf("%s, want %d", plural(len(cols), "column"), vectorColumns)
	}
	var height int32
	var hashHex, blockHex, filterHex string
	var prevHex []string
	for _, c := range []struct {
		col  int
		name string
		dst  any
	}{{0, "height", &height}, {1, "block hash", &hashHex}, {2, "block", &blockHex}, {3, "previous output scripts", &prevHex}, {5, "basic filter", &filterHex}} {
		if err := json.Unmarshal(cols[c.col], c.dst); err != nil {
			return Block{}, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if height < 0 {
		return Block{}, fmt.Errorf("height %d", height)
	}
	hash, err := chainhash.NewHashFromStr(hashHex)
	if err != nil || len(hashHex) != 2*chainhash.HashSize {
		return Block{}, fmt.Errorf("block hash %q: want 64 hex digits", hashHex)
	}
	rawBlock, err := hex.DecodeString(blockHex)
	if err != nil {
		return Block{}, fmt.Errorf("block: %w", err)
	}
	var block wire.MsgBlock
	rd := bytes.NewReader(rawBlock)
	if err := block.Deserialize(rd); err != nil {
		return Block{}, fmt.Errorf("block: %w", err)
	}
	if rd.Len() != 0 {
		return Block{}, fmt.Errorf("block: %s after the block", plural(rd.Len(), "byte"))
	}
	if got := block.BlockHash(); got != *hash {
		return Block{}, fmt.Errorf("the block hashes to %v, the row says %v", got, hash)
	}
	if err := checkMerkleRoot(&block); err != nil {
		return Block{}, err
	}
	inputs := 0
	for _, tx := range block.Transactions[1:] {
		inputs += len(tx.TxIn)
	}
	if len(prevHex) != inputs {
		return Block{}, fmt.Errorf("%s for %s", plural(len(prevHex), "previous output script"), plural(inputs, "input"))
	}
	prev := make([][]byte, len(prevHex))
	for i, s := range prevHex {
		if prev[i], err = hex.DecodeString(s); err != nil {
			return Block{}, fmt.Errorf("previous output script %d: %w", i, err)
		}
	}
	want, err := hex.DecodeString(filterHex)
	if err != nil {
		return Block{}, fmt.Errorf("basic filter: %w", err)
	}
	b := NewBlock(height, &block, prev)
	f, err := gcs.Build(b.Key(), gcs.BasicP, gcs.BasicM, b.Elements)
	if err != nil {
		return Block{}, err
	}
	if got := f.NBytes(); !bytes.Equal(got, want) {
		return Block{}, fmt.Errorf("the block's scripts give the basic filter %x, the row says %x", got, want)
	}
	return b, nil
}

// checkMerkleRoot checks that block has transactions and that they give
// the merkle root its header states.
func checkMerkleRoot(block *wire.MsgBlock) error {
	if len(block.Transactions) == 0 {
		return errors.New("a block without transactions")
	}
	txs := make([]*btcutil.Tx, len(block.Transactions))
	for i, tx := range block.Transactions {
		txs[i] = btcutil.NewTx(tx)
	}
	if got := blockchain.CalcMerkleRoot(txs, false); got != block.Header.MerkleRoot {
		return fmt.Errorf("the transactions give merkle root %v, the header says %v", got, block.Header.MerkleRoot)
	}
	return nil
}
