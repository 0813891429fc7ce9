package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Cross-origin requests (CORS), for a console served from another origin,
// such as OpenZiti's ZAC: opt-in and exact. Only the origins an operator
// lists (--cors-origins) are answered with Access-Control-Allow-Origin; a
// preflight from any other origin is refused, and a plain request from one
// gets no CORS headers, so a browser keeps its answer from the page. No
// wildcard: the APIs take credentials (session tokens, client certificates).

// corsMethods and corsHeaders are what a preflight may ask for.
const (
	corsMethods = "GET, POST, PUT, PATCH, DELETE"
	corsHeaders = "content-type, zt-session, svc-session, authorization"
	// corsExpose are the answer headers a page may read: the session token
	// of an authentication answer.
	corsExpose = "zt-session, svc-session"
)

// ValidCORSOrigin checks an allowed origin as a browser sends it:
// scheme://host[:port], http or https, nothing after it.
func ValidCORSOrigin(o string) error {
	u, err := url.Parse(o)
	switch {
	case o == "*" || strings.Contains(o, "*"):
		return errors.New("a wildcard cannot be allowed: the APIs take credentials; list each origin")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("must be an origin as browsers send it: http(s)://host[:port]")
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return errors.New("an origin is only scheme://host[:port], with no path, query or user")
	case strings.ToLower(o) != o:
		return fmt.Errorf("browsers send origins in lower case: %s", strings.ToLower(o))
	}
	return nil
}

// withCORS answers preflights and sets the CORS headers of answers to the
// allowed origins, errors included.
func (s *Server) withCORS(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, o := range s.cfg.CORSOrigins {
		allowed[o] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if !allowed[origin] {
			if preflight {
				s.writeError(w, r, newRequestID(), forbidden(fmt.Sprintf("origin %s is not allowed to call this API from a browser (--cors-origins)", origin)))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		if preflight {
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExpose)
		next.ServeHTTP(w, r)
	})
}

// cleanPaths routes the APIs' /a//b and /a/b/ as /a/b, as OpenZiti's
// controller does: clients that join URL parts (ZAC among them) send both.
// "." and ".." segments are left as they are (no operation has them: 404),
// and so are the console's paths (its directory is /console/).
func cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && (strings.HasSuffix(p, "/") || strings.Contains(p, "//")) {
			if c := collapseSlashes(p); strings.HasPrefix(c, "/edge/") || strings.HasPrefix(c, "/fabric/") {
				u := *r.URL
				u.Path, u.RawPath = c, ""
				r2 := *r
				r2.URL = &u
				r = &r2
			}
		}
		next.ServeHTTP(w, r)
	})
}

// collapseSlashes turns each run of slashes into one and drops a trailing
// one (but the root's).
func collapseSlashes(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	out := b.String()
	if len(out) > 1 {
		out = strings.TrimSuffix(out, "/")
	}
	return out
}
