package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// A request to be added as a voter names the field it gets wrong; the
// controller record's fields are optional (a node that sends none writes
// its record itself).
func TestJoinCompleteRequest_NamesTheBadField(t *testing.T) {
	good := func() *JoinCompleteRequest {
		return &JoinCompleteRequest{ClusterAddr: "10.0.0.2:6262", APIURL: "https://ctrl-b.example.com:1280", Version: "v0.2.0",
			CommandVersion: 9, JWK: json.RawMessage(`{"kty":"EC","crv":"P-256"}`)}
	}
	if err := good().check(); err != nil {
		t.Fatalf("a good request: %v", err)
	}
	if err := (&JoinCompleteRequest{ClusterAddr: "10.0.0.2:6262"}).check(); err != nil {
		t.Fatalf("a request without the record's fields: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(*JoinCompleteRequest)
	}{
		{"clusterAddr", func(b *JoinCompleteRequest) { b.ClusterAddr = "10.0.0.2" }},
		{"apiUrl", func(b *JoinCompleteRequest) { b.APIURL = "http://ctrl-b.example.com:1280" }},
		{"apiUrl", func(b *JoinCompleteRequest) { b.APIURL = "https://ctrl-b.example.com:1280/edge/management/v1" }},
		{"version", func(b *JoinCompleteRequest) { b.Version = strings.Repeat("v", 65) }},
		{"commandVersion", func(b *JoinCompleteRequest) { b.CommandVersion = -1 }},
		{"jwk", func(b *JoinCompleteRequest) { b.JWK = json.RawMessage(`"a string"`) }},
	} {
		b := good()
		c.edit(b)
		var ae *apiError
		if err := b.check(); !errors.As(err, &ae) || ae.status != http.StatusBadRequest {
			t.Errorf("%s: %v, want a 400", c.field, err)
			continue
		}
		if fc, _ := ae.cause.(fieldCause); fc.Field != c.field {
			t.Errorf("%+v names %q, want %q", b, fc.Field, c.field)
		}
	}
}
