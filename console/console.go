// Package console serves the web console: static assets embedded in the
// binary, under /console/ on every node's API port, the same origin as the
// Management API it calls. There is no build step: the assets are the
// sources (plain ES modules and CSS), plus one vendored library
// (assets/vendor, see docs/console.md).
package console

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// Files are the console's assets, as served.
func Files() fs.FS {
	sub, _ := fs.Sub(assets, "assets")
	return sub
}

// CSP is the Content-Security-Policy of every console response: scripts,
// styles and connections from this origin only, no inline script or style,
// no framing, images from this origin or data: URLs (the QR code).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves GET and HEAD of /console/ (index.html) and /console/FILE.
func Handler() http.Handler {
	files := Files()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		name := strings.TrimPrefix(r.URL.Path, "/console/")
		if r.URL.Path == "/console" {
			http.Redirect(w, r, "/console/", http.StatusMovedPermanently)
			return
		}
		if name == "" {
			name = "index.html"
		}
		if strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
			http.NotFound(w, r)
			return
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("not found\n"))
			return
		}
		ct := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) {
		case ".mjs", ".js":
			ct = "text/javascript; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		// The assets change with the binary: revalidate, never serve a stale console.
		h.Set("Cache-Control", "no-cache")
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}
