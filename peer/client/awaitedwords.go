package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// notUsedWhy says why a peer not banned is not used, as a rescan's
// waiting warning and *WaitError name it (see awaited): a connection that
// could not be made in words (refused, timed out, host not found, the
// SOCKS5 proxy unreachable or failing to connect), not the dial's error
// text; any other reason as the pool gives it.
func notUsedWhy(st pool.Status) string {
	var pe *peer.PeerError
	if st.Err == nil || !errors.As(st.Err, &pe) || pe.Op != peer.OpConnect {
		return st.Reason
	}
	var px *peer.ProxyError
	switch {
	case errors.As(st.Err, &px) && px.Target != "":
		return fmt.Sprintf("not connected: the SOCKS5 proxy %s did not connect to it: %s", px.Proxy, proxyWhy(px.Err))
	case px != nil:
		return fmt.Sprintf("not connected: the SOCKS5 proxy %s could not be reached: %s", px.Proxy, dialWhy(px.Err))
	}
	return "not connected: " + dialWhy(st.Err)
}

// dialWhy says why a connection could not be opened.
func dialWhy(err error) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("host %s not found", dns.Name)
	case errors.As(err, &dns):
		return fmt.Sprintf("host %s could not be looked up", dns.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (nothing listens there)"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to the host"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the host"
	case timedOut(err):
		return "timed out (no answer)"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

// proxyWhy says why a SOCKS5 proxy that was reached did not connect: no
// answer in time, or its reply.
func proxyWhy(err error) string {
	if timedOut(err) {
		return "timed out (no answer)"
	}
	return err.Error()
}

// timedOut reports whether err is a deadline passed.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
