package privacybeam

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	// Local files; a binary adds the filesystems of its runner (beamx adds gs://).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
)

// listFiles expands the universe glob, in name order.
func listFiles(ctx context.Context, glob string) ([]string, error) {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("%w: universe %s: %w", ErrBadConfig, glob, err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("%w: universe %s: %w", ErrBadConfig, glob, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: universe %s: no file matches", ErrBadConfig, glob)
	}
	slices.Sort(files)
	return files, nil
}

// readFile reads a whole file of any registered filesystem.
func readFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return filesystem.Read(ctx, fs, path)
}

// openRead opens a universe file of any registered filesystem.
func openRead(ctx context.Context, path string) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("universe %s: %w", path, err)
	}
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		fs.Close()
		return nil, fmt.Errorf("universe %s: %w", path, err)
	}
	return fileReader{r, fs}, nil
}

// fileReader closes its filesystem with the file.
type fileReader struct {
	io.ReadCloser
	fs io.Closer
}

func (f fileReader) Close() error {
	err := f.ReadCloser.Close()
	f.fs.Close()
	return err
}
