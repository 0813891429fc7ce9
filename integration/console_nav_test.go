package integration

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The console's navigation: its resource links come from the API
// description the node serves (console/assets/resources.js), which the
// console loads after the login.

// TestConsoleNavigationAfterLogin: a person logs in on a browser that never
// held a session, typing into the login form, and the navigation lists
// every resource at once (it used to only after a reload); each resource's
// link opens its list. When the API description does not load, the page
// says so with a Retry button, which loads it and fills the navigation.
func TestConsoleNavigationAfterLogin(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	n := startNode(t, nodeOpts{})
	base := "https://" + n.host()
	want := describedResources(t, n)
	ctx := newBrowser(t, t.TempDir()) // a profile of its own, new

	consoleLogin(t, ctx, base, n.password)
	// The overview shows: the navigation is drawn by then, with no poll.
	if got := navResources(t, ctx); !slices.Equal(got, want) {
		t.Fatalf("the navigation right after the login lists %d resources %v, want %d %v", len(got), got, len(want), want)
	}
	clickThroughNavigation(t, ctx, want)

	// The API description fails to load once, on a new page.
	run(t, ctx, "log out", chromedp.Click("#logout", chromedp.ByID), chromedp.WaitVisible("#username", chromedp.ByID))
	var asked atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		first := asked.Add(1) == 1
		// An event handler must not block the browser's event loop.
		go func() {
			ectx := cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Target)
			if first {
				_ = fetch.FailRequest(e.RequestID, network.ErrorReasonConnectionFailed).Do(ectx)
			} else {
				_ = fetch.ContinueRequest(e.RequestID).Do(ectx)
			}
		}()
	})
	run(t, ctx, "intercept the API description", fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/specs/edge-management/spec"}}))
	run(t, ctx, "a new page", chromedp.Reload(), chromedp.WaitVisible("#username", chromedp.ByID))
	submitLogin(t, ctx, n.password)
	waitText(t, ctx, "the page says the resources did not load", "#resources-error", "The resources could not be loaded")
	waitText(t, ctx, "the page says why", "#resources-error .error", "Failed to fetch")
	var pages []string
	var loggedIn bool
	run(t, ctx, "the navigation without the resources",
		chromedp.Evaluate(`[...document.querySelectorAll('#nav a')].map(a=>a.textContent)`, &pages),
		chromedp.Evaluate(`!!document.querySelector('#logout')`, &loggedIn))
	if !slices.Equal(pages, []string{"Overview", "Why", "Events", "Circuits", "Topology"}) || !loggedIn || asked.Load() != 1 {
		t.Fatalf("before Retry: navigation %q, Log out %v, the description asked for %d times", pages, loggedIn, asked.Load())
	}
	run(t, ctx, "Retry", chromedp.Click("#retry", chromedp.ByID), chromedp.WaitVisible("#members tbody tr", chromedp.ByQuery))
	if got := navResources(t, ctx); !slices.Equal(got, want) || asked.Load() != 2 {
		t.Fatalf("after Retry: the navigation lists %v, want %v; the description asked for %d times, want 2", got, want, asked.Load())
	}
	clickThroughNavigation(t, ctx, want)
}

// navLink is a resource's link in the navigation.
type navLink struct{ Path, Title string }

// describedResources are the resources the node's API description gives
// the console (those with list columns), in its order.
func describedResources(t *testing.T, n *node) []navLink {
	t.Helper()
	status, m := do(t, http.MethodGet, n.mgmt("/specs/edge-management/spec"), login(t, n, adminUser, n.password), nil)
	mustStatus(t, "the API description", status, m, http.StatusOK)
	list, _ := jget(m, "data", "x-edgectl-resources").([]any)
	var out []navLink
	for _, x := range list {
		if jget(x, "columns") != nil {
			out = append(out, navLink{fmt.Sprint(jget(x, "path")), fmt.Sprint(jget(x, "title"))})
		}
	}
	if !slices.Contains(out, navLink{"identities", "Identities"}) || !slices.Contains(out, navLink{"services", "Services"}) || len(out) < 20 {
		t.Fatalf("the API description's resources: %q", out)
	}
	return out
}

// navResources are the navigation's resource links.
func navResources(t *testing.T, ctx context.Context) []navLink {
	t.Helper()
	var got []navLink
	run(t, ctx, "the navigation", chromedp.Evaluate(`[...document.querySelectorAll('#nav a[data-resource]')].map(a=>({path: a.dataset.resource, title: a.textContent}))`, &got))
	return got
}

// clickThroughNavigation clicks each resource link in the navigation, as
// a person does, and waits for the resource's list: its title, its table's
// headings, the link marked as the page shown.
func clickThroughNavigation(t *testing.T, ctx context.Context, links []navLink) {
	t.Helper()
	for _, l := range links {
		path, title := l.Path, l.Title
		run(t, ctx, "click "+title, chromedp.Click(fmt.Sprintf(`#nav a[data-resource=%q]`, path), chromedp.ByQuery))
		waitUntil(t, "the list of "+title, 20*time.Second, func() error {
			var page struct {
				Hash, Title, Active, Error string
				Headings                   int
			}
			err := chromedp.Run(ctx, chromedp.Evaluate(`({hash: location.hash, title: (document.querySelector('main h2')||{}).textContent||'',
				active: (document.querySelector('#nav a.active')||{dataset:{}}).dataset.resource||'',
				error: (document.querySelector('main .error')||{}).textContent||'',
				headings: document.querySelectorAll('#list thead th').length})`, &page))
			switch {
			case err != nil:
				return err
			case page.Hash == "#/r/"+path && page.Title == title && page.Error != "":
				t.Fatalf("the list of %s: %s", title, page.Error)
			case page.Hash != "#/r/"+path || page.Title != title || page.Headings == 0 || page.Active != path:
				return fmt.Errorf("the page is %+v", page)
			}
			return nil
		})
	}
}
