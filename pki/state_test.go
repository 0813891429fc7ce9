package pki

import (
	"crypto/x509"
	"encoding/json"
	"math/big"
	"testing"
)

func TestNewStateJSONRoundTripLoads(t *testing.T) {
	s, _ := newTestAuthority(t)
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back != *s {
		t.Fatal("state changed across JSON round trip")
	}
	a, err := Load(&back)
	if err != nil {
		t.Fatalf("Load after JSON: %v", err)
	}
	if a.KeyID() != s.KeyID || s.KeyID == "" {
		t.Fatalf("kid = %q, want %q", a.KeyID(), s.KeyID)
	}
	certs, err := ParseCertsPEM(a.BundlePEM())
	if err != nil || len(certs) != 2 {
		t.Fatalf("bundle: %d certs, err %v", len(certs), err)
	}
	if !certs[0].Equal(mustParseOne(t, []byte(s.RootCertPEM))) ||
		!certs[1].Equal(mustParseOne(t, []byte(s.IntermediateCertPEM))) {
		t.Fatal("bundle is not root then intermediate")
	}
}

func TestNewStateCAConstraintsAndValidity(t *testing.T) {
	s, _ := newTestAuthority(t)
	root := mustParseOne(t, []byte(s.RootCertPEM))
	inter := mustParseOne(t, []byte(s.IntermediateCertPEM))

	if !root.IsCA || root.MaxPathLen != 1 {
		t.Errorf("root IsCA=%v MaxPathLen=%d, want CA with path len 1", root.IsCA, root.MaxPathLen)
	}
	if !inter.IsCA || inter.MaxPathLen != 0 || !inter.MaxPathLenZero {
		t.Errorf("intermediate IsCA=%v MaxPathLen=%d zero=%v, want CA with path len 0",
			inter.IsCA, inter.MaxPathLen, inter.MaxPathLenZero)
	}
	if !root.NotAfter.Equal(testNow.AddDate(10, 0, 0)) {
		t.Errorf("root NotAfter = %v", root.NotAfter)
	}
	if !inter.NotAfter.Equal(testNow.AddDate(5, 0, 0)) {
		t.Errorf("intermediate NotAfter = %v", inter.NotAfter)
	}
	if root.PublicKeyAlgorithm != x509.ECDSA || inter.PublicKeyAlgorithm != x509.ECDSA {
		t.Error("CA keys are not ECDSA")
	}
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	for _, c := range []*x509.Certificate{root, inter} {
		if c.SerialNumber.Sign() <= 0 || c.SerialNumber.Cmp(limit) >= 0 {
			t.Errorf("serial %v out of 128-bit range", c.SerialNumber)
		}
	}
	if root.SerialNumber.Cmp(inter.SerialNumber) == 0 {
		t.Error("root and intermediate share a serial")
	}
}

func TestNewStateRejectsEmptyClusterName(t *testing.T) {
	_, err := NewState(testNow, " ")
	wantErr(t, err, ErrBadRequest)
}

// TestLoadRejectsABrokenState: every way a stored CA state can be broken
// fails Load with ErrInvalidState (and ErrKeyMismatch where a key does not
// belong to its certificate).
func TestLoadRejectsABrokenState(t *testing.T) {
	s, _ := newTestAuthority(t)
	other, _ := newTestAuthority(t)
	for _, tc := range []struct {
		name     string
		mutate   func(*State)
		mismatch bool
	}{
		{"intermediate key of another CA", func(b *State) { b.IntermediateKeyPEM = other.IntermediateKeyPEM }, true},
		{"root key that is the intermediate's", func(b *State) { b.RootKeyPEM = s.IntermediateKeyPEM }, true},
		{"intermediate of another root", func(b *State) {
			b.IntermediateCertPEM, b.IntermediateKeyPEM = other.IntermediateCertPEM, other.IntermediateKeyPEM
		}, false},
		{"no root cert", func(b *State) { b.RootCertPEM = "" }, false},
		{"signing key not PEM", func(b *State) { b.SigningKeyPEM = "garbage" }, false},
		{"no key id", func(b *State) { b.KeyID = "" }, false},
	} {
		bad := *s
		tc.mutate(&bad)
		_, err := Load(&bad)
		if err == nil {
			t.Errorf("%s: Load accepted the broken state", tc.name)
			continue
		}
		wantErr(t, err, ErrInvalidState)
		if tc.mismatch {
			wantErr(t, err, ErrKeyMismatch)
		}
	}
	_, err := Load(nil)
	wantErr(t, err, ErrInvalidState)
}

func TestKeyPEMRoundTrip(t *testing.T) {
	k, err := NewNodeKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := EncodeKeyPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseKeyPEM(p)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(back) {
		t.Fatal("parsed key differs")
	}
	_, err = ParseKeyPEM([]byte("not pem"))
	wantErr(t, err, ErrBadPEM)
}
