package api

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"edgectl/store"

	"github.com/Masterminds/semver/v3"
)

// The decoders below check the type-specific fields of a posture check and
// return the values to store, in canonical form. Each error names the exact
// element (operatingSystems[1].versions[0]) so a client can point at it.

// osTypes maps the accepted spellings of an OS type, upper-cased with spaces
// and underscores removed, to the canonical upper-case form create payloads
// use. The spec's prose spellings (Windows Server, macOS and its typo MaxOc,
// iOS) reduce to the same keys.
var osTypes = map[string]string{
	"WINDOWS":       "WINDOWS",
	"WINDOWSSERVER": "WINDOWS_SERVER",
	"LINUX":         "LINUX",
	"MACOS":         "MACOS",
	"MAXOC":         "MACOS",
	"IOS":           "IOS",
	"ANDROID":       "ANDROID",
}

const osTypeList = "WINDOWS, WINDOWS_SERVER, LINUX, MACOS, IOS, ANDROID"

// normalizeOSType returns the canonical OS type of s, or false.
func normalizeOSType(s string) (string, bool) {
	key := strings.ToUpper(strings.NewReplacer(" ", "", "_", "").Replace(s))
	t, ok := osTypes[key]
	return t, ok
}

// rawList decodes a JSON array into its elements; empty arrays are refused
// where emptyOK is false.
func rawList(name string, raw json.RawMessage, emptyOK bool) ([]json.RawMessage, error) {
	var l []json.RawMessage
	if err := unmarshalField(name, raw, &l); err != nil {
		return nil, err
	}
	if len(l) == 0 && !emptyOK {
		return nil, invalidField(name, "must not be empty", []any{})
	}
	return l, nil
}

