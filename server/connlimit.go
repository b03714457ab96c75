package server

import (
	"net"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// perAddrListener caps the connections open at once from one client address,
// so that one client (say, a few hundred trickling connections) cannot take
// every file descriptor and goroutine the server has. A connection over the
// cap is closed as soon as it is accepted, before the TLS handshake: there is
// no HTTP yet to answer it with.
type perAddrListener struct {
	net.Listener
	max     int
	refused prometheus.Counter

	mu   sync.Mutex
	open map[string]int
}

func limitPerAddr(ln net.Listener, max int, refused prometheus.Counter) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perAddrListener{Listener: ln, max: max, refused: refused, open: make(map[string]int)}
}

func (l *perAddrListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := addrKey(c.RemoteAddr())
		l.mu.Lock()
		if l.open[addr] >= l.max {
			l.mu.Unlock()
			c.Close()
			if l.refused != nil {
				l.refused.Inc()
			}
			continue
		}
		l.open[addr]++
		l.mu.Unlock()
		return &countedConn{Conn: c, l: l, addr: addr}, nil
	}
}

func (l *perAddrListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
}

// countedConn gives its slot back once, however often it is closed.
type countedConn struct {
	net.Conn
	l    *perAddrListener
	addr string
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}

// addrKey is the client a connection counts against: its IP, or for IPv6 its
// /64 (what one host is usually given), as httpapi.RemoteAddrClient counts
// failed authentications.
func addrKey(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}
