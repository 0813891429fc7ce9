package api_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/fabricmgmt"
	"edgectl/dataplane/wire"

	"github.com/gorilla/websocket"
	"google.golang.org/protobuf/encoding/protowire"
)

// validatingRouters stands for this node's routers in the management
// channel's tests: two router data model results, and a filter "bad" that
// does not compile.
type validatingRouters struct{ linkRouters }

func (*validatingRouters) ValidateTerminators(f string, fix bool) (*fabricmgmt.Validation[wire.TerminatorDetail], error) {
	if f == "bad" {
		return nil, errors.New("bad filter")
	}
	return &fabricmgmt.Validation[wire.TerminatorDetail]{Count: 1, Run: func(_ context.Context, emit func(wire.TerminatorDetail)) {
		emit(wire.TerminatorDetail{TerminatorID: "t1", Fixed: fix})
	}}, nil
}

func (*validatingRouters) ValidateRouterLinks(string) (*fabricmgmt.Validation[wire.RouterLinkDetails], error) {
	return &fabricmgmt.Validation[wire.RouterLinkDetails]{}, nil
}

func (*validatingRouters) ValidateRouterDataModels(_ string, ctrl, _ bool) (*fabricmgmt.Validation[wire.RouterDataModelDetails], error) {
	return &fabricmgmt.Validation[wire.RouterDataModelDetails]{Count: 2, Run: func(_ context.Context, emit func(wire.RouterDataModelDetails)) {
		emit(wire.RouterDataModelDetails{ComponentType: "controller", ValidateSuccess: ctrl})
		emit(wire.RouterDataModelDetails{ComponentType: "router", ComponentID: "r1"})
	}}, nil
}

// mgmtDial opens the Fabric API's management channel as `ziti fabric
// validate` does.
func mgmtDial(t *testing.T, ts *testServer, token string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("zt-session", token)
	}
	conn, resp, err := websocket.DefaultDialer.Dial(strings.Replace(ts.base, "http", "ws", 1)+"/fabric/v1/ws-api", h)
	if err == nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

func mgmtSend(t *testing.T, conn *websocket.Conn, m *ctrlchan.Message) {
	t.Helper()
	if err := conn.WriteMessage(websocket.BinaryMessage, m.AppendFrame(nil)); err != nil {
		t.Fatal(err)
	}
}

func mgmtRead(t *testing.T, conn *websocket.Conn) *ctrlchan.Message {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	kind, data, err := conn.ReadMessage()
	if err != nil || kind != websocket.BinaryMessage {
		t.Fatalf("reading the channel: %v (message type %d)", err, kind)
	}
	m, err := ctrlchan.ReadMessage(bytes.NewReader(data), 1<<20, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// varints are a message's varint fields and strings its bytes fields, by number.
func fieldsOf(t *testing.T, b []byte) (map[protowire.Number]uint64, map[protowire.Number]string) {
	t.Helper()
	vs, ss := map[protowire.Number]uint64{}, map[protowire.Number]string{}
	if err := wire.Fields(b, func(n protowire.Number, v uint64, raw []byte) error {
		if raw != nil {
			ss[n] = string(raw)
		} else {
			vs[n] = v
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return vs, ss
}

// The management channel: admins only and only as a websocket; a validate
// request is answered first (a reply to it, with the count), then with as
// many results; a validation that cannot start is a failed answer saying
// why, one edgectl does not make too; a ping is answered; other content
// types are ignored; a frame that is not a channel frame closes the channel.
func TestManagementChannel(t *testing.T) {
	t.Parallel()
	ts := newTestServerOf(t, nil, &validatingRouters{})

	st, out := ts.do(http.MethodGet, "/fabric/v1/ws-api", nil)
	wantError(t, st, out, http.StatusBadRequest, "COULD_NOT_VALIDATE", "Upgrade")
	if _, resp, err := mgmtDial(t, ts, ""); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a session: %v %v", resp, err)
	}

	conn, _, err := mgmtDial(t, ts, ts.token)
	if err != nil {
		t.Fatal(err)
	}
	req := ctrlchan.NewMessage(wire.ValidateRouterDataModelRequestType, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1))
	req.Sequence = 7
	mgmtSend(t, conn, req)
	resp := mgmtRead(t, conn)
	if rf, ok := resp.ReplyFor(); resp.ContentType != wire.ValidateRouterDataModelResponseType || !ok || rf != 7 {
		t.Fatalf("the answer: type %d, reply for %d %v", resp.ContentType, rf, ok)
	}
	if vs, _ := fieldsOf(t, resp.Body); vs[1] != 1 || vs[3] != 2 {
		t.Fatalf("the answer: %v, want success and a count of 2", vs)
	}
	for i, want := range []string{"controller", "router"} {
		m := mgmtRead(t, conn)
		vs, ss := fieldsOf(t, m.Body)
		if m.ContentType != wire.ValidateRouterDataModelResultType || ss[1] != want || (want == "controller" && vs[4] != 1) {
			t.Fatalf("result %d: type %d %v %v", i, m.ContentType, vs, ss)
		}
	}

	mgmtSend(t, conn, ctrlchan.NewMessage(55555, nil)) // not served: ignored
	bad := ctrlchan.NewMessage(wire.ValidateTerminatorsRequestType, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "bad"))
	bad.Sequence = 9
	mgmtSend(t, conn, bad)
	resp = mgmtRead(t, conn)
	if vs, ss := fieldsOf(t, resp.Body); resp.ContentType != wire.ValidateTerminatorsResponseType || vs[1] != 0 || !strings.Contains(ss[2], "bad filter") {
		t.Fatalf("a bad filter: type %d %v %v", resp.ContentType, vs, ss)
	}
	// A validation edgectl does not make is answered as failed, naming it
	// (ziti fabric validate circuits).
	circuits := ctrlchan.NewMessage(10118, nil)
	circuits.Sequence = 11
	mgmtSend(t, conn, circuits)
	resp = mgmtRead(t, conn)
	if vs, ss := fieldsOf(t, resp.Body); resp.ContentType != 10119 || vs[1] != 0 || !strings.Contains(ss[2], "circuits") {
		t.Fatalf("an unserved validation: type %d %v %v", resp.ContentType, vs, ss)
	}
	ping := ctrlchan.NewMessage(wire.PingType, nil)
	ping.Sequence = 10
	mgmtSend(t, conn, ping)
	if resp = mgmtRead(t, conn); resp.ContentType != ctrlchan.ContentResult {
		t.Fatalf("ping answered with type %d", resp.ContentType)
	}

	if err := conn.WriteMessage(websocket.BinaryMessage, []byte("not a frame")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := conn.ReadMessage(); err == nil {
		t.Fatal("the channel stayed open after a frame that is not one")
	}
}
