package cli

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"edgectl/api"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// A profile is what `edgectl login` keeps: where the controller is, the CA
// bundle that its certificate chains to, and the API session token.
type profile struct {
	URL    string `json:"url"`
	CAPEM  string `json:"caPem,omitempty"`
	Token  string `json:"token"`
	User   string `json:"user,omitempty"`
	Cert   string `json:"cert,omitempty"` // client certificate and key files (cert login)
	Key    string `json:"key,omitempty"`
	SavedA string `json:"savedAt,omitempty"`
}

// profilesPath is the file of all profiles (mode 0600).
func profilesPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory for the login profiles: %w", err)
	}
	return filepath.Join(dir, "edgectl", "profiles.json"), nil
}

func loadProfiles() (map[string]*profile, error) {
	p, err := profilesPath()
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]*profile{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]*profile{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s is not a profiles file: %w", p, err)
	}
	return out, nil
}

func saveProfiles(ps map[string]*profile) error {
	p, err := profilesPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	raw, _ := json.MarshalIndent(ps, "", "  ")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// profileName is --profile, else $EDGECTL_PROFILE, else "default".
func profileName(cmd *cobra.Command) string {
	if p, _ := cmd.Flags().GetString("profile"); p != "" {
		return p
	}
	if p := os.Getenv("EDGECTL_PROFILE"); p != "" {
		return p
	}
	return "default"
}

// client is a logged-in Management API client.
type client struct {
	name string
	p    *profile
	http *http.Client
}

// newClient loads the current profile.
func newClient(cmd *cobra.Command) (*client, error) {
	ps, err := loadProfiles()
	if err != nil {
		return nil, err
	}
	name := profileName(cmd)
	p := ps[name]
	if p == nil {
		return nil, fmt.Errorf("not logged in (profile %q): run 'edgectl login URL -u USER' first", name)
	}
	hc, err := httpClient(p.CAPEM, p.Cert, p.Key)
	if err != nil {
		return nil, err
	}
	return &client{name: name, p: p, http: hc}, nil
}

// httpClient trusts caPEM (the system roots when empty) and presents the
// client certificate when given.
func httpClient(caPEM, certFile, keyFile string) (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caPEM)) {
			return nil, errors.New("the CA bundle holds no PEM certificate")
		}
		tc.RootCAs = pool
	}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}, nil
}

// apiError is an error answer of the API.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	if e.Code == "UNAUTHORIZED" {
		return e.Message + ": log in again with 'edgectl login'"
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// do sends one request to the Management API and returns the envelope's
// data and meta.
func (c *client) do(method, path string, body any) (json.RawMessage, json.RawMessage, error) {
	return doAPI(c.http, c.p.URL, c.p.Token, method, path, body)
}