// stringList decodes a JSON array of strings, naming the bad element.
func stringList(name string, raw json.RawMessage, emptyOK bool) ([]string, error) {
	els, err := rawList(name, raw, emptyOK)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(els))
	for i, el := range els {
		var s string
		if err := unmarshalField(fmt.Sprintf("%s[%d]", name, i), el, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func decodeOperatingSystems(raw json.RawMessage) (any, error) {
	els, err := rawList("operatingSystems", raw, false)
	if err != nil {
		return nil, err
	}
	out := make([]store.OperatingSystem, 0, len(els))
	for i, el := range els {
		name := fmt.Sprintf("operatingSystems[%d]", i)
		var o struct {
			Type     *string         `json:"type"`
			Versions json.RawMessage `json:"versions"`
		}
		if err := unmarshalField(name, el, &o); err != nil {
			return nil, err
		}
		if o.Type == nil {
			return nil, invalidField(name+".type", "is required", nil)
		}
		t, ok := normalizeOSType(*o.Type)
		if !ok {
			return nil, invalidField(name+".type", "must be one of "+osTypeList, *o.Type)
		}
		versions := []string{}
		if len(o.Versions) > 0 && string(o.Versions) != "null" {
			if versions, err = stringList(name+".versions", o.Versions, true); err != nil {
				return nil, err
			}
		}
		for j, v := range versions {
			if _, err := semver.NewConstraint(v); err != nil {
				return nil, invalidField(fmt.Sprintf("%s.versions[%d]", name, j), "must be a semantic version statement such as \">=10.0.19041\": "+err.Error(), v)
			}
		}
		out = append(out, store.OperatingSystem{Type: t, Versions: versions})
	}
	return out, nil
}

// normalizeMAC returns a MAC address in upper-case dash-separated form. Dash
// and colon separators are accepted (one kind per address), in either case.
func normalizeMAC(s string) (string, bool) {
	var parts []string
	switch len(s) {
	case 12: // bare, as generated clients and OpenZiti's CLI send it
		for i := 0; i < 12; i += 2 {
			parts = append(parts, s[i:i+2])
		}
	case 17:
		sep := s[2]
		if sep != '-' && sep != ':' {
			return "", false
		}
		parts = strings.Split(s, string(sep))
	default:
		return "", false
	}
	if len(parts) != 6 {
		return "", false
	}
	for _, p := range parts {
		if len(p) != 2 || !isHex(p) {
			return "", false
		}
	}
	return strings.ToUpper(strings.Join(parts, "-")), true
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

func decodeMacAddresses(raw json.RawMessage) (any, error) {
	l, err := stringList("macAddresses", raw, false)
	if err != nil {
		return nil, err
	}
	for i, s := range l {
		m, ok := normalizeMAC(s)
		if !ok {
			return nil, invalidField(fmt.Sprintf("macAddresses[%d]", i), "must be a hardware address: AA-BB-CC-DD-EE-FF, aa:bb:cc:dd:ee:ff or aabbccddeeff", s)
		}
		l[i] = m
	}
	return l, nil
}

// hexList decodes an array of hex digests of n characters, lower-cased.
func hexList(name string, raw json.RawMessage, n int, what string) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []string{}, nil
	}
	l, err := stringList(name, raw, true)
	if err != nil {
		return nil, err
	}
	for i, s := range l {
		if len(s) != n || !isHex(s) {
			return nil, invalidField(fmt.Sprintf("%s[%d]", name, i), fmt.Sprintf("must be a %s: %d hex digits", what, n), s)
		}
		l[i] = strings.ToLower(s)
	}
	return l, nil
}

func decodeProcess(name string, raw json.RawMessage) (*store.Process, error) {
	var p struct {
		OSType             *string         `json:"osType"`
		OS                 *string         `json:"os"`
		Path               *string         `json:"path"`
		Hashes             json.RawMessage `json:"hashes"`
		SignerFingerprints json.RawMessage `json:"signerFingerprints"`
		SignerFingerprint  *string         `json:"signerFingerprint"`
	}
	if err := unmarshalField(name, raw, &p); err != nil {
		return nil, err
	}
	if string(raw) == "null" {
		return nil, invalidField(name, "is required and cannot be null", nil)
	}
	out := &store.Process{}
	osField, osValue := name+".osType", p.OSType
	if osValue == nil && p.OS != nil {
		// The spec's PROCESS_MULTI table calls the field "os".
		osField, osValue = name+".os", p.OS
	}
	if osValue != nil {
		t, ok := normalizeOSType(*osValue)
		if !ok {
			return nil, invalidField(osField, "must be one of "+osTypeList, *osValue)
		}
		out.OSType = t
	}
	if p.Path == nil || strings.TrimSpace(*p.Path) == "" {
		return nil, invalidField(name+".path", "is required and must not be empty", nil)
	}
	out.Path = *p.Path
	var err error
	if out.Hashes, err = hexList(name+".hashes", p.Hashes, 64, "SHA-256 hash"); err != nil {
		return nil, err
	}
	if out.SignerFingerprints, err = hexList(name+".signerFingerprints", p.SignerFingerprints, 40, "SHA-1 certificate thumbprint"); err != nil {
		return nil, err
	}
	if p.SignerFingerprint != nil && *p.SignerFingerprint != "" {
		// The single-valued form some clients send for PROCESS checks.
		one, _ := json.Marshal([]string{*p.SignerFingerprint})
		extra, err := hexList(name+".signerFingerprint", one, 40, "SHA-1 certificate thumbprint")
		if err != nil {
			return nil, invalidField(name+".signerFingerprint", "must be a SHA-1 certificate thumbprint: 40 hex digits", *p.SignerFingerprint)
		}
		out.SignerFingerprints = append(out.SignerFingerprints, extra...)
	}
	return out, nil
}

func decodeProcesses(raw json.RawMessage) (any, error) {
	els, err := rawList("processes", raw, false)
	if err != nil {
		return nil, err
	}
	out := make([]store.Process, 0, len(els))
	for i, el := range els {
		p, err := decodeProcess(fmt.Sprintf("processes[%d]", i), el)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

func decodeDomains(raw json.RawMessage) (any, error) {
	l, err := stringList("domains", raw, false)
	if err != nil {
		return nil, err
	}
	for i, d := range l {
		if strings.TrimSpace(d) == "" {
			return nil, invalidField(fmt.Sprintf("domains[%d]", i), "must not be empty", d)
		}
	}
	return l, nil
}
