//go:build !unix

package main

import "io/fs"

// processUmask is the file mode creation mask: none on systems without
// one.
var processUmask fs.FileMode
