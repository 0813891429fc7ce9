package ziti

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"

	"github.com/openziti/channel/v4"
	"github.com/openziti/channel/v4/latency"
	"github.com/openziti/identity"
	"github.com/openziti/transport/v2"
	"github.com/openziti/transport/v2/tcp"
	"github.com/openziti/ziti/common/capabilities"
	"github.com/openziti/ziti/common/pb/edge_ctrl_pb"
	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) {
	// OpenZiti's channel logs (through logrus) every dropped message and retry
	// at warning level; keep the test output to errors.
	logrus.SetLevel(logrus.ErrorLevel)
	transport.AddAddressParser(tcp.AddressParser{})
	os.Exit(m.Run())
}

// Content types of the test's own requests and replies.
const (
	typeRouterRequest = 30001 // OpenZiti -> ctrlchan
	typeCtrlReply     = 30002
	typeCtrlRequest   = 30003 // ctrlchan -> OpenZiti
	typeRouterReply   = 30004
)

const (
	ctrlID       = "ctrl-1"
	ctrlVersion  = "v1.7.2|rev|date|linux|amd64"
	routerToken  = "router-1"
	routerVerHdr = "v1.7.2|router-rev|2025-01-01|linux|amd64"
	waitLimit    = 10 * time.Second
)

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, waitLimit)
		}
		<-tick.C
	}
}

// receive waits for one value from c.
func receive[T any](t *testing.T, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("%s: nothing within %s", what, waitLimit)
		var zero T
		return zero
	}
}

// capabilitiesHeader is the controller's capabilities header as OpenZiti
// controllers write it: a big.Int's bytes with one bit per capability.
func capabilitiesHeader(caps ...int) []byte {
	mask := new(big.Int)
	for _, c := range caps {
		mask.SetBit(mask, c, 1)
	}
	return mask.Bytes()
}

// accepted is what the test's ctrlchan listener saw of one connection.
type accepted struct {
	hello *ctrlchan.Message
	ch    *ctrlchan.Channel
	err   error
}

// listenCtrl listens on 127.0.0.1 and hands every connection's hello to
// handle, which answers it (Accept or Refuse).
func listenCtrl(t *testing.T, handle func(conn net.Conn, hello *ctrlchan.Message) accepted) (addr string, results <-chan accepted) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan accepted, 8)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			hello, err := ctrlchan.ReadHello(conn, time.Now().Add(waitLimit))
			if err != nil {
				_ = conn.Close()
				out <- accepted{err: err}
				continue
			}
			select {
			case out <- handle(conn, hello):
			default:
			}
		}
	}()
	return ln.Addr().String(), out
}

// dialZiti dials addr with OpenZiti's classic dialer, as a router dials its controller.
func dialZiti(t *testing.T, addr string, bind channel.BindHandler) (channel.Channel, error) {
	t.Helper()
	ep, err := transport.ParseAddress("tcp:" + addr)
	if err != nil {
		t.Fatalf("transport.ParseAddress: %v", err)
	}
	dialer := channel.NewClassicDialer(channel.DialerConfig{
		Identity: &identity.TokenId{Token: routerToken},
		Endpoint: ep,
		Headers: map[int32][]byte{
			channel.HelloVersionHeader: []byte(routerVerHdr),
			wire.CapabilitiesHeader:    capabilitiesHeader(1),
		},
	})
	opts := channel.DefaultOptions()
	opts.ConnectTimeout = waitLimit
	opts.OutQueueSize = 64
	opts.WriteTimeout = waitLimit
	ch, err := channel.NewChannel("ctrl", dialer, bind, opts)
	if err == nil {
		t.Cleanup(func() { _ = ch.Close() })
	}
	return ch, err
}

// heartbeats counts OpenZiti's heartbeat callbacks.
type heartbeats struct {
	tx, rx, respTx, respRx atomic.Int64
	lastRespRx             atomic.Int64 // the timestamp of OpenZiti's heartbeat that came back
}

func (h *heartbeats) HeartbeatTx(int64)     { h.tx.Add(1) }
func (h *heartbeats) HeartbeatRx(int64)     { h.rx.Add(1) }
func (h *heartbeats) HeartbeatRespTx(int64) { h.respTx.Add(1) }
func (h *heartbeats) HeartbeatRespRx(ts int64) {
	h.lastRespRx.Store(ts)
	h.respRx.Add(1)
}
func (h *heartbeats) CheckHeartBeat() {}

