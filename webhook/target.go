package webhook

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"edgectl/store"
)

// A webhook must not point at the controller itself: a subscription
// aimed at a member's API or cluster port would have the leader POST
// events into its own listeners. The check runs when a subscription is
// written (on the URL's resolved addresses) and again on every connection
// the deliverer opens (on the address actually dialled, so a DNS answer
// that changes later cannot get around it).

// Endpoints are the addresses the cluster listens on.
type Endpoints struct {
	exact map[string]bool // "ip:port" of a member on another host
	local map[string]bool // ports a member listens on on this host (loopback, unspecified or a local interface)
}

// ClusterEndpoints are the API and cluster addresses of every member (from
// the controller records) and extra (this node's other listeners, such as
// the metrics address).
func ClusterEndpoints(tx *store.Tx, extra ...string) *Endpoints {
	var addrs []string
	tx.Controllers(func(c *store.Controller) bool {
		if u, err := url.Parse(c.APIURL); err == nil && u.Host != "" {
			addrs = append(addrs, hostPort(u))
		}
		if c.ClusterAddr != "" {
			addrs = append(addrs, c.ClusterAddr)
		}
		return true
	})
	return NewEndpoints(append(addrs, extra...))
}

// NewEndpoints makes the set of host:port addresses; names are resolved
// (with a short deadline), so a member named by its host name counts.
func NewEndpoints(addrs []string) *Endpoints {
	e := &Endpoints{exact: map[string]bool{}, local: map[string]bool{}}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		for _, ip := range resolve(host) {
			if isLocal(ip) {
				e.local[port] = true
			} else {
				e.exact[net.JoinHostPort(ip.String(), port)] = true
			}
		}
	}
	return e
}

// Is reports whether ip:port is one of the cluster's listeners.
func (e *Endpoints) Is(ip net.IP, port string) bool {
	if e.exact[net.JoinHostPort(ip.String(), port)] {
		return true
	}
	return e.local[port] && isLocal(ip)
}

// CheckURL refuses a URL whose host resolves to one of the cluster's
// listeners. A host that does not resolve now is let through: the
// deliverer checks the address it dials.
func (e *Endpoints) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(hostPort(u))
	for _, ip := range resolve(host) {
		if e.Is(ip, port) {
			return fmt.Errorf("%s is an address of this controller cluster (%s): events cannot be delivered to the controller itself",
				u.Host, net.JoinHostPort(ip.String(), port))
		}
	}
	return nil
}

// hostPort is the URL's host:port, with the scheme's default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "443"
	if u.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func resolve(host string) []net.IP {
	host = strings.Trim(host, "[]")
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.IP)
	}
	return out
}

// isLocal: a loopback or unspecified address, or one of this host's.
func isLocal(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range ifaces {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
