package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/proxy"
)

// DialFunc opens a connection to addr (host:port) on network "tcp", as
// net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// SOCKS5 returns a DialFunc that connects through the SOCKS5 proxy at
// proxyURL, socks5://host:port or socks5://user:password@host:port (Tor
// listens on socks5://127.0.0.1:9050). Host names, .onion addresses
// included, are passed to the proxy to resolve: nothing is looked up
// locally. A connection the proxy cannot make fails; nothing is then
// tried without it. Errors name the proxy (without the password) and
// what it refused: a failure at the proxy, whether it could not be
// reached or did not connect, is a *ProxyError.
func SOCKS5(proxyURL string) (DialFunc, error) {
	u, err := url.Parse(proxyURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL and its password
		}
		return nil, fmt.Errorf("peer: proxy URL: %w", err)
	}
	if u.Scheme != "socks5" && u.Scheme != "socks5h" {
		return nil, fmt.Errorf("peer: proxy URL %s: scheme %q, want socks5", u.Redacted(), u.Scheme)
	}
	if u.Port() == "" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("peer: proxy URL %s: want socks5://[user:password@]host:port", u.Redacted())
	}
	var auth *proxy.Auth
	if u.User != nil {
		pass, _ := u.User.Password()
		auth = &proxy.Auth{User: u.User.Username(), Password: pass}
	}
	dialer := func(auth *proxy.Auth) (proxy.ContextDialer, error) {
		d, err := proxy.SOCKS5("tcp", u.Host, auth, proxyConnector{})
		if err != nil {
			return nil, fmt.Errorf("peer: proxy %s: %w", u.Redacted(), err)
		}
		cd, ok := d.(proxy.ContextDialer)
		if !ok {
			return nil, fmt.Errorf("peer: proxy %s: dialer without context", u.Redacted())
		}
		return cd, nil
	}
	shared, err := dialer(auth)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		cd := shared
		if key, ok := Isolation(ctx); ok {
			// x/net/proxy takes the credentials when the dialer is made:
			// one per isolated dial (cheap: nothing is connected).
			isolated, err := dialer(&proxy.Auth{User: key, Password: key})
			if err != nil {
				return nil, err
			}
			cd = isolated
		}
		conn, err := cd.DialContext(ctx, network, addr)
		if err == nil {
			return conn, nil
		}
		var unreachable *proxyUnreachable
		if errors.As(err, &unreachable) {
			return nil, &ProxyError{Proxy: u.Host, Err: unreachable.err}
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		// x/net/proxy words a refusal "unknown error <reply>".
		if reply, ok := strings.CutPrefix(err.Error(), "unknown error "); ok {
			err = fmt.Errorf("it replied %q", reply)
		}
		return nil, &ProxyError{Proxy: u.Host, Target: addr, Err: err}
	}, nil
}

// isolationKey is the context key of WithIsolation.
type isolationKey struct{}

// WithIsolation returns a context whose connection made through a SOCKS5
// DialFunc (see SOCKS5) gives the proxy key as its user name and
// password, in place of the proxy URL's: Tor, with IsolateSOCKSAuth (its
// default), puts streams of different credentials on different
// circuits, so a connection of a fresh key shares no circuit with any
// other. A caller's own DialFunc reads the key with Isolation. Keys are
// at most 255 bytes (RFC 1929).
func WithIsolation(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, isolationKey{}, key)
}

// Isolation returns the key WithIsolation put in ctx, if any.
func Isolation(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(isolationKey{}).(string)
	return key, ok
}

// proxyConnector connects to the proxy itself, marking its failures.
type proxyConnector struct{}

// proxyUnreachable is a failure to reach the proxy.
type proxyUnreachable struct{ err error }

func (e *proxyUnreachable) Error() string { return e.err.Error() }
func (e *proxyUnreachable) Unwrap() error { return e.err }

func (proxyConnector) Dial(network, addr string) (net.Conn, error) {
	return proxyConnector{}.DialContext(context.Background(), network, addr)
}

func (proxyConnector) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, &proxyUnreachable{err}
	}
	return conn, nil
}

// RemoteAddr returns the address the connection reached, an IP address
// and port as the operating system saw it, or "" when it went through
// Config.Dial (a proxy: the address would be the proxy's).
func (p *Peer) RemoteAddr() string {
	if p.cfg.Dial != nil {
		return ""
	}
	if tcp, ok := p.conn.RemoteAddr().(*net.TCPAddr); ok {
		return tcp.String()
	}
	return ""
}