func TestChannel_HelloAndTrafficWithOpenZiti(t *testing.T) {
	start := time.Now()

	// ctrlchan side: the controller.
	fromRouter := make(chan *ctrlchan.Message, 4)
	handlers := map[int32]ctrlchan.Handler{
		typeRouterRequest: func(ch *ctrlchan.Channel, m *ctrlchan.Message) {
			fromRouter <- m
			r := &ctrlchan.Message{ContentType: typeCtrlReply, Headers: ctrlchan.Headers{}, Body: append([]byte("ctrl got "), m.Body...)}
			r.Headers.PutString(1100, "from-ctrl")
			if err := ch.Reply(m, r); err != nil {
				t.Errorf("ctrlchan Reply: %v", err)
			}
		},
	}
	ctrlHeaders := ctrlchan.Headers{}
	ctrlHeaders.PutString(ctrlchan.HeaderID, ctrlID)
	ctrlHeaders.PutString(ctrlchan.HeaderHelloVersion, ctrlVersion)
	ctrlHeaders[wire.CapabilitiesHeader] = capabilitiesHeader(capabilities.RouterDataModel)
	opts := ctrlchan.Options{HeartbeatInterval: 50 * time.Millisecond, CheckInterval: 10 * time.Millisecond, UnresponsiveTimeout: waitLimit}
	addr, results := listenCtrl(t, func(conn net.Conn, hello *ctrlchan.Message) accepted {
		ch, err := ctrlchan.Accept(conn, hello, ctrlHeaders, opts, handlers, nil)
		return accepted{hello: hello, ch: ch, err: err}
	})

	// OpenZiti side: the router.
	hb := &heartbeats{}
	var probeRoundTrips atomic.Int64
	serverHellos := make(chan *edge_ctrl_pb.ServerHello, 1)
	fromCtrl := make(chan *channel.Message, 4)
	bind := channel.BindHandlerF(func(b channel.Binding) error {
		b.AddReceiveHandlerF(typeCtrlRequest, func(m *channel.Message, ch channel.Channel) {
			fromCtrl <- m
			r := channel.NewMessage(typeRouterReply, append([]byte("router got "), m.Body...))
			r.PutStringHeader(1101, "from-router")
			r.ReplyTo(m)
			if err := r.WithTimeout(waitLimit).Send(ch); err != nil {
				t.Errorf("OpenZiti reply: %v", err)
			}
		})
		// As OpenZiti's router answers the controller's edge ServerHello (router/state/hello.go).
		b.AddReceiveHandlerF(int32(edge_ctrl_pb.ContentType_ServerHelloType), func(m *channel.Message, ch channel.Channel) {
			sh := &edge_ctrl_pb.ServerHello{}
			if err := proto.Unmarshal(m.Body, sh); err != nil {
				t.Errorf("OpenZiti cannot read ctrlchan's ServerHello: %v", err)
				return
			}
			serverHellos <- sh
			body, err := proto.Marshal(&edge_ctrl_pb.ClientHello{
				Version: "v1.7.2", Hostname: "router.example", Protocols: []string{"tls"}, ProtocolPorts: []string{"3022"},
				Listeners: []*edge_ctrl_pb.Listener{{
					Address:   &edge_ctrl_pb.Address{Value: "tls:0.0.0.0:3022", Protocol: "tls", Hostname: "0.0.0.0", Port: 3022},
					Advertise: &edge_ctrl_pb.Address{Value: "tls:router.example:3022", Protocol: "tls", Hostname: "router.example", Port: 3022},
				}},
				Data: map[string]string{},
			})
			if err != nil {
				t.Error(err)
				return
			}
			out := channel.NewMessage(int32(edge_ctrl_pb.ContentType_ClientHelloType), body)
			if ok, found := m.GetBoolHeader(int32(edge_ctrl_pb.Header_RouterDataModel)); found && ok {
				out.PutBoolHeader(int32(edge_ctrl_pb.Header_RouterDataModel), true)
				out.PutUint64Header(int32(edge_ctrl_pb.Header_RouterDataModelIndex), 42)
			}
			go func() {
				if err := out.ReplyTo(m).WithTimeout(waitLimit).Send(ch); err != nil {
					t.Errorf("OpenZiti client hello: %v", err)
				}
			}()
		})
		channel.ConfigureHeartbeat(b, 50*time.Millisecond, 10*time.Millisecond, hb)
		latency.AddLatencyProbe(b.GetChannel(), b, 20*time.Millisecond, 0, func(kind latency.Type, d time.Duration) {
			if kind == latency.RoundTripType && d > 0 {
				probeRoundTrips.Add(1)
			}
		})
		return nil
	})

	zch, err := dialZiti(t, addr, bind)
	if err != nil {
		t.Fatalf("OpenZiti could not dial ctrlchan: %v", err)
	}
	acc := receive(t, "ctrlchan accept", results)
	if acc.err != nil {
		t.Fatalf("ctrlchan accept: %v", acc.err)
	}
	cch := acc.ch
	t.Cleanup(cch.Close)

	t.Run("hello", func(t *testing.T) {
		h := acc.hello
		if h.ContentType != ctrlchan.ContentHello || h.Sequence != ctrlchan.HelloSequence {
			t.Errorf("hello content type %d sequence %d", h.ContentType, h.Sequence)
		}
		if string(h.Body) != routerToken {
			t.Errorf("hello body %q, want the router's token %q", h.Body, routerToken)
		}
		if v, _ := h.Headers.String(ctrlchan.HeaderHelloVersion); v != routerVerHdr {
			t.Errorf("hello version header %q, want %q", v, routerVerHdr)
		}
		if v := h.Headers[wire.CapabilitiesHeader]; !bytes.Equal(v, capabilitiesHeader(1)) {
			t.Errorf("hello capabilities header %x", v)
		}
		if zch.Id() != ctrlID {
			t.Errorf("OpenZiti channel Id() = %q, want %q", zch.Id(), ctrlID)
		}
		zh := zch.Underlay().Headers()
		if v := string(zh[channel.HelloVersionHeader]); v != ctrlVersion {
			t.Errorf("OpenZiti underlay version header %q, want %q", v, ctrlVersion)
		}
		if v := zh[wire.CapabilitiesHeader]; !bytes.Equal(v, []byte{0x10}) {
			t.Errorf("OpenZiti underlay capabilities header %x, want 10", v)
		}
		if !capabilities.IsCapable(zch, capabilities.RouterDataModel) {
			t.Error("OpenZiti's capabilities.IsCapable(RouterDataModel) is false")
		}
		for _, c := range []int{capabilities.ControllerCreateTerminatorV2, capabilities.ControllerSingleRouterLinkSource, capabilities.ControllerCreateCircuitV2} {
			if capabilities.IsCapable(zch, c) {
				t.Errorf("OpenZiti sees capability %d, which ctrlchan did not announce", c)
			}
		}
		if ok, _ := channel.Headers(zh).GetBoolHeader(channel.ResultSuccessHeader); !ok {
			t.Error("the hello result OpenZiti kept has no success header")
		}
	})

	t.Run("OpenZiti request, ctrlchan reply", func(t *testing.T) {
		req := channel.NewMessage(typeRouterRequest, []byte("ping-pong"))
		req.Headers[130] = []byte("trace-130")
		req.PutUint64Header(1200, 7)
		reply, err := req.WithTimeout(waitLimit).SendForReply(zch)
		if err != nil {
			t.Fatalf("SendForReply: %v", err)
		}
		got := receive(t, "ctrlchan handler", fromRouter)
		if got.Sequence != req.Sequence() || string(got.Body) != "ping-pong" || string(got.Headers[130]) != "trace-130" {
			t.Errorf("ctrlchan received sequence %d body %q header 130 %q; OpenZiti sent sequence %d", got.Sequence, got.Body, got.Headers[130], req.Sequence())
		}
		if v, ok := got.Headers.Uint64(1200); !ok || v != 7 {
			t.Errorf("ctrlchan read uint64 header 1200 as %d, %v", v, ok)
		}
		if reply.ContentType != typeCtrlReply || string(reply.Body) != "ctrl got ping-pong" {
			t.Errorf("OpenZiti got reply type %d body %q", reply.ContentType, reply.Body)
		}
		if !reply.IsReplyingTo(req.Sequence()) {
			t.Errorf("reply is for %d, request was %d", reply.ReplyFor(), req.Sequence())
		}
		if v, _ := reply.GetStringHeader(1100); v != "from-ctrl" {
			t.Errorf("reply header 1100 %q", v)
		}
		if v := string(reply.Headers[130]); v != "trace-130" {
			t.Errorf("reflected header 130 came back as %q", v)
		}
		if _, ok := reply.Headers[1200]; ok {
			t.Error("header 1200 (not in 128-255) was reflected")
		}
	})

	t.Run("ctrlchan request, OpenZiti reply", func(t *testing.T) {
		req := ctrlchan.NewMessage(typeCtrlRequest, []byte("inspect"))
		req.Headers[200] = []byte("trace-200")
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		reply, err := cch.Request(ctx, req)
		if err != nil {
			t.Fatalf("ctrlchan Request: %v", err)
		}
		got := receive(t, "OpenZiti handler", fromCtrl)
		if got.Sequence() != req.Sequence || string(got.Body) != "inspect" {
			t.Errorf("OpenZiti received sequence %d body %q; ctrlchan sent %d", got.Sequence(), got.Body, req.Sequence)
		}
		if reply.ContentType != typeRouterReply || string(reply.Body) != "router got inspect" {
			t.Errorf("ctrlchan got reply type %d body %q", reply.ContentType, reply.Body)
		}
		if rf, ok := reply.ReplyFor(); !ok || rf != req.Sequence {
			t.Errorf("reply is for %d (%v), request was %d", rf, ok, req.Sequence)
		}
		if v, _ := reply.Headers.String(1101); v != "from-router" {
			t.Errorf("reply header 1101 %q", v)
		}
		if v := string(reply.Headers[200]); v != "trace-200" {
			t.Errorf("reflected header 200 came back as %q", v)
		}
	})

	t.Run("edge hello: ServerHello and ClientHello", func(t *testing.T) {
		m := ctrlchan.NewMessage(wire.ServerHelloType, wire.ServerHello("v0.1.0", map[string]string{"role": "controller"}))
		m.Headers.PutBool(wire.RouterDataModelHeader, true)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		reply, err := cch.Request(ctx, m)
		if err != nil {
			t.Fatalf("ctrlchan Request(ServerHello): %v", err)
		}
		sh := receive(t, "OpenZiti ServerHello", serverHellos)
		if want := (&edge_ctrl_pb.ServerHello{Version: "v0.1.0", Data: map[string]string{"role": "controller"}}); !proto.Equal(sh, want) {
			t.Errorf("OpenZiti read ServerHello %v, want %v", sh, want)
		}
		if reply.ContentType != wire.ClientHelloType {
			t.Fatalf("reply content type %d", reply.ContentType)
		}
		ch, err := wire.DecodeClientHello(reply.Body)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Version != "v1.7.2" || len(ch.Listeners) != 1 || ch.Listeners[0].Advertise.Port != 3022 {
			t.Errorf("client hello %+v", ch)
		}
		if v, ok := reply.Headers.Bool(wire.RouterDataModelHeader); !ok || !v {
			t.Errorf("router data model header %v, %v", v, ok)
		}
		if v, ok := reply.Headers.Uint64(wire.RouterDataModelIndexHeader); !ok || v != 42 {
			t.Errorf("router data model index header %d, %v", v, ok)
		}
	})

	t.Run("OpenZiti ping", func(t *testing.T) {
		ping := channel.NewMessage(channel.ContentTypePingType, []byte("are you there"))
		reply, err := ping.WithTimeout(waitLimit).SendForReply(zch)
		if err != nil {
			t.Fatalf("ping: %v", err)
		}
		if reply.ContentType != channel.ContentTypeResultType || !reply.IsReplyingTo(ping.Sequence()) {
			t.Errorf("ping reply type %d for %d", reply.ContentType, reply.ReplyFor())
		}
		if r := channel.UnmarshalResult(reply); !r.Success {
			t.Errorf("ping result %+v", r)
		}
	})

	t.Run("ctrlchan ping", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		reply, err := cch.Request(ctx, ctrlchan.NewMessage(ctrlchan.ContentPing, nil))
		if err != nil {
			t.Fatalf("ping: %v", err)
		}
		if ok, _ := reply.Result(); reply.ContentType != ctrlchan.ContentResult || !ok {
			t.Errorf("OpenZiti answered ping with type %d success %v", reply.ContentType, ok)
		}
	})

	t.Run("OpenZiti latency probe", func(t *testing.T) {
		// As latency.ProbeLatencyConfigurable does: a latency request with the
		// send time in header 128, answered with the header reflected.
		const probeTime = 128
		sent := uint64(time.Now().UnixNano())
		probe := channel.NewMessage(channel.ContentTypeLatencyType, nil)
		probe.PutUint64Header(probeTime, sent)
		reply, err := probe.WithPriority(channel.High).WithTimeout(waitLimit).SendForReply(zch)
		if err != nil {
			t.Fatalf("latency probe: %v", err)
		}
		if reply.ContentType != channel.ContentTypeLatencyResponseType {
			t.Errorf("latency reply type %d", reply.ContentType)
		}
		if v, ok := reply.GetUint64Header(probeTime); !ok || v != sent {
			t.Errorf("probe time came back as %d, %v; sent %d", v, ok, sent)
		}
		// latency.AddLatencyProbe's round trips (answered outside any waiter).
		eventually(t, "OpenZiti latency probe round trip", func() bool { return probeRoundTrips.Load() > 0 })
	})

	t.Run("heartbeats both ways", func(t *testing.T) {
		eventually(t, "ctrlchan sees an answered heartbeat (Latency() > 0)", func() bool { return cch.Latency() > 0 })
		eventually(t, "OpenZiti receives ctrlchan's heartbeats", func() bool { return hb.rx.Load() > 0 })
		eventually(t, "OpenZiti sees its heartbeats answered (HeartbeatRespRx)", func() bool { return hb.respRx.Load() > 0 })
		if ts := hb.lastRespRx.Load(); ts < start.UnixNano() || ts > time.Now().UnixNano() {
			t.Errorf("OpenZiti's answered heartbeat carries %d, not one of its own send times (since %d)", ts, start.UnixNano())
		}
		if l := cch.Latency(); l > waitLimit {
			t.Errorf("ctrlchan latency %s", l)
		}
	})

	t.Run("both sides still open", func(t *testing.T) {
		if zch.IsClosed() {
			t.Error("OpenZiti closed the channel")
		}
		select {
		case <-cch.Done():
			t.Errorf("ctrlchan closed the channel: %v", cch.Err())
		default:
		}
	})

	t.Run("OpenZiti closes, ctrlchan notices", func(t *testing.T) {
		_ = zch.Close()
		receive(t, "ctrlchan Done", cch.Done())
		if cch.Err() == nil {
			t.Error("ctrlchan closed without a reason")
		}
	})
}

