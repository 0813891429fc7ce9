package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMetrics_CountRequestsAndShowRaftAndRecords(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ts.create("/identities", map[string]any{"name": "m1", "type": "User", "isAdmin": false})
	ts.do(http.MethodGet, mgmt("/identities/nope"), nil)
	rec := httptest.NewRecorder()
	ts.api.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`edgectl_http_requests_total{api="management",code="201",operation="createIdentity"} 1`,
		`edgectl_http_requests_total{api="management",code="404",operation="detailIdentity"} 1`,
		`edgectl_raft_is_leader 1`,
		`edgectl_raft_snapshots_writing 0`,
		`edgectl_raft_snapshots_written_total 0`,
		`edgectl_raft_forwarded_writes_total{how="ahead"} 0`,
		`edgectl_raft_forwarded_writes_total{how="already"} 0`,
		`edgectl_raft_forwarded_writes_total{how="waited"} 0`,
		`edgectl_raft_forwarded_answers_total{when="applied"} 0`,
		`edgectl_raft_forwarded_answers_total{when="commit"} 0`,
		`edgectl_raft_commit_answers_total{sent_by="commit"} 0`,
		`edgectl_raft_commit_answers_total{sent_by="handler"} 0`,
		`edgectl_records{kind="identities"} 2`,
		`edgectl_http_request_duration_seconds_bucket{api="management",operation="createIdentity"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
