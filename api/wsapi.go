package api

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/fabricmgmt"
	"edgectl/dataplane/wire"
	"edgectl/fsm"

	"github.com/gorilla/websocket"
)

// The Fabric API's management channel, GET /fabric/v1/ws-api: what
// OpenZiti's `ziti fabric validate terminators|router-links|
// router-sdk-terminators|router-data-model` speak. The request is upgraded
// to a websocket (admins only, by the zt-session header); each binary
// message is one channel V2 frame (ctrlchan), with no hello. A validate
// request is answered with its response (success and the count of results,
// a reply to the request) and then that many result messages
// (dataplane/fabricmgmt/validate.go). Other content types are ignored, as
// OpenZiti's controller does; a frame that cannot be read closes the
// channel.

// wsLimits bound a management frame; the requests are a few bytes.
const (
	wsMaxHeaders = 64 << 10
	wsMaxBody    = 1 << 20
	wsWriteWait  = 15 * time.Second
)

var wsUpgrader = websocket.Upgrader{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 4096}

// hijacker lets the upgrade take the connection through the API's response
// wrappers (each unwraps to the one below).
type hijacker struct{ http.ResponseWriter }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

func (s *Server) fabricWebSocket(c *call) error {
	if !websocket.IsWebSocketUpgrade(c.r) {
		return invalidField("Upgrade", "the management channel is a websocket: ask for one (Connection: Upgrade, Upgrade: websocket), as ziti fabric validate does", c.r.Header.Get("Upgrade"))
	}
	actor := s.actorOf(c)
	conn, err := wsUpgrader.Upgrade(hijacker{c.w}, c.r, nil)
	c.wrote = true // the upgrade answered, or wrote its error
	if err != nil {
		return nil
	}
	c.tx = nil                                  // the channel outlives the request's snapshot
	_ = conn.NetConn().SetDeadline(time.Time{}) // the API's own request deadlines do not apply
	ctx, cancel := context.WithCancel(fsm.WithActor(context.Background(), actor))
	mc := &mgmtChannel{conn: conn, s: s, ctx: ctx, cancel: cancel, slots: make(chan struct{}, mgmtHandlers)}
	if !s.mgmt.add(mc) {
		mc.close()
		return nil
	}
	defer s.mgmt.remove(mc)
	mc.serve()
	return nil
}

// mgmtHandlers bounds the requests one channel has under way.
const mgmtHandlers = 4

// mgmtChannels are the open management channels, closed when the node
// shuts down (the HTTP server neither closes nor waits for them).
type mgmtChannels struct {
	mu     sync.Mutex
	open   map[*mgmtChannel]bool
	closed bool
}

func (cs *mgmtChannels) add(mc *mgmtChannel) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	if cs.open == nil {
		cs.open = map[*mgmtChannel]bool{}
	}
	cs.open[mc] = true
	return true
}

func (cs *mgmtChannels) remove(mc *mgmtChannel) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.open, mc)
}

// CloseManagementChannels closes the open management channels, and any
// opened later at once: the node is shutting down.
func (s *Server) CloseManagementChannels() {
	s.mgmt.mu.Lock()
	defer s.mgmt.mu.Unlock()
	s.mgmt.closed = true
	for mc := range s.mgmt.open {
		mc.close()
	}
}

// mgmtChannel is one management channel.
type mgmtChannel struct {
	conn   *websocket.Conn
	s      *Server
	ctx    context.Context // ends when the channel closes: routers are no longer asked
	cancel context.CancelFunc
	slots  chan struct{}

	mu  sync.Mutex // one writer at a time
	seq int32
	wg  sync.WaitGroup
}

func (mc *mgmtChannel) close() {
	mc.cancel()
	_ = mc.conn.Close()
}

func (mc *mgmtChannel) serve() {
	defer mc.wg.Wait()
	defer mc.close()
	mc.conn.SetReadLimit(wsMaxHeaders + wsMaxBody + 64)
	for {
		kind, data, err := mc.conn.ReadMessage()
		if err != nil {
			return
		}
		if kind != websocket.BinaryMessage {
			continue
		}
		msg, err := ctrlchan.ReadMessage(bytes.NewReader(data), wsMaxHeaders, wsMaxBody)
		if err != nil {
			mc.s.Log.Warn("a management channel frame could not be read; closing the channel", "error", err)
			return
		}
		select {
		case mc.slots <- struct{}{}:
		case <-mc.ctx.Done():
			return
		}
		mc.wg.Add(1)
		go func() {
			defer func() { <-mc.slots; mc.wg.Done() }()
			mc.handle(msg)
		}()
	}
}

