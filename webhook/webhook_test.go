package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"strings"
	"testing"
)

// The signature a receiver checks: HMAC-SHA256 of the exact body under the
// subscription's secret, as "sha256=" and hex; another secret or body gives
// another one.
func TestSign(t *testing.T) {
	body := []byte(`[{"id":1}]`)
	m := hmac.New(sha256.New, []byte("a-webhook-secret-0123"))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if got := Sign("a-webhook-secret-0123", body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if Sign("another-secret-0123456", body) == want || Sign("a-webhook-secret-0123", []byte(`[{"id":2}]`)) == want {
		t.Fatal("the signature does not depend on the secret and the body")
	}
}

// A URL that names one of the cluster's listeners is refused, by IP or
// (for this host's listeners) by any local address with the port; other
// hosts and ports, and the scheme's default port, are told apart.
func TestEndpointsRefuseTheClusterItself(t *testing.T) {
	e := NewEndpoints([]string{"127.0.0.1:1280", "10.9.8.7:6262", "not a host:port"})
	for _, c := range []struct {
		url     string
		refused bool
	}{
		{"https://127.0.0.1:1280/hook", true},
		{"https://localhost:1280/hook", true},
		{"https://[::1]:1280/hook", true},
		{"https://0.0.0.0:1280/hook", true},
		{"https://10.9.8.7:6262/hook", true},
		{"https://10.9.8.7:1280/hook", false},
		{"https://127.0.0.1:1281/hook", false},
		{"https://192.0.2.10/hook", false},
	} {
		err := e.CheckURL(c.url)
		if (err != nil) != c.refused {
			t.Errorf("CheckURL(%s) = %v, want refused %v", c.url, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "cannot be delivered to the controller itself") {
			t.Errorf("CheckURL(%s): the error does not say why: %v", c.url, err)
		}
	}
	https := NewEndpoints([]string{"127.0.0.1:443"})
	if https.CheckURL("https://127.0.0.1/hook") == nil || https.CheckURL("http://127.0.0.1/hook") != nil {
		t.Error("the scheme's default port is not the one checked")
	}
	if !e.Is(net.ParseIP("127.0.0.2"), "1280") || e.Is(net.ParseIP("192.0.2.10"), "1280") {
		t.Error("Is: a loopback address with a cluster port is the cluster; a foreign one is not")
	}
}
