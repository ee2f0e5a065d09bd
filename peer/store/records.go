package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// sumSize is the size of one record's checksum in a .sum file.
const sumSize = 4

// castagnoli is the CRC-32C table: hardware-accelerated on amd64 and
// arm64, and better at catching burst errors than the IEEE polynomial.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordSum returns the checksum of the record at index i: CRC-32C of the
// index (4 bytes, little endian) followed by the record, so that a record
// written at the wrong offset fails too.
func recordSum(i int64, rec []byte) uint32 {
	var idx [4]byte
	binary.LittleEndian.PutUint32(idx[:], uint32(i))
	return crc32.Update(crc32.Checksum(idx[:], castagnoli), castagnoli, rec)
}

// errBadRecord is what scanRecords reports for the first record that fails
// its checksum or the caller's check.
var errBadRecord = errors.New("bad record")

// scanRecords reads fixed-size records from data and their checksums from
// sums, in step, and calls check (which may be nil) for each record whose
// checksum matches. It returns the number of leading records that are
// whole, match their checksum and pass check, and why the next one, if
// any, did not: nil only when both inputs end together, after a whole
// record and its checksum. check must not keep rec.
func scanRecords(data, sums io.Reader, size int, check func(i int64, rec []byte) error) (int64, error) {
	dr := bufio.NewReaderSize(data, 1<<16)
	sr := bufio.NewReaderSize(sums, 1<<12)
	rec := make([]byte, size)
	var sum [sumSize]byte
	for i := int64(0); ; i++ {
		if _, err := io.ReadFull(dr, rec); err != nil {
			if !errors.Is(err, io.EOF) {
				return i, partial(err, "record", i)
			}
			// The records end: so must their checksums.
			if n, _ := sr.Discard(1); n > 0 {
				return i, fmt.Errorf("%w %d: checksums beyond the last record", errBadRecord, i)
			}
			return i, nil
		}
		if _, err := io.ReadFull(sr, sum[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return i, fmt.Errorf("%w %d: no checksum", errBadRecord, i)
			}
			return i, partial(err, "checksum", i)
		}
		if got, want := recordSum(i, rec), binary.LittleEndian.Uint32(sum[:]); got != want {
			return i, fmt.Errorf("%w %d: checksum %08x, recorded %08x", errBadRecord, i, got, want)
		}
		if check != nil {
			if err := check(i, rec); err != nil {
				return i, fmt.Errorf("%w %d: %w", errBadRecord, i, err)
			}
		}
	}
}

// partial turns a failed read of scanRecords into its result: a torn
// record or checksum is errBadRecord, anything else a read error.
func partial(err error, what string, i int64) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w %d: %s torn", errBadRecord, i, what)
	}
	return fmt.Errorf("reading %s %d: %w", what, i, err)
}

// recordLog is an append-only file of fixed-size records by index, with a
// parallel file of one CRC-32C per record. Record i is at offset i*size of
// the data file, its checksum at i*4 of the sum file. Only the records
// both files hold whole, with matching checksums, count: whatever follows
// the first record that fails is cut when the log is opened.
//
// A recordLog is not safe for concurrent writes; reads (readAt) may run
// concurrently with each other.
type recordLog struct {
	data, sums *os.File
	size       int
	n          int64 // records held
	sync       bool  // fsync after every append and truncate
}

// openRecordLog opens (creating if need be) the record log at path and
// path+".sum", checks every record with check as scanRecords does, and
// cuts both files after the last good record. It returns the log and, if
// records were cut, why.
func openRecordLog(path string, size int, sync bool, check func(i int64, rec []byte) error) (*recordLog, error, error) {
	// Only regular files: a pipe would block the reads below.
	for _, p := range []string{path, path + ".sum"} {
		if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("%s: %w but %v", p, diskfile.ErrNotRegular, fi.Mode().Type())
		}
	}
	data, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	sums, err := os.OpenFile(path+".sum", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		data.Close()
		return nil, nil, err
	}
	l := &recordLog{data: data, sums: sums, size: size, sync: sync}
	n, cut := scanRecords(data, sums, size, check)
	if cut != nil && !errors.Is(cut, errBadRecord) {
		l.close()
		return nil, nil, fmt.Errorf("%s: %w", path, cut)
	}
	// Cut whatever lies beyond the good records, whether it failed a
	// check or is the surplus of the longer file.
	l.n = n
	dataInfo, err := data.Stat()
	if err == nil {
		var sumsInfo os.FileInfo
		sumsInfo, err = sums.Stat()
		if err == nil && (dataInfo.Size() != n*int64(size) || sumsInfo.Size() != n*sumSize) {
			err = l.truncate(n)
		}
	}
	if err != nil {
		l.close()
		return nil, nil, err
	}
	return l, cut, nil
}

// len returns the number of records.
func (l *recordLog) len() int64 { return l.n }

// readAt reads the records i..i+len(buf)/size-1 into buf.
func (l *recordLog) readAt(buf []byte, i int64) error {
	count := int64(len(buf) / l.size)
	if i < 0 || i+count > l.n {
		return fmt.Errorf("records %d..%d outside 0..%d", i, i+count-1, l.n-1)
	}
	if _, err := l.data.ReadAt(buf, i*int64(l.size)); err != nil {
		return fmt.Errorf("reading record %d: %w", i, err)
	}
	return nil
}

// append writes recs (a whole number of records) after the last one. On
// failure the log is cut back to what it held before.
func (l *recordLog) append(recs []byte) error {
	count := int64(len(recs) / l.size)
	if count == 0 {
		return nil
	}
	sums := make([]byte, count*sumSize)
	for j := int64(0); j < count; j++ {
		rec := recs[j*int64(l.size) : (j+1)*int64(l.size)]
		binary.LittleEndian.PutUint32(sums[j*sumSize:], recordSum(l.n+j, rec))
	}
	err := writeAt(l.data, recs, l.n*int64(l.size))
	if err == nil {
		err = writeAt(l.sums, sums, l.n*sumSize)
	}
	if err == nil && l.sync {
		err = l.fsync()
	}
	if err != nil {
		// Leave no half-written records behind; if even this fails,
		// the next open cuts them.
		_ = l.truncate(l.n)
		return fmt.Errorf("appending records: %w", err)
	}
	l.n += count
	return nil
}

func writeAt(f *os.File, b []byte, off int64) error {
	_, err := f.WriteAt(b, off)
	return err
}

// truncate keeps the first n records. The sum file is cut first, so that
// a crash in between leaves records without checksums, which the next
// open cuts, rather than checksums for records that are gone.
func (l *recordLog) truncate(n int64) error {
	if n < 0 || n > l.n {
		return fmt.Errorf("truncating to %d records: %d held", n, l.n)
	}
	if err := l.sums.Truncate(n * sumSize); err != nil {
		return fmt.Errorf("truncating %s: %w", l.sums.Name(), err)
	}
	if err := l.data.Truncate(n * int64(l.size)); err != nil {
		return fmt.Errorf("truncating %s: %w", l.data.Name(), err)
	}
	l.n = n
	if l.sync {
		return l.fsync()
	}
	return nil
}

// fsync flushes both files to stable storage.
func (l *recordLog) fsync() error {
	if err := l.data.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", l.data.Name(), err)
	}
	if err := l.sums.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", l.sums.Name(), err)
	}
	return nil
}

func (l *recordLog) close() error {
	return errors.Join(l.data.Close(), l.sums.Close())
}
