package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/banlist"
	"github.com/spvfilter/spvfilter/peer/pool"
	"github.com/spvfilter/spvfilter/peer/store"
)

// Peers returns the state of every peer: those of Config.Peers first, in
// their order, then those found.
func (c *Client) Peers() []PeerStatus { return c.peerStatus(c.views.wasCompared) }

// peerStatus returns the state of every peer, compared saying which the
// result's verification compared.
func (c *Client) peerStatus(compared func(*pool.Member) bool) []PeerStatus {
	ms := c.pool.Members()
	out := make([]PeerStatus, 0, len(ms))
	for _, m := range ms {
		st := c.pool.Status(m)
		out = append(out, PeerStatus{Address: st.Addr, UserAgent: st.UserAgent, Services: st.Services, Banned: st.Banned, Reason: st.Reason, Err: st.Err,
			Compared: compared(m), Tip: c.views.tip(m), Branch: c.views.branch(m), BytesReceived: st.BytesReceived, BytesSent: st.BytesSent})
	}
	return out
}

// AddPeer connects to the node at addr (host:port) now and keeps it:
// permanent, for as long as the client runs, redialled when it goes, as
// Config.Peers; otherwise as a peer found, replaced when it goes. A node
// banned with a proof is refused, and so is an onion address without
// Config.Proxy or Config.Dialer. It returns the dial's error (the peer
// is kept and redialled either way). What the node holds is learnt at
// the next header sync (at once with the service, Start).
func (c *Client) AddPeer(ctx context.Context, addr string, permanent bool) error {
	if c.cfg.Proxy == "" && c.cfg.Dialer == nil {
		if err := onionWithoutProxy(addr); err != nil {
			return err
		}
	}
	if err := c.pool.Add(ctx, addr, permanent); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// onionWithoutProxy refuses an onion address for a client that dials
// without a proxy or a dialer: it would be looked up in the DNS.
func onionWithoutProxy(addr string) error {
	if addrbook.IsOnion(addr) {
		return fmt.Errorf("client: peer %s: an onion address needs a proxy (Config.Proxy, such as Tor's socks5://127.0.0.1:9050) or Config.Dialer", addr)
	}
	return nil
}

// RemovePeer disconnects the peer at addr and forgets it: it is not used
// or dialled again (unless added again). Its bytes still count in
// BytesReceived.
func (c *Client) RemovePeer(addr string) error {
	if err := c.pool.Remove(addr); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	c.views.keep(c.pool.Members())
	return nil
}

// DisconnectPeer ends the connection to the peer at addr; it stays a
// peer, redialled after its backoff (see Start) as any peer whose
// connection ended.
func (c *Client) DisconnectPeer(addr string) error {
	if err := c.pool.Disconnect(addr); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// BytesReceived adds up the bytes read from every peer so far.
func (c *Client) BytesReceived() uint64 { return c.pool.BytesReceived() }

// Serves reports whether some live peer advertises every service in
// flags.
func (c *Client) Serves(flags wire.ServiceFlag) bool { return len(c.pool.Serving(flags)) > 0 }

// BanPeer bans the peer at addr (host:port) for banlist.DefaultDuration,
// kept in the data directory if there is one: a connected peer is
// disconnected, and no ban is dialled (but a peer of Config.Peers, which
// a ban resting on no proof, as this one, does not keep out of a later
// client). Peers the client catches lying or flooding are banned the same
// way, with the proof.
func (c *Client) BanPeer(addr, reason string) error {
	if err := c.pool.BanAddr(addr, reason); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// IsBanned reports whether the peer at addr is banned, and why.
func (c *Client) IsBanned(addr string) (reason string, banned bool) {
	b, ok := c.pool.IsBanned(addr)
	return b.Reason, ok
}

// Unban lifts the ban of the peer at addr; a peer of the client is used
// again (the service redials it).
func (c *Client) Unban(addr string) error {
	if err := c.pool.Unban(addr); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// Bans lists the bans in force (kept in the data directory, if there is
// one).
func (c *Client) Bans() []banlist.Ban { return c.pool.Bans() }

// KnownAddresses lists the address book (nil with ConnectOnly). On the
// public networks it is the book as last saved (at open, every ten
// minutes, at Close).
func (c *Client) KnownAddresses() ([]addrbook.Known, error) {
	ks, err := c.pool.Known()
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return ks, nil
}

// StoredPeers is what a data directory keeps about peers: its address
// book and the bans in force.
type StoredPeers struct {
	Known []addrbook.Known
	Bans  []banlist.Ban
	// Notes say what was wrong with the files, and what became of them.
	Notes []string
}

// ReadStoredPeers reads the address book and the bans kept in the data
// directory dataDir for params' network, without connecting to any peer,
// after lifting the bans of unban (host:port addresses), if any. Without
// unban it writes and creates nothing: damaged files are named in the
// notes and left as they are, and a client using the directory at the
// same time makes it fail (store.ErrLocked), as does a store of another
// network there (store.ErrWrongNetwork). With unban the store is opened,
// as a client opens it. A directory that does not hold the network yet
// is reported as holding nothing, and is not created.
func ReadStoredPeers(dataDir string, params *chaincfg.Params, unban ...string) (*StoredPeers, error) {
	dir := filepath.Join(dataDir, params.Name)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		out := &StoredPeers{Notes: []string{fmt.Sprintf("%s holds no state of %s yet", dataDir, params.Name)}}
		if len(unban) > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("no ban to lift for %v", unban))
		}
		return out, nil
	}
	if len(unban) > 0 {
		return unbanStored(dataDir, params, unban)
	}
	unlock, err := store.ReadLock(dataDir, params)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer unlock()
	out := &StoredPeers{}
	out.Bans, out.Notes = banlist.Read(dir)
	if err := out.readBook(params, dir); err != nil {
		return nil, err
	}
	return out, nil
}

// readBook reads the address book kept in dir, the network's directory.
func (sp *StoredPeers) readBook(params *chaincfg.Params, dir string) error {
	known, notes, err := addrbook.Read(params, dir)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	sp.Known, sp.Notes = known, append(sp.Notes, notes...)
	return nil
}

// unbanStored lifts the bans of unban kept in dataDir, opening its store
// as a client does, and reads what ReadStoredPeers reads.
func unbanStored(dataDir string, params *chaincfg.Params, unban []string) (*StoredPeers, error) {
	st, err := store.Open(dataDir, params)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer st.Close()
	bans, notes := banlist.Open(st.Dir())
	defer bans.Close()
	for _, addr := range unban {
		if err := bans.Unban(addr); err != nil {
			return nil, fmt.Errorf("client: unban %s: %w", addr, err)
		}
	}
	out := &StoredPeers{Bans: bans.Bans(), Notes: append(st.Recovered(), notes...)}
	if err := out.readBook(params, st.Dir()); err != nil {
		return nil, err
	}
	return out, nil
}