func doAPI(hc *http.Client, base, token, method, path string, body any) (json.RawMessage, json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, strings.TrimRight(base, "/")+api.ManagementPrefix+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		req.Header.Set("zt-session", token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot reach the controller at %s: %w", base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Data  json.RawMessage `json:"data"`
		Meta  json.RawMessage `json:"meta"`
		Error *struct {
			Code, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, nil, fmt.Errorf("unexpected answer from %s (%d): %.200s", base, resp.StatusCode, raw)
	}
	if env.Error != nil {
		return nil, nil, &apiError{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message}
	}
	return env.Data, env.Meta, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func loginCmd() *cobra.Command {
	var user, pass, caFile, certFile, keyFile string
	var passStdin, yes bool
	cmd := &cobra.Command{
		Use:   "login URL",
		Short: "Authenticate to a controller and keep the session in a profile",
		Long: "Authenticates with a password (-u) or a client certificate (--cert/--key) and keeps the URL, the CA bundle\n" +
			"and the token in the profile (--profile, $EDGECTL_PROFILE, else \"default\") in the user's config dir (mode 0600).\n" +
			"--ca trusts a CA bundle file; --yes fetches the controller's CA certificates from /.well-known/est/cacerts and\n" +
			"trusts them (as `ziti edge login -y` does): only on a network you trust.",
		Example: "edgectl login https://127.0.0.1:1280 -u admin",
		Args:    argsWhat{"URL": "the controller URL"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			base := args[0]
			if !strings.Contains(base, "://") {
				base = "https://" + base
			}
			u, err := url.Parse(base)
			if err != nil || u.Host == "" {
				return usagef("URL %q: want https://host:port", args[0])
			}
			base = u.Scheme + "://" + u.Host
			var caPEM string
			switch {
			case caFile != "" && yes:
				return usagef("--ca and --yes: give one")
			case caFile != "":
				raw, err := os.ReadFile(caFile)
				if err != nil {
					return fmt.Errorf("--ca: %w", err)
				}
				caPEM = string(raw)
			case yes:
				if caPEM, err = fetchCACerts(base); err != nil {
					return err
				}
			}
			if passStdin {
				line, err := bufio.NewReader(os.Stdin).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("--password-stdin: %w", err)
				}
				pass = strings.TrimRight(line, "\r\n")
			}
			method, body := "password", map[string]any{}
			switch {
			case certFile != "":
				method = "cert"
			case user == "":
				return usagef("give -u USER (and -p, --password-stdin or a prompt), or --cert and --key")
			default:
				if pass == "" {
					if !term.IsTerminal(int(os.Stdin.Fd())) {
						return usagef("no password: give -p or --password-stdin")
					}
					fmt.Fprint(os.Stderr, "Password: ")
					raw, err := term.ReadPassword(int(os.Stdin.Fd()))
					fmt.Fprintln(os.Stderr)
					if err != nil {
						return err
					}
					pass = string(raw)
				}
				body["username"], body["password"] = user, pass
			}
			hc, err := httpClient(caPEM, certFile, keyFile)
			if err != nil {
				return err
			}
			data, _, err := doAPI(hc, base, "", http.MethodPost, "/authenticate?method="+method, body)
			if err != nil {
				return err
			}
			var sess struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal(data, &sess); err != nil || sess.Token == "" {
				return fmt.Errorf("the controller answered no token: %s", data)
			}
			ps, err := loadProfiles()
			if err != nil {
				return err
			}
			name := profileName(cmd)
			ps[name] = &profile{URL: base, CAPEM: caPEM, Token: sess.Token, User: user, Cert: certFile, Key: keyFile,
				SavedA: time.Now().UTC().Format(time.RFC3339)}
			if err := saveProfiles(ps); err != nil {
				return err
			}
			fmt.Printf("Logged in to %s as %s (profile %q)\n", base, firstNonEmpty(user, certFile), name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&user, "username", "u", "", "username")
	f.StringVarP(&pass, "password", "p", "", "password (prefer --password-stdin or the prompt)")
	f.BoolVar(&passStdin, "password-stdin", false, "read the password from the first line of standard input")
	f.StringVar(&caFile, "ca", "", "PEM file of the CA bundle to trust (default: the system roots)")
	f.BoolVarP(&yes, "yes", "y", false, "fetch and trust the controller's CA certificates")
	f.StringVar(&certFile, "cert", "", "client certificate file (certificate login)")
	f.StringVar(&keyFile, "key", "", "private key file of --cert")
	return cmd
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// fetchCACerts reads /.well-known/est/cacerts without verifying the server
// (the point is to learn whom to trust) and returns the certificates as PEM.
func fetchCACerts(base string) (string, error) {
	insecure := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // --yes: trust on first use, asked for
	req, _ := http.NewRequest(http.MethodGet, base+"/.well-known/est/cacerts", nil)
	req.Header.Set("Accept", "application/x-pem-file")
	resp, err := insecure.Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot reach the controller at %s: %w", base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s/.well-known/est/cacerts answered %d", base, resp.StatusCode)
	}
	if block, _ := pem.Decode(raw); block != nil {
		return string(raw), nil
	}
	// A server that answers base64 PKCS#7 only: the certificates are DER
	// inside; accept the PEM form only, to keep this simple and explicit.
	if _, err := base64.StdEncoding.DecodeString(string(raw)); err == nil {
		return "", fmt.Errorf("%s answered PKCS#7 where PEM was asked for: use --ca FILE", base)
	}
	return "", fmt.Errorf("%s/.well-known/est/cacerts did not answer CA certificates", base)
}

func logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "End the profile's API session and forget it",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			_, _, _ = c.do(http.MethodDelete, "/current-api-session", nil) // gone already is fine
			ps, err := loadProfiles()
			if err != nil {
				return err
			}
			delete(ps, c.name)
			if err := saveProfiles(ps); err != nil {
				return err
			}
			fmt.Printf("Logged out (profile %q)\n", c.name)
			return nil
		},
	}
}
