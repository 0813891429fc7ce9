package api

import (
	"net/http"
	"strconv"
	"time"
)

// A node opens its API port before it has restored its model and caught up
// with the cluster, and holds what arrives until it serves (controller's
// startGate): a client sees its request answered later, never refused and
// never answered from a model that is behind. These are the answers given
// before the node serves: the probes at once, and the requests held too
// long (docs/operations.md, "What a starting node answers").

// IsProbe reports whether r asks for /livez or /readyz, which a starting
// node answers at once rather than holding.
func IsProbe(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Path == "/livez" || r.URL.Path == "/readyz")
}

// Starting answers r for a node that does not serve yet: /livez alive,
// /readyz unavailable, anything else 503 CLUSTER_UNAVAILABLE in the error
// envelope with a Retry-After of retryAfter (whole seconds, at least one).
func Starting(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
	switch {
	case IsProbe(r) && r.URL.Path == "/livez":
		writeProbe(w, http.StatusOK, map[string]string{"status": "ok"})
	case IsProbe(r):
		writeProbe(w, http.StatusServiceUnavailable, readiness{Status: "unavailable",
			Checks: map[string]string{"started": "the node is starting: restoring its model and catching up with the cluster"}})
	default:
		reqID := newRequestID()
		w.Header().Set("X-Request-Id", reqID)
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retryAfter.Round(time.Second)/time.Second))))
		writeAPIError(w, r, reqID, &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable,
			message: "the node is starting (catching up with the cluster): try again"})
	}
}
