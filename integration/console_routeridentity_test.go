package integration

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleShowsARouterIdentitysRouter: an identity that is an edge
// router's tunneler links to its router and offers no Delete (the API would
// refuse it); its edit form shows its name read-only, as following its
// router, and saves the other fields; the router links back to its
// identity; Why names the router.
func TestConsoleShowsARouterIdentitysRouter(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	n := startNode(t, nodeOpts{})
	base := "https://" + n.host()
	tok := login(t, n, adminUser, n.password)
	st, m := do(t, http.MethodPost, n.mgmt("/edge-routers"), tok, map[string]any{"name": "tun-west", "isTunnelerEnabled": true})
	mustStatus(t, "create the edge router", st, m, http.StatusCreated)
	id := m["data"].(map[string]any)["id"].(string)

	ctx := newBrowser(t, t.TempDir())
	consoleLogin(t, ctx, base, n.password)
	run(t, ctx, "the router's identity", chromedp.Navigate(base+"/console/#/r/identities/"+id), chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the identity names its router", "#router-of", "The tunneler of edge router tun-west")
	var hasDelete bool
	var href string
	run(t, ctx, "its actions", chromedp.Evaluate(`!!document.querySelector('#delete')`, &hasDelete),
		chromedp.Evaluate(`document.querySelector('#router-of a').getAttribute('href')`, &href))
	if hasDelete || href != "#/r/edge-routers/"+id {
		t.Fatalf("router identity page: Delete offered %v, router link %q", hasDelete, href)
	}
	// Its edit form shows its name read-only (the API refuses a new one),
	// says why, and saves without sending it.
	run(t, ctx, "the identity's edit form", chromedp.Navigate(base+"/console/#/r/identities/"+id+"/edit"),
		chromedp.WaitVisible("#f-name", chromedp.ByID))
	waitText(t, ctx, "the form says the name follows the router", "#name-follows-router", "It follows its edge router")
	var nameReadOnly bool
	var nameValue string
	run(t, ctx, "the name field", chromedp.Evaluate(`document.querySelector('#f-name').readOnly`, &nameReadOnly),
		chromedp.Evaluate(`document.querySelector('#f-name').value`, &nameValue))
	if !nameReadOnly || nameValue != "tun-west" {
		t.Fatalf("router identity's edit form: name read-only %v, value %q", nameReadOnly, nameValue)
	}
	run(t, ctx, "save the form", chromedp.SetValue("#f-roleAttributes", "west", chromedp.ByID), chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#router-of", chromedp.ByID))
	st, m = do(t, http.MethodGet, n.mgmt("/identities/"+id), tok, nil)
	mustStatus(t, "read the identity", st, m, http.StatusOK)
	if d := m["data"].(map[string]any); d["name"] != "tun-west" || fmt.Sprint(d["roleAttributes"]) != "[west]" {
		t.Fatalf("after the form's save: name %v, roleAttributes %v", d["name"], d["roleAttributes"])
	}

	run(t, ctx, "the router", chromedp.Navigate(base+"/console/#/r/edge-routers/"+id), chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the router names its identity", "#router-identity", "Its tunneler is the identity tun-west")

	// Why names it too.
	st, m = do(t, http.MethodPost, n.mgmt("/services"), tok, map[string]any{"name": "db"})
	mustStatus(t, "create a service", st, m, http.StatusCreated)
	run(t, ctx, "why", chromedp.Navigate(base+"/console/#/why?identity=tun-west&service=db"), chromedp.WaitVisible("#why-dial", chromedp.ByID))
	waitText(t, ctx, "why names the identity's router", "#why-router-of", "tun-west is the tunneler of edge router tun-west")
}
