package dataplane

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"edgectl/ctrlchan"
	"edgectl/dataplane/wire"
	"edgectl/store"

	"google.golang.org/protobuf/encoding/protowire"
)

// A refused route's suspect links are those the refusing router's route
// names, and the next try avoids them.
func TestRouteError_SuspectsTheRefusingRoutersLinks(t *testing.T) {
	ci := &Circuit{Path: []string{"A", "B", "C"}, Links: []string{"ab", "bc"}}
	shun := map[string]bool{}
	avoid(shun, fmt.Errorf("wrapped: %w", &routeError{err: errors.New("invalid link destination ab"), suspect: ci.hops().LinksAt(0)}))
	avoid(shun, errors.New("not a route error"))
	if !reflect.DeepEqual(shun, map[string]bool{"ab": true}) {
		t.Fatalf("links avoided %v", shun)
	}
}

// TestConfirmation_ACircuitTheNodeDoesNotKnowIsUnrouted: a router that
// confirms a circuit this node has no record of is told to drop it.
func TestConfirmation_ACircuitTheNodeDoesNotKnowIsUnrouted(t *testing.T) {
	m := New(Config{Store: store.New()})
	p := bareRouter(t, m, &Router{ID: "r-1"})
	var body []byte
	body = protowire.AppendTag(body, 1, protowire.BytesType)
	body = protowire.AppendString(body, "c-unknown")
	p.send(ctrlchan.NewMessage(wire.CircuitConfirmationType, body))
	got := p.next()
	if got.ContentType != wire.UnrouteType {
		t.Fatalf("the node answered content type %d, not an Unroute", got.ContentType)
	}
	if id := string(fieldsOf(got.Body)[1].raw); id != "c-unknown" {
		t.Fatalf("the Unroute names circuit %q", id)
	}
}
