package console

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

// TestServesTheAssetsWithAStrictPolicy: the page and its modules, with
// their types and the CSP; a missing file is a 404.
func TestServesTheAssetsWithAStrictPolicy(t *testing.T) {
	t.Parallel()
	for path, ct := range map[string]string{"/console/": "text/html", "/console/app.js": "text/javascript",
		"/console/resources.js": "text/javascript", "/console/style.css": "text/css", "/console/vendor/qrcode.mjs": "text/javascript"} {
		w := get(t, path)
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), ct) {
			t.Errorf("%s: %d %q", path, w.Code, w.Header().Get("Content-Type"))
		}
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: CSP %q", path, csp)
		}
	}
	for _, path := range []string{"/console/nothing.js", "/console/../console.go", "/console/vendor/"} {
		if w := get(t, path); w.Code != 404 {
			t.Errorf("%s: %d, want 404", path, w.Code)
		}
	}
	if w := get(t, "/console"); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/console/" {
		t.Errorf("/console: %d %q", w.Code, w.Header().Get("Location"))
	}
}

// TestNoInlineScriptOrStyle: the policy forbids them, so the page must not
// need them: no <script> with a body, no style= attribute, no on* handler
// attribute in the HTML, and no setAttribute('style') or innerHTML in the code.
func TestNoInlineScriptOrStyle(t *testing.T) {
	t.Parallel()
	files := Files()
	html, _ := fs.ReadFile(files, "index.html")
	if regexp.MustCompile(`<script[^>]*>[^<]+</script>`).Match(html) || regexp.MustCompile(`(?i)\sstyle=|\son[a-z]+=`).Match(html) {
		t.Fatalf("index.html has inline script or style:\n%s", html)
	}
	for _, name := range []string{"app.js", "resources.js"} {
		src, _ := fs.ReadFile(files, name)
		for _, bad := range []string{"innerHTML", "setAttribute('style'", "eval(", "document.write"} {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

// TestVendoredLibraryIsThePublishedOne: the embedded QR code library is
// byte for byte the file console/vendor.sh fetches from the npm registry
// (its hash recorded when it was vendored).
func TestVendoredLibraryIsThePublishedOne(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("vendor-qrcode.mjs.sha256")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fs.ReadFile(Files(), "vendor/qrcode.mjs")
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != strings.TrimSpace(string(want)) {
		t.Fatalf("vendor/qrcode.mjs has sha256 %s, recorded %s: run console/vendor.sh", got, want)
	}
}
