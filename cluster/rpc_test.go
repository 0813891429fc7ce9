package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRPCRoundTrip(t *testing.T) {
	a, b := mustNewNode(t), mustNewNode(t)
	b.RegisterRPC("test.echo", func(ctx context.Context, peer *x509.Certificate, req []byte) ([]byte, error) {
		return []byte(peer.Subject.CommonName + ":" + string(req)), nil
	})
	b.RegisterRPC("test.fail", func(ctx context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		return nil, fmt.Errorf("handler says: %w", ErrNotLeader)
	})
	b.RegisterRPC("test.deadline", func(ctx context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > 5*time.Second {
			return nil, errors.New("deadline not propagated")
		}
		<-ctx.Done() // the caller's deadline ends the handler too
		return nil, ctx.Err()
	})
	ctx := ctxTimeout(t, 10*time.Second)

	out, err := a.CallRPC(ctx, b.Addr(), "test.echo", []byte("hi"))
	if err != nil || string(out) != a.ID()+":hi" {
		t.Fatalf("echo: %q %v", out, err)
	}

	// Many concurrent calls share one connection and get their own answers.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf("m%d-%s", i, strings.Repeat("x", i*100))
			out, err := a.CallRPC(ctx, b.Addr(), "test.echo", []byte(msg))
			if err == nil && string(out) != a.ID()+":"+msg {
				err = fmt.Errorf("call %d got %.20q", i, out)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	_, err = a.CallRPC(ctx, b.Addr(), "test.fail", nil)
	var re *RemoteError
	if !errors.Is(err, ErrNotLeader) || !errors.As(err, &re) || !strings.Contains(re.Message, "handler says") {
		t.Fatalf("error mapping: %v", err)
	}
	if _, err := a.CallRPC(ctx, b.Addr(), "test.nope", nil); !errors.Is(err, ErrUnknownRPC) {
		t.Fatalf("unknown rpc: %v", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := a.CallRPC(dctx, b.Addr(), "test.deadline", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	// The connection survives all of the above.
	if out, err := a.CallRPC(ctx, b.Addr(), "test.echo", []byte("again")); err != nil || string(out) != a.ID()+":again" {
		t.Fatalf("echo again: %q %v", out, err)
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("reserved name did not panic")
			}
		}()
		b.RegisterRPC("cluster.apply", func(context.Context, *x509.Certificate, []byte) ([]byte, error) { return nil, nil })
	}()

	// After shutdown the callee refuses, the caller reports ErrShutdown.
	b.stop(t)
	if _, err := a.CallRPC(ctx, b.Addr(), "test.echo", nil); err == nil {
		t.Fatal("call to a stopped node succeeded")
	}
	a.stop(t)
	if _, err := a.CallRPC(ctx, b.Addr(), "test.echo", nil); !errors.Is(err, ErrShutdown) {
		t.Fatalf("call from stopped node: %v", err)
	}
}

func TestMutualTLSRefusesForeignCA(t *testing.T) {
	n := mustNewNode(t)
	n.RegisterRPC("test.echo", func(ctx context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		return req, nil
	})
	ctx := ctxTimeout(t, 10*time.Second)

	// A node whose certificate comes from another CA (and which trusts
	// only that CA) can neither call nor be called.
	foreign := newTestPKI(t, "foreign CA")
	x := mustNewNode(t, func(c *Config) { c.TLS = foreign.tlsConfig(t, c.NodeID) })
	x.RegisterRPC("test.echo", func(ctx context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		return req, nil
	})
	if _, err := x.CallRPC(ctx, n.Addr(), "test.echo", []byte("hi")); err == nil {
		t.Fatal("foreign node was served")
	}
	if _, err := n.CallRPC(ctx, x.Addr(), "test.echo", []byte("hi")); err == nil {
		t.Fatal("node accepted a server certificate from a foreign CA")
	}

	// A client that trusts our CA but presents a foreign certificate, or
	// none at all, is refused too (raft byte and RPC byte alike).
	for name, certs := range map[string][]tls.Certificate{
		"foreign cert": foreign.tlsConfig(t, "intruder").Certificates,
		"no cert":      nil,
	} {
		for _, proto := range []byte{protoRaft, protoRPC} {
			cfg := &tls.Config{RootCAs: clusterPKI(t).pool, ServerName: "127.0.0.1"}
			if certs != nil {
				// Force the foreign certificate out even though the server
				// does not list its CA as acceptable.
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
					return &certs[0], nil
				}
			}
			c, err := tls.Dial("tcp", n.Addr(), cfg)
			if err != nil {
				continue // refused during the handshake: fine
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			// A well-formed echo request: a served connection would answer.
			c.Write(append([]byte{proto}, requestFrame(1, "test.echo", []byte("hi"))...))
			data, err := io.ReadAll(c)
			if len(data) != 0 {
				t.Fatalf("%s/proto %d: server answered %q", name, proto, data)
			}
			t.Logf("%s/proto %d refused: %v", name, proto, err)
			c.Close()
		}
	}
	// The legitimate node still works.
	other := mustNewNode(t)
	if out, err := other.CallRPC(ctx, n.Addr(), "test.echo", []byte("ok")); err != nil || string(out) != "ok" {
		t.Fatalf("legit call: %q %v", out, err)
	}
}

func TestVerifyPeerHook(t *testing.T) {
	deny := func(c *x509.Certificate) error {
		if strings.HasPrefix(c.Subject.CommonName, "blocked") {
			return errors.New("blocked")
		}
		return nil
	}
	n := mustNewNode(t, func(c *Config) { c.VerifyPeer = deny })
	n.RegisterRPC("test.echo", func(ctx context.Context, _ *x509.Certificate, req []byte) ([]byte, error) {
		return req, nil
	})
	blocked := mustNewNode(t, func(c *Config) { c.NodeID = "blocked-1"; c.TLS = clusterPKI(t).tlsConfig(t, "blocked-1") })
	ctx := ctxTimeout(t, 10*time.Second)
	if _, err := blocked.CallRPC(ctx, n.Addr(), "test.echo", []byte("x")); err == nil {
		t.Fatal("VerifyPeer did not refuse")
	}
	ok := mustNewNode(t)
	if _, err := ok.CallRPC(ctx, n.Addr(), "test.echo", []byte("x")); err != nil {
		t.Fatal(err)
	}
}

// requestFrame builds a raw RPC request frame (see rpc.go).
func requestFrame(id uint64, name string, body []byte) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(1+8+4+1+len(name)+len(body)))
	f = append(f, frameRequest)
	f = binary.BigEndian.AppendUint64(f, id)
	f = binary.BigEndian.AppendUint32(f, 0)
	f = append(f, byte(len(name)))
	f = append(f, name...)
	return append(f, body...)
}

func TestErrorCodesRoundTrip(t *testing.T) {
	for _, sentinel := range []error{ErrNoLeader, ErrNotLeader, ErrSnapshotRunning, ErrShutdown,
		ErrUnknownRPC, ErrOutcomeUnknown, context.DeadlineExceeded, context.Canceled} {
		err := fmt.Errorf("wrapped: %w", sentinel)
		re := &RemoteError{Addr: "x", Code: errorCode(err), Message: err.Error()}
		if !errors.Is(re, sentinel) {
			t.Errorf("%v does not survive the wire (code %d)", sentinel, re.Code)
		}
	}
	if re := (&RemoteError{Code: codeRefused}); !retryable(re) || !errors.Is(re, ErrShutdown) {
		t.Error("refused must be retryable and ErrShutdown")
	}
	if re := (&RemoteError{Code: codeShutdown}); retryable(re) {
		t.Error("a handler's shutdown error must not be retried")
	}
	if re := (&RemoteError{Code: codeOutcomeUnknown}); retryable(re) {
		t.Error("outcome unknown must not be retried")
	}
	if !retryable(&RemoteError{Code: codeNotLeader}) || !retryable(&notSentError{io.EOF}) {
		t.Error("not leader / not sent must be retried")
	}
}
