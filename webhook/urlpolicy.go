package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/settleflow/settleflow"
)

// The webhook URL policy. A webhook makes this process send requests to a
// URL somebody else chose, so without a policy an endpoint could aim the
// deliverer at the cloud metadata service, an admin port on loopback or the
// private network (server-side request forgery). The rules:
//
//   - every endpoint: an absolute http or https URL, without credentials
//     (user:password@), whose host is a name or a canonical IP literal — hosts
//     that look numeric but are not (0x7f000001, 0, 017700000001, 127.1) are
//     refused, because some resolvers read them as addresses;
//   - live endpoints (and test endpoints with Config.StrictTestURLs): https,
//     not localhost, and every address the host resolves to public unicast;
//   - test endpoints otherwise: http allowed, loopback and private addresses
//     allowed (a receiver on the developer's machine or LAN), but never
//     link-local (169.254.169.254 is the cloud metadata service), unspecified
//     or multicast.
//
// The rules are checked when an endpoint is registered and again for every
// attempt: the URL before the request, and each address the host resolves to
// when the connection is made (in the dialer, after resolution, so a name
// that resolved to a public address at registration cannot be rebound to a
// private one later).

// addrClass names the kind of a non-public address, as shown in refusals.
func addrClass(a netip.Addr) string {
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsMulticast():
		return "multicast"
	case a.IsLinkLocalUnicast():
		return "link-local"
	}
	if a.Is6() && nat64.Contains(a) {
		// The NAT64 gateway forwards to the IPv4 address in the low bits.
		b := a.As16()
		if c := addrClass(netip.AddrFrom4([4]byte(b[12:]))); c != "" {
			return c
		}
		return ""
	}
	for _, r := range reserved {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	if !a.IsGlobalUnicast() {
		return "non-unicast"
	}
	return ""
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// reserved are the ranges that netip's predicates call global unicast but
// that no public webhook receiver lives on.
var reserved = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/8"), "reserved"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved (local-use NAT64)"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard-only)"},
	{netip.MustParsePrefix("2001::/23"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "reserved (6to4)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
}

// testAllows reports whether the permissive test rules accept an address of
// class c: everything but what no receiver lives on.
func testAllows(c string) bool {
	switch c {
	case "link-local", "unspecified", "multicast", "invalid", "non-unicast":
		return false
	}
	return true
}

// urlPolicy is the policy of one environment.
type urlPolicy struct {
	env settleflow.Environment
	// public: https and public addresses only.
	public bool
	lookup func(ctx context.Context, host string) ([]net.IPAddr, error)
	// dialTimeout bounds connecting to all of a host's addresses when the
	// dial has no deadline of its own.
	dialTimeout time.Duration
}

func newURLPolicy(cfg Config, env settleflow.Environment) *urlPolicy {
	p := &urlPolicy{env: env, lookup: cfg.LookupIPAddr, dialTimeout: cmp.Or(cfg.Timeout, DefaultTimeout)}
	switch env {
	case settleflow.Live:
		p.public = !cfg.liveAsTest
	default:
		p.public = cfg.StrictTestURLs
	}
	if p.lookup == nil {
		p.lookup = net.DefaultResolver.LookupIPAddr
	}
	return p
}

// policyError is a refusal by the URL policy. Its message is meant for the
// person who registered the URL and never carries credentials.
type policyError struct{ msg string }

func (e *policyError) Error() string { return e.msg }

func (p *urlPolicy) refuse(format string, args ...any) error {
	return &policyError{msg: fmt.Sprintf(format, args...)}
}

// rule says what the environment requires, to end refusals with.
func (p *urlPolicy) rule(what string) string {
	s := fmt.Sprintf("%s endpoints must %s", p.env, what)
	if p.env != settleflow.Live && p.public {
		s += " (strict test URLs are on)"
	}
	return s
}

// checkAddr refuses an address the environment may not connect to. subject
// names the URL or host in the refusal.
func (p *urlPolicy) checkAddr(subject string, a netip.Addr) error {
	c := addrClass(a)
	if c == "" || (!p.public && testAllows(c)) {
		return nil
	}
	what := "resolve to public addresses"
	if !p.public {
		what = "not resolve to link-local, unspecified or multicast addresses"
	}
	return p.refuse("%s resolves to %s %s address (%s); %s",
		subject, article(c), c, a.Unmap().WithZone(""), p.rule(what))
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// checkStatic applies the rules that need no resolution and returns the
// parsed URL.
func (p *urlPolicy) checkStatic(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, p.refuse("url must be an absolute http or https URL")
	}
	shown := RedactURL(raw)
	if u.User != nil {
		return nil, p.refuse("webhook URL %s carries credentials (userinfo before the host), which would be stored and shown in clear; "+
			"remove them: receivers authenticate deliveries by their signature", shown)
	}
	host := u.Hostname()
	if looksNumeric(host) {
		if _, err := netip.ParseAddr(host); err != nil {
			return nil, p.refuse("webhook URL %s has a numeric host %q that is not a canonical IP address; "+
				"write IPv4 addresses as four decimal octets (127.0.0.1), IPv6 in brackets", shown, host)
		}
	}
	if !p.public {
		return u, nil
	}
	if u.Scheme != "https" {
		return nil, p.refuse("webhook URL %s is plain http; %s", shown, p.rule("use https"))
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return nil, p.refuse("webhook URL %s names a loopback host; %s", shown, p.rule("resolve to public addresses"))
	}
	return u, nil
}

// looksNumeric reports whether a host would be read as an IPv4 address by
// a lenient parser (inet_aton, WHATWG URL): its last label is all decimal
// digits or 0x followed by hex digits. An IPv6 literal counts too.
func looksNumeric(host string) bool {
	if strings.Contains(host, ":") {
		return true
	}
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return true // "1.2.3.4.." and the like: nothing to resolve
	}
	digits := "0123456789"
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		last, digits = last[2:], "0123456789abcdefABCDEF"
	}
	for _, r := range last {
		if !strings.ContainsRune(digits, r) {
			return false
		}
	}
	return true
}

