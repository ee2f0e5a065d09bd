//go:build !linux

package privacybeam

import (
	"errors"
	"syscall"
)

// errNoNamespaces: only Linux has network namespaces.
var errNoNamespaces = errors.New("network namespaces are Linux's")

func isolation() (*syscall.SysProcAttr, error) { return nil, errNoNamespaces }

func loopbackOnly() error { return errNoNamespaces }