func TestChannel_RefusedHello(t *testing.T) {
	const reason = "router router-1 is not enrolled"
	addr, results := listenCtrl(t, func(conn net.Conn, hello *ctrlchan.Message) accepted {
		ctrlchan.Refuse(conn, hello, reason)
		return accepted{hello: hello}
	})
	ch, err := dialZiti(t, addr, nil)
	if err == nil {
		t.Fatalf("OpenZiti dialed a channel (%s) that ctrlchan refused", ch.Id())
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("OpenZiti's dial error %q does not carry the reason %q", err, reason)
	}
	acc := receive(t, "ctrlchan hello", results)
	if string(acc.hello.Body) != routerToken {
		t.Errorf("refused hello body %q", acc.hello.Body)
	}
}

// A channel that ctrlchan closes: OpenZiti's side sees it closed.
func TestChannel_CtrlchanCloses(t *testing.T) {
	addr, results := listenCtrl(t, func(conn net.Conn, hello *ctrlchan.Message) accepted {
		h := ctrlchan.Headers{}
		h.PutString(ctrlchan.HeaderID, ctrlID)
		ch, err := ctrlchan.Accept(conn, hello, h, ctrlchan.Options{}, nil, nil)
		return accepted{hello: hello, ch: ch, err: err}
	})
	closed := make(chan struct{})
	zch, err := dialZiti(t, addr, channel.BindHandlerF(func(b channel.Binding) error {
		b.AddCloseHandler(channel.CloseHandlerF(func(channel.Channel) { close(closed) }))
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	acc := receive(t, "accept", results)
	if acc.err != nil {
		t.Fatal(acc.err)
	}
	acc.ch.CloseWith(errors.New("test over"))
	receive(t, "OpenZiti close handler", closed)
	if !zch.IsClosed() {
		t.Error("OpenZiti channel not closed")
	}
	if err := acc.ch.Send(ctrlchan.NewMessage(typeCtrlRequest, nil)); !errors.Is(err, ctrlchan.ErrClosed) {
		t.Errorf("Send on a closed ctrlchan channel: %v", err)
	}
}
