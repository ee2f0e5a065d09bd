//go:build !linux

package store

import "errors"

func dropCache(string) error { return errors.New("not supported") }