// send writes msg as one binary message, numbered; false when the channel
// is gone.
func (mc *mgmtChannel) send(msg *ctrlchan.Message) bool {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mc.seq++
	msg.Sequence = mc.seq
	_ = mc.conn.SetWriteDeadline(time.Now().Add(wsWriteWait))
	return mc.conn.WriteMessage(websocket.BinaryMessage, msg.AppendFrame(nil)) == nil
}

// reply sends a reply to req.
func (mc *mgmtChannel) reply(req *ctrlchan.Message, ct int32, body []byte) bool {
	m := ctrlchan.NewMessage(ct, body)
	m.SetReplyTo(req)
	return mc.send(m)
}

// unservedValidations are the validate requests of OpenZiti's management
// channel that edgectl does not make; each is answered as failed, so that
// the CLI says so instead of waiting for an answer (their responses have
// the type after the request's and the same fields).
var unservedValidations = map[int32]string{
	10112: "identity-connection-statuses", 10115: "router-ert-terminators", 10118: "circuits",
}

func (mc *mgmtChannel) handle(req *ctrlchan.Message) {
	switch req.ContentType {
	case wire.PingType:
		m := ctrlchan.NewResult(true, "")
		m.SetReplyTo(req)
		mc.send(m)
	case wire.ValidateTerminatorsRequestType:
		serveValidation(mc, req, wire.ValidateTerminatorsResponseType, wire.ValidateTerminatorsResultType, wire.TerminatorDetail.Encode,
			func(r DataPlane, v wire.MgmtValidateRequest) (*fabricmgmt.Validation[wire.TerminatorDetail], error) {
				return r.ValidateTerminators(v.Filter, v.Fix)
			})
	case wire.ValidateRouterLinksRequestType:
		serveValidation(mc, req, wire.ValidateRouterLinksResponseType, wire.ValidateRouterLinksResultType, wire.RouterLinkDetails.Encode,
			func(r DataPlane, v wire.MgmtValidateRequest) (*fabricmgmt.Validation[wire.RouterLinkDetails], error) {
				return r.ValidateRouterLinks(v.Filter)
			})
	case wire.ValidateRouterSdkTerminatorsRequestType:
		serveValidation(mc, req, wire.ValidateRouterSdkTerminatorsResponseType, wire.ValidateRouterSdkTerminatorsResultType, wire.RouterSdkTerminatorsDetails.Encode,
			func(r DataPlane, v wire.MgmtValidateRequest) (*fabricmgmt.Validation[wire.RouterSdkTerminatorsDetails], error) {
				return r.ValidateRouterSdkTerminators(v.Filter)
			})
	case wire.ValidateRouterDataModelRequestType:
		serveValidation(mc, req, wire.ValidateRouterDataModelResponseType, wire.ValidateRouterDataModelResultType, wire.RouterDataModelDetails.Encode,
			func(r DataPlane, v wire.MgmtValidateRequest) (*fabricmgmt.Validation[wire.RouterDataModelDetails], error) {
				return r.ValidateRouterDataModels(v.Filter, v.ValidateCtrl, v.Fix)
			})
	case wire.StreamEventsRequestType:
		mc.streamEvents(req)
	default:
		if what, ok := unservedValidations[req.ContentType]; ok {
			mc.reply(req, req.ContentType+1, wire.MgmtValidateResponse(false, "edgectl does not validate "+what, 0))
			return
		}
		mc.s.Log.Debug("a management channel message of a type this node does not serve was ignored", "contentType", req.ContentType)
	}
}

// serveValidation starts the validation req asks for, answers req with its
// count (or why it did not start), then sends each result as it comes.
func serveValidation[T any](mc *mgmtChannel, req *ctrlchan.Message, respType, resultType int32, encode func(T) []byte,
	start func(DataPlane, wire.MgmtValidateRequest) (*fabricmgmt.Validation[T], error)) {
	r, err := wire.DecodeMgmtValidateRequest(req.ContentType, req.Body)
	var val *fabricmgmt.Validation[T]
	if err == nil && mc.s.DataPlane != nil {
		val, err = start(mc.s.DataPlane, r)
	}
	switch {
	case err != nil:
		mc.reply(req, respType, wire.MgmtValidateResponse(false, err.Error(), 0))
		return
	case val == nil: // no routers on this node (in tests): nothing to validate
		mc.reply(req, respType, wire.MgmtValidateResponse(true, "", 0))
		return
	}
	if !mc.reply(req, respType, wire.MgmtValidateResponse(true, "", uint64(val.Count))) {
		return
	}
	gone := false
	val.Run(mc.ctx, func(d T) {
		if !gone {
			gone = !mc.send(ctrlchan.NewMessage(resultType, encode(d)))
		}
	})
}
