//go:build !unix

package store

import "errors"

// fileStamp is not available here: the filter cache is checked in depth
// on every open.
func fileStamp(string) (string, error) { return "", errors.New("no file stamps on this system") }
