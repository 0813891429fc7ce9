package dataplane

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"

	"github.com/prometheus/client_golang/prometheus"
)

// TestContentNames_EveryHandledAndSentTypeHasOne walks the handlers table
// and every message this package builds (ctrlchan.NewMessage(wire.X, …),
// ctrlchan.NewResult): each content type is labelled by a name in
// edgectl_router_messages_{received,sent}_total, not a bare number.
func TestContentNames_EveryHandledAndSentTypeHasOne(t *testing.T) {
	named := func(what string, ct int32) {
		t.Helper()
		if _, ok := contentNames[ct]; !ok {
			t.Errorf("%s (content type %d) has no name in contentNames", what, ct)
		}
	}
	m := New(Config{Store: store.New()})
	for ct := range m.handlers(&Router{}) {
		named("a handled type", ct)
	}
	// The answers to this node's requests, counted as received.
	for _, ct := range []int32{wire.RouteResultType, wire.ClientHelloType, wire.InspectResponseType,
		wire.ValidateTerminatorsV2ResponseType, wire.ValidateDataStateResponseType} {
		named("an answer to a request", ct)
	}
	values := wireConstants(t)
	sent := sentTypes(t)
	if len(sent) < 10 {
		t.Fatalf("only %d sent types found: %v", len(sent), sent)
	}
	for _, name := range sent {
		if name == "ctrlchan.ContentResult" {
			named(name, ctrlchan.ContentResult)
			continue
		}
		v, ok := values[strings.TrimPrefix(name, "wire.")]
		if !ok {
			t.Errorf("sent type %s: no integer constant of that name in dataplane/wire", name)
			continue
		}
		named(name, v)
	}
}

// wireConstants are the integer constants declared in dataplane/wire.
func wireConstants(t *testing.T) map[string]int32 {
	t.Helper()
	files, _ := filepath.Glob("wire/*.go")
	out := map[string]int32{}
	for _, f := range parseAll(t, files) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT {
						v, err := strconv.ParseInt(lit.Value, 0, 32)
						if err == nil {
							out[n.Name] = int32(v)
						}
					}
				}
			}
		}
	}
	return out
}

// sentTypes are the content types of the messages this package builds:
// "wire.X" for ctrlchan.NewMessage(wire.X, …), "ctrlchan.ContentResult"
// for ctrlchan.NewResult. A NewMessage of any other first argument fails t.
func sentTypes(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !isIdent(fn.X, "ctrlchan") {
				return true
			}
			switch fn.Sel.Name {
			case "NewResult":
				add("ctrlchan.ContentResult")
			case "NewMessage":
				arg, ok := call.Args[0].(*ast.SelectorExpr)
				if !ok || !isIdent(arg.X, "wire") {
					t.Errorf("%s: a message whose content type is not a wire constant", fset.Position(call.Pos()))
					return true
				}
				add("wire." + arg.Sel.Name)
			}
			return true
		})
	}
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func parseAll(t *testing.T, names []string) []*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	var out []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// TestMessages_RepliesAndAnswersAreCounted: a router's request and this
// node's reply to it, through the handlers table over a channel, are both
// counted by name; so are this node's request and the router's answer.
func TestMessages_RepliesAndAnswersAreCounted(t *testing.T) {
	m := New(Config{Store: store.New()})
	p := bareRouter(t, m, &Router{ID: "r-1"})

	req := ctrlchan.NewMessage(wire.UpdateRouterInterfacesType, nil)
	req.Sequence = 7
	p.send(req)
	if ans := p.next(); ans.ContentType != ctrlchan.ContentResult {
		t.Fatalf("the router's interfaces answered with content type %d", ans.ContentType)
	}
	if n := counterValue(t, m.metrics.received, "type", "update_router_interfaces"); n != 1 {
		t.Errorf("received update_router_interfaces = %v, want 1", n)
	}
	if n := counterValue(t, m.metrics.sent, "type", "result"); n != 1 {
		t.Errorf("sent result (the reply) = %v, want 1", n)
	}

	// This node's request and the router's answer to it.
	done := make(chan error, 1)
	go func() {
		_, err := m.request(context.Background(), p.r, ctrlchan.NewMessage(wire.InspectRequestType, wire.InspectRequest("links")))
		done <- err
	}()
	asked := p.next()
	if asked.ContentType != wire.InspectRequestType {
		t.Fatalf("the node sent content type %d, not an inspection", asked.ContentType)
	}
	ans := ctrlchan.NewMessage(wire.InspectResponseType, nil)
	ans.SetReplyTo(asked)
	ans.Sequence = 8
	p.send(ans)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request got no answer within 5 s")
	}
	if n := counterValue(t, m.metrics.sent, "type", "inspect_request"); n != 1 {
		t.Errorf("sent inspect_request = %v, want 1", n)
	}
	if n := counterValue(t, m.metrics.received, "type", "inspect_response"); n != 1 {
		t.Errorf("received inspect_response (the answer) = %v, want 1", n)
	}
}

// counterValue is the value of counter c's series with the label pairs
// labels (name, value, ...; none for a plain counter).
func counterValue(t *testing.T, c prometheus.Collector, labels ...string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
	series:
		for _, metric := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range metric.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			return metric.GetCounter().GetValue()
		}
	}
	return 0
}
