package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"edgectl/api"
	"edgectl/cluster"
	"edgectl/fsm"
	"edgectl/store"
)

func TestControllers_ListsThisNodeWithItsAPIAddress(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, out := ts.do(http.MethodGet, "/edge/client/v1/controllers", nil)
		if st != 200 {
			t.Fatalf("controllers: %d %v", st, out)
		}
		data := out["data"].([]any)
		if len(data) != 1 {
			t.Fatalf("controllers %v", data)
		}
		c := data[0].(map[string]any)
		if c["isLeader"] != true || c["isVoter"] != true {
			t.Fatalf("controller %v", c)
		}
		if addrs, _ := c["apiAddresses"].(map[string]any); len(addrs) == 2 {
			url := addrs["edge-client"].([]any)[0].(map[string]any)["url"]
			if url != ts.base+"/edge/client/v1" {
				t.Fatalf("client url %v, want %s", url, ts.base+"/edge/client/v1")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node never registered its API address: %v", c)
		}
		time.Sleep(20 * time.Millisecond) // polling for the background registration, bounded by the deadline
	}
}

// TestControllers_AMemberIsListedWithItsAddressOnABehindNode: a node that
// knows of a new member but has not yet applied its controller record
// (written before the membership, as a join does) catches up before it
// lists it: the member is listed with its API address.
func TestControllers_AMemberIsListedWithItsAddressOnABehindNode(t *testing.T) {
	t.Parallel()
	leader := newTestServer(t)
	f := newFollowerServer(t, leader, api.Config{})
	now := time.Now().UTC()
	rec := &store.Controller{Base: store.Base{ID: "joiner", CreatedAt: now, UpdatedAt: now}, Named: store.Named{Name: "joiner"},
		APIURL: "https://127.0.0.1:4443", ClusterAddr: "127.0.0.1:6262", CommandVersion: fsm.CommandVersion}
	if _, err := leader.writer.Do(context.Background(), fsm.CmdControllerRegister, rec); err != nil {
		t.Fatal(err)
	}
	leader.local.mu.Lock()
	leader.local.others = []cluster.Member{{ID: "joiner", Address: rec.ClusterAddr, IsVoter: true}}
	leader.local.mu.Unlock()
	data, _ := f.list("/controllers")
	for _, it := range data {
		if c := it.(map[string]any); c["id"] == "joiner" {
			if addrs, _ := c["apiAddresses"].(map[string]any); len(addrs) != 2 {
				t.Fatalf("the new member is listed without its API address: %v", c)
			}
			return
		}
	}
	t.Fatalf("the new member is not listed: %v", data)
}

func TestSnapshot_TakeAndDownload(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	ts.create("/identities", map[string]any{"name": "in-the-snapshot", "type": "User", "isAdmin": false})
	st, out := ts.do(http.MethodPost, mgmt("/database/snapshot"), nil)
	if st != 200 {
		t.Fatalf("snapshot: %d %v", st, out)
	}
	d := out["data"].(map[string]any)
	id := d["id"].(string)
	if d["index"].(float64) < 1 || d["size"].(float64) <= 0 || d["path"] == "" {
		t.Fatalf("snapshot info %v", d)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.base+mgmt("/database/snapshots/"+id), nil)
	req.Header.Set("svc-session", ts.token)
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || int(d["size"].(float64)) != len(body) || !bytes.Contains(body, []byte("in-the-snapshot")) {
		t.Fatalf("download: %d, %d bytes", resp.StatusCode, len(body))
	}
	st, out = ts.do(http.MethodGet, mgmt("/database/snapshots/..%2F..%2Fnode.json"), nil)
	wantError(t, st, out, 404, "NOT_FOUND", "")
}

func TestIntegrity_ScanReportsAConsistentModelClean(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	if st, out := ts.do(http.MethodPost, mgmt("/database/check-data-integrity"), nil); st != http.StatusAccepted {
		t.Fatalf("start: %d %v", st, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := ts.get("/database/data-integrity-results")
		if r["inProgress"] == false && r["endTime"] != nil {
			if len(r["results"].([]any)) != 0 || r["error"] != nil {
				t.Fatalf("findings on a fresh model: %v", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scan never finished: %v", r)
		}
		time.Sleep(10 * time.Millisecond) // polling the background run, bounded by the deadline
	}
	if st, out := ts.do(http.MethodPost, mgmt("/database/fix-data-integrity"), nil); st != http.StatusAccepted {
		t.Fatalf("fix: %d %v", st, out)
	}
}

// GET /fabric/v1/cluster/list-members (`ziti ops cluster list`, and ZAC's
// look for the other controllers) answers OpenZiti's
// ClusterMemberListResponse: each member's id, cluster address as tls:
// HOST:PORT, voter, leader, version, connected and readOnly. Admins only.
func TestClusterListMembers_AsOpenZitiAnswersIt(t *testing.T) {
	t.Parallel()
	ts := newNodeServer(t)
	st, out := ts.do(http.MethodGet, "/edge/management/v1/version", nil)
	version, _ := dig(out, "data", "version").(string)
	if st != http.StatusOK || version == "" {
		t.Fatalf("version: %d %v", st, out)
	}
	st, out = ts.do(http.MethodGet, "/edge/management/v1/cluster/members", nil)
	members, _ := out["data"].([]any)
	if st != http.StatusOK || len(members) != 1 {
		t.Fatalf("cluster members: %d %v", st, out)
	}
	id, addr := dig(members[0], "id"), dig(members[0], "address").(string)
	st, out = ts.do(http.MethodGet, "/fabric/v1/cluster/list-members", nil)
	want := []any{map[string]any{"id": id, "address": "tls:" + addr, "voter": true, "leader": true, "version": version,
		"connected": true, "readOnly": false}}
	if st != http.StatusOK || !reflect.DeepEqual(out["data"], want) {
		t.Fatalf("list-members: %d %v, want data %v", st, out, want)
	}
	st, out = ts.doAs("", http.MethodGet, "/fabric/v1/cluster/list-members", nil)
	wantError(t, st, out, http.StatusUnauthorized, "UNAUTHORIZED", "")
}
