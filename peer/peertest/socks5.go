package peertest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// SOCKS5 reply codes (RFC 1928) a SOCKSProxy may answer with.
const (
	SOCKSGeneralFailure    = 0x01
	SOCKSNotAllowed        = 0x02
	SOCKSHostUnreachable   = 0x04
	SOCKSConnectionRefused = 0x05
)

// SOCKSConfig says how a SOCKSProxy behaves.
type SOCKSConfig struct {
	// Names maps the host:port a client asks for to the loopback
	// address connected instead; nothing is resolved by DNS, and a name
	// not here is answered with SOCKSHostUnreachable. Loopback IP
	// addresses are connected as they are.
	Names map[string]string
	// Refuse, if not zero, is the reply code to every CONNECT.
	Refuse byte
	// User and Password, if User is set, are required (RFC 1929).
	User, Password string
	// AnyUser accepts every user name and password a client gives, or
	// none, as Tor does (it isolates circuits by them): Users records
	// them.
	AnyUser bool
}

// SOCKSProxy is a minimal SOCKS5 proxy on 127.0.0.1 for tests: CONNECT
// only, with or without a user name and password. It records what each
// client asked to connect to, exactly as sent.
type SOCKSProxy struct {
	Addr string
	cfg  SOCKSConfig
	srv  server

	mu       sync.Mutex
	requests []string
	users    []string // the user name of each CONNECT, "" without one
}

// NewSOCKSProxy starts a proxy; it stops when the test ends.
func NewSOCKSProxy(t testing.TB, cfg SOCKSConfig) *SOCKSProxy {
	t.Helper()
	s := &SOCKSProxy{cfg: cfg}
	s.Addr = s.srv.start(t, func(c net.Conn) {
		defer c.Close()
		s.handle(c)
	})
	return s
}

// Requests returns the host:port of every CONNECT so far, as the clients
// sent them (names unresolved).
func (s *SOCKSProxy) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Users returns the user name each CONNECT so far authenticated with,
// "" for none, in the order of Requests.
func (s *SOCKSProxy) Users() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.users...)
}

// handle serves one client: greeting, authentication, CONNECT, relay.
func (s *SOCKSProxy) handle(c net.Conn) {
	user, err := s.authenticate(c)
	if err != nil {
		return
	}
	target, err := readConnect(c)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, target)
	s.users = append(s.users, user)
	s.mu.Unlock()
	if s.cfg.Refuse != 0 {
		reply(c, s.cfg.Refuse)
		return
	}
	dst, ok := s.cfg.Names[target]
	if !ok {
		host, _, _ := net.SplitHostPort(target)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			reply(c, SOCKSHostUnreachable)
			return
		}
		dst = target
	}
	node, err := net.Dial("tcp", dst)
	if err != nil || !s.srv.track(node) {
		reply(c, SOCKSConnectionRefused)
		return
	}
	defer node.Close()
	if reply(c, 0) != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(node, c)
		node.Close()
		close(done)
	}()
	io.Copy(c, node)
	c.Close()
	<-done
}

// authenticate reads the client's methods and, when a user is required
// or offered to an AnyUser proxy, checks its user name and password; it
// returns the user name.
func (s *SOCKSProxy) authenticate(c net.Conn) (string, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != 5 {
		return "", errors.New("not SOCKS5")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", err
	}
	want := byte(0x00)
	if s.cfg.User != "" || s.cfg.AnyUser && slices.Contains(methods, 0x02) {
		want = 0x02
	}
	if !slices.Contains(methods, want) {
		c.Write([]byte{5, 0xff})
		return "", errors.New("no acceptable method")
	}
	if _, err := c.Write([]byte{5, want}); err != nil || want == 0 {
		return "", err
	}
	user, pass, err := readUserPass(c)
	if err != nil {
		return "", err
	}
	if !s.cfg.AnyUser && (user != s.cfg.User || pass != s.cfg.Password) {
		c.Write([]byte{1, 1})
		return "", errors.New("bad credentials")
	}
	_, err = c.Write([]byte{1, 0})
	return user, err
}

// readUserPass reads an RFC 1929 request.
func readUserPass(r io.Reader) (user, pass string, err error) {
	var ver [1]byte
	if _, err := io.ReadFull(r, ver[:]); err != nil || ver[0] != 1 {
		return "", "", errors.New("bad authentication version")
	}
	if user, err = readShortString(r); err != nil {
		return "", "", err
	}
	pass, err = readShortString(r)
	return user, pass, err
}

// readShortString reads a string of at most 255 bytes after its length.
func readShortString(r io.Reader) (string, error) {
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", err
	}
	b := make([]byte, n[0])
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// readConnect reads a CONNECT request and returns its host:port.
func readConnect(r io.Reader) (string, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[0] != 5 || hdr[1] != 1 {
		return "", errors.New("not a CONNECT")
	}
	var host string
	switch hdr[3] {
	case 1, 4: // IPv4, IPv6
		ip := make([]byte, 4)
		if hdr[3] == 4 {
			ip = make([]byte, 16)
		}
		if _, err := io.ReadFull(r, ip); err != nil {
			return "", err
		}
		host = net.IP(ip).String()
	case 3: // a name
		name, err := readShortString(r)
		if err != nil {
			return "", err
		}
		host = name
	default:
		return "", errors.New("unknown address type")
	}
	var port [2]byte
	if _, err := io.ReadFull(r, port[:]); err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))), nil
}

// reply answers a CONNECT with code and an empty bound address.
func reply(w io.Writer, code byte) error {
	_, err := w.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}