// resolveTimeout bounds a lookup at registration.
const resolveTimeout = 10 * time.Second

// check applies every rule to a URL being registered: the static ones, then,
// for the public rules, each address its host resolves to now. For the
// permissive test rules a host name is not resolved (the receiver may not be
// up yet); an IP literal is checked.
func (p *urlPolicy) check(ctx context.Context, raw string) error {
	u, err := p.checkStatic(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr("webhook URL "+RedactURL(raw), a)
	}
	if !p.public {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return p.refuse("webhook URL %s: host %s does not resolve (%v); %s",
			RedactURL(raw), host, err, p.rule("resolve to public addresses"))
	}
	for _, a := range addrs {
		if err := p.checkAddr("webhook URL "+RedactURL(raw), a); err != nil {
			return err
		}
	}
	return nil
}

// resolve returns the addresses of host: itself if it is an IP literal.
func (p *urlPolicy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ias, err := p.lookup(ctx, host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, errors.New("no such host")
		}
		return nil, err
	}
	out := make([]netip.Addr, 0, len(ias))
	for _, ia := range ias {
		if a, ok := netip.AddrFromSlice(ia.IP); ok {
			// net.IP keeps IPv4 in 16 bytes; dial and show it as IPv4.
			out = append(out, a.Unmap().WithZone(ia.Zone))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no addresses")
	}
	return out, nil
}

// dialContext is the delivering transport's DialContext: it resolves the
// host itself, refuses the connection unless every address is allowed, and
// connects to the addresses in turn through a dialer whose Control checks
// the address of each socket once more, right before connect, so that no
// path through name resolution reaches a refused address.
func (p *urlPolicy) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("lookup %s: %w", host, err)}
	}
	for _, a := range addrs {
		if err := p.checkAddr("webhook host "+host, a); err != nil {
			return nil, err
		}
	}
	d := net.Dialer{
		KeepAlive:      30 * time.Second,
		ControlContext: p.control(host),
	}
	var first error
	for i, a := range addrs {
		// Addresses are tried one after the other, each with its share of
		// the time left (at least 2 s, like the net package), so an
		// unreachable first address does not use up the attempt.
		d.Timeout = max(p.dialTimeout/time.Duration(len(addrs)-i), 2*time.Second)
		if dl, ok := ctx.Deadline(); ok {
			d.Timeout = max(time.Until(dl)/time.Duration(len(addrs)-i), 2*time.Second)
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control returns the dialer's Control hook for connections to host: it
// checks the address the socket is about to connect to.
func (p *urlPolicy) control(host string) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return p.refuse("webhook host %s: connection to %q refused: not an IP address and port", host, address)
		}
		return p.checkAddr("webhook host "+host, ap.Addr())
	}
}

// guard makes t dial through the policy. Proxies are turned off: through a
// proxy the deliverer cannot see, let alone check, the address it reaches.
func (p *urlPolicy) guard(t *http.Transport) {
	t.Proxy = nil
	t.OnProxyConnectResponse = nil
	//lint:ignore SA1019 the deprecated dialers are cleared, not used, so that nothing bypasses DialContext
	t.Dial = nil
	//lint:ignore SA1019 as above
	t.DialTLS = nil
	t.DialTLSContext = nil
	t.DialContext = p.dialContext
}

// RedactURL returns raw fit to show in listings, logs and errors: the
// credentials of the userinfo and the values of the query (which often carry
// tokens) are replaced by "REDACTED", the fragment is dropped. A URL that
// does not parse is shown as "(invalid URL)", since it may be anything.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, part := range parts {
			if k, _, ok := strings.Cut(part, "="); ok {
				parts[i] = k + "=REDACTED"
			} else if part != "" {
				parts[i] = "REDACTED" // a bare token
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
