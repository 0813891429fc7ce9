package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TOTP parameters (RFC 6238 as authenticator applications expect them).
const (
	TOTPPeriod = 30 * time.Second
	totpDigits = otp.DigitsSix
	// TOTPIssuer names the service in authenticator applications.
	TOTPIssuer = "edgectl"
	// RecoveryCodeCount is how many recovery codes an enrollment has.
	RecoveryCodeCount = 20
	recoveryCodeLen   = 8
	// recoveryAlphabet has no 0/O or 1/I, which people misread.
	recoveryAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
)

var totpOpts = totp.ValidateOpts{Period: uint(TOTPPeriod / time.Second), Digits: totpDigits, Algorithm: otp.AlgorithmSHA1}

// NewTOTPSecret returns a new random 160-bit secret, base32 without padding.
func NewTOTPSecret() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: totp secret: %w", err)
	}
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b), nil
}

// totpKey is the otp key of a secret for an account, for its URL and QR code.
func totpKey(account, secret string) (*otp.Key, error) {
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		return nil, fmt.Errorf("auth: totp secret: %w", err)
	}
	return totp.Generate(totp.GenerateOpts{Issuer: TOTPIssuer, AccountName: account, Period: totpOpts.Period,
		Secret: raw, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
}

// ProvisioningURL is the otpauth:// URL of a secret, which authenticator
// applications read (usually from a QR code).
func ProvisioningURL(account, secret string) (string, error) {
	k, err := totpKey(account, secret)
	if err != nil {
		return "", err
	}
	return k.URL(), nil
}

// ProvisioningQR is the PNG QR code of the provisioning URL.
func ProvisioningQR(account, secret string, size int) ([]byte, error) {
	k, err := totpKey(account, secret)
	if err != nil {
		return nil, err
	}
	img, err := k.Image(size, size)
	if err != nil {
		return nil, fmt.Errorf("auth: qr code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("auth: qr code: %w", err)
	}
	return buf.Bytes(), nil
}

// TOTPStep is the RFC 6238 time step of t.
func TOTPStep(t time.Time) int64 { return t.Unix() / int64(TOTPPeriod/time.Second) }

// TOTPCode is the code of secret at t (tests and tools).
func TOTPCode(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totpOpts)
}

// MatchTOTP checks code against the steps now-1, now and now+1 (clock skew)
// and returns the step it belongs to. Every candidate is computed and
// compared in constant time, so the time taken does not tell which matched.
func MatchTOTP(secret, code string, now time.Time) (int64, bool) {
	if len(code) != totpDigits.Length() {
		return 0, false
	}
	var step int64
	found := false
	for _, d := range []int64{-1, 0, 1} {
		t := now.Add(time.Duration(d) * TOTPPeriod)
		want, err := totp.GenerateCodeCustom(secret, t, totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			step, found = TOTPStep(t), true
		}
	}
	return step, found
}

// NewRecoveryCodes returns n random recovery codes of 8 characters (40 bits).
func NewRecoveryCodes(n int) ([]string, error) {
	out := make([]string, n)
	buf := make([]byte, recoveryCodeLen)
	for i := range out {
		if _, err := rand.Read(buf); err != nil {
			return nil, fmt.Errorf("auth: recovery codes: %w", err)
		}
		b := make([]byte, recoveryCodeLen)
		for j, v := range buf {
			// 256 is a multiple of 32: the modulo keeps the letters uniform.
			b[j] = recoveryAlphabet[int(v)%len(recoveryAlphabet)]
		}
		out[i] = string(b)
	}
	return out, nil
}

// NormalizeRecoveryCode removes the spaces and dashes people type and
// upper-cases the letters.
func NormalizeRecoveryCode(code string) string {
	return strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(code))
}

// LooksLikeRecoveryCode reports whether code has the shape of a recovery code.
func LooksLikeRecoveryCode(code string) bool {
	c := NormalizeRecoveryCode(code)
	if len(c) != recoveryCodeLen {
		return false
	}
	for _, r := range c {
		if !strings.ContainsRune(recoveryAlphabet, r) {
			return false
		}
	}
	return true
}

// RecoveryCodeHash is the stored form of a recovery code, salted with the
// enrollment's id so equal codes of two enrollments hash apart.
func RecoveryCodeHash(salt, code string) string {
	h := sha256.Sum256([]byte("edgectl-recovery\x00" + salt + "\x00" + NormalizeRecoveryCode(code)))
	return hex.EncodeToString(h[:])
}
