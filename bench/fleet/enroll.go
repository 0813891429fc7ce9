package fleet

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"edgectl/bench/benchkit"
)

// Enrollment, as `ziti router enroll` does it: the edge router is made
// through the Management API, its enrollment JWT read back; one P-256 key
// signs two requests (client and server certificate, CN the JWT's subject,
// SANs localhost and 127.0.0.1), posted to the JWT's issuer at
// /edge/client/v1/enroll?method=erott&token=<jti>; the answer carries the
// certificates.

// enrollClaims are the enrollment JWT's claims the router uses. The JWT's
// signature is not checked: the tool talks to a controller it started.
type enrollClaims struct {
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	Method  string `json:"em"`
	Token   string `json:"jti"`
}

func parseEnrollJWT(jwt string) (enrollClaims, error) {
	var c enrollClaims
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return c, fmt.Errorf("the enrollment JWT has %d parts, not 3", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, fmt.Errorf("the enrollment JWT's claims: %w", err)
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("the enrollment JWT's claims: %w", err)
	}
	if c.Issuer == "" || c.Token == "" || c.Subject == "" {
		return c, fmt.Errorf("the enrollment JWT lacks iss, sub or jti: %s", raw)
	}
	return c, nil
}

// EnrollRouter makes edge router name with roleAttributes attrs through
// api, enrolls it, and returns it ready to Run against the nodes at ctrls
// (HOST:PORT of each node's control channel listener), preferring
// ctrls[pref].
func EnrollRouter(api *benchkit.API, name string, attrs []string, ctrls []string, pref int) (*Router, error) {
	id, err := api.Create("/edge-routers", map[string]any{"name": name, "roleAttributes": attrs, "isTunnelerEnabled": false})
	if err != nil {
		return nil, err
	}
	jwt, err := api.Field("/edge-routers/"+id, "enrollmentJwt")
	if err != nil {
		return nil, err
	}
	claims, err := parseEnrollJWT(jwt)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	body := map[string]string{}
	for _, f := range []string{"certCsr", "serverCertCsr"} {
		if body[f], err = routerCSR(key, claims.Subject); err != nil {
			return nil, err
		}
	}
	method := claims.Method
	if method == "" {
		method = "erott"
	}
	u := strings.TrimRight(claims.Issuer, "/") + "/edge/client/v1/enroll?method=" + url.QueryEscape(method) + "&token=" + url.QueryEscape(claims.Token)
	raw, _ := json.Marshal(body)
	resp, err := api.C.Post(u, "application/json", bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("enrolling %s: %d %.300s", name, resp.StatusCode, data)
	}
	var out struct {
		Data struct {
			Cert string `json:"cert"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &out); err != nil || out.Data.Cert == "" {
		return nil, fmt.Errorf("enrolling %s: no certificate in %.300s", name, data)
	}
	cert, err := tlsCert(out.Data.Cert, key)
	if err != nil {
		return nil, err
	}
	return newRouter(id, name, cert, ctrls, pref), nil
}

// routerCSR is a PEM certificate request of key for cn with the SANs a
// local router asks for.
func routerCSR(key *ecdsa.PrivateKey, cn string) (string, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: cn, Organization: []string{"edgectl fleet"}},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}, key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

// tlsCert is the client certificate chain chainPEM with key.
func tlsCert(chainPEM string, key *ecdsa.PrivateKey) (tls.Certificate, error) {
	var c tls.Certificate
	for rest := []byte(chainPEM); ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			c.Certificate = append(c.Certificate, b.Bytes)
		}
	}
	if len(c.Certificate) == 0 {
		return c, fmt.Errorf("no certificate in the enrollment's answer")
	}
	c.PrivateKey = key
	return c, nil
}
