package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"edgectl/auth"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// The console (console/, docs/console.md) driven by a real headless
// Chromium (Debian's chromium; .ci/run installs it) against real nodes.
// With EDGECTL_CONSOLE_SCREENSHOTS=DIR the test saves the main pages there
// (docs/console/ is made that way).

func chromiumPath(t *testing.T) string {
	for _, p := range []string{os.Getenv("EDGECTL_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	const msg = "no Chromium: install Debian's chromium (.ci/run does) or set EDGECTL_CHROMIUM"
	if os.Getenv("CI") != "" { // a browser test that skips in CI proves nothing
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium with its own profile; downloads go to dir.
func newBrowser(t *testing.T, dir string) context.Context {
	t.Helper()
	// The profile is not under a t.TempDir: Chromium's helper processes may
	// still write to it for a moment after the browser is gone, and the
	// testing package fails a test whose temporary directory it cannot remove.
	profile, err := os.MkdirTemp("", "edgectl-console-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 860),
		// The node's certificate is signed by its own CA; the API tests check TLS, this one the pages.
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.UserDataDir(profile),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA() // waits for the browser process to exit
		removeWithin(profile, 10*time.Second)
	})
	if err := chromedp.Run(ctx, browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dir)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// removeWithin removes dir, trying again while something still writes into
// it, for at most d; what is left then stays in the system's temp dir.
func removeWithin(dir string, d time.Duration) {
	deadline := time.Now().Add(d)
	for os.RemoveAll(dir) != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(sctx, actions...); err != nil {
		var page string
		_ = chromedp.Run(ctx, chromedp.Text("main", &page, chromedp.ByQuery))
		t.Fatalf("%s: %v\nthe page shows:\n%.1500s", what, err, page)
	}
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("EDGECTL_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	run(t, ctx, "screenshot "+name, chromedp.Evaluate(`document.querySelector('main').scrollTo(0,0)`, nil),
		chromedp.Sleep(300*time.Millisecond), chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitText polls until the text of sel contains want.
func waitText(t *testing.T, ctx context.Context, what, sel, want string) string {
	t.Helper()
	var got string
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||''`, sel), &got))
		if err == nil && strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			var page string
			_ = chromedp.Run(ctx, chromedp.Text("main", &page, chromedp.ByQuery))
			t.Fatalf("%s: %s shows %q, want it to contain %q; the page:\n%.1500s", what, sel, got, want, page)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// consoleLogin opens the console and logs in as a person does, up to the overview.
func consoleLogin(t *testing.T, ctx context.Context, base, password string) {
	t.Helper()
	run(t, ctx, "open the console", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible("#username", chromedp.ByID))
	submitLogin(t, ctx, password)
	run(t, ctx, "the overview", chromedp.WaitVisible("#members tbody tr", chromedp.ByQuery))
}

// submitLogin types the administrator's name and password into the login
// form and sends it.
func submitLogin(t *testing.T, ctx context.Context, password string) {
	t.Helper()
	run(t, ctx, "log in",
		chromedp.SendKeys("#username", adminUser, chromedp.ByID),
		chromedp.SendKeys("#password", password, chromedp.ByID),
		chromedp.Click("#login-submit", chromedp.ByID))
}

func TestConsoleInABrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	n := startNode(t, nodeOpts{})
	base := "https://" + n.host()
	dir := t.TempDir()
	ctx := newBrowser(t, dir)

	// The console's page comes with a strict CSP, from this node.
	resp, err := n.httpc.Get(base + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("GET /console/: %d, CSP %q", resp.StatusCode, csp)
	}

	consoleLogin(t, ctx, base, n.password)
	waitText(t, ctx, "overview: the cluster", "#members", "yes")
	waitText(t, ctx, "overview: the counts", "#counts", "Identities")
	var token, cookies, href string
	run(t, ctx, "where the token is", chromedp.Evaluate(`sessionStorage.getItem('edgectl.token')||''`, &token),
		chromedp.Evaluate(`document.cookie`, &cookies), chromedp.Evaluate(`location.href`, &href))
	if token == "" || cookies != "" || strings.Contains(href, token) {
		t.Fatalf("token in session storage %q, cookies %q, URL %q", token, cookies, href)
	}
	eventsInWords(t, ctx, "the overview's recent events", "#recent-events")
	screenshot(t, ctx, "overview")

	// An identity through the form: its enrollment JWT as text, QR code and download.
	run(t, ctx, "identity form", chromedp.Navigate(base+"/console/#/r/identities/new"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "laptop-1", chromedp.ByID),
		chromedp.SendKeys("#f-roleAttributes", "staff", chromedp.ByID),
		chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#enrollment-jwt", chromedp.ByID))
	var jwt string
	var qrWidth int
	run(t, ctx, "the enrollment", chromedp.Value("#enrollment-jwt", &jwt, chromedp.ByID),
		chromedp.Evaluate(`document.querySelector('#enrollment-qr').naturalWidth`, &qrWidth))
	if strings.Count(jwt, ".") != 2 || !strings.HasPrefix(jwt, "ey") || qrWidth < 100 {
		t.Fatalf("enrollment JWT %q, QR code %d px wide", jwt, qrWidth)
	}
	screenshot(t, ctx, "identity")
	run(t, ctx, "download the JWT", chromedp.Click("#download-jwt", chromedp.ByID))
	waitUntil(t, "the JWT downloaded", 20*time.Second, func() error {
		b, err := os.ReadFile(filepath.Join(dir, "laptop-1.jwt"))
		if err != nil {
			return err
		}
		if string(b) != jwt {
			return fmt.Errorf("downloaded %q", b)
		}
		return nil
	})

	// Refresh the identity's enrollment: a new expiry.
	var before string
	run(t, ctx, "the expiry", chromedp.Text("#enrollment", &before, chromedp.ByID))
	run(t, ctx, "refresh", chromedp.Click("#refresh-enrollment", chromedp.ByID))
	waitUntil(t, "a refreshed expiry", 20*time.Second, func() error {
		var after string
		if err := chromedp.Run(ctx, chromedp.Text("#enrollment", &after, chromedp.ByID)); err != nil {
			return err
		}
		if after == before {
			return fmt.Errorf("the enrollment still shows %q", after)
		}
		return nil
	})

	// An edge router through the form: its JWT, then re-enrolled: a new JWT.
	run(t, ctx, "edge router form", chromedp.Navigate(base+"/console/#/r/edge-routers/new"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "er-1", chromedp.ByID), chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#enrollment-jwt", chromedp.ByID))
	var erJWT string
	run(t, ctx, "the router's JWT", chromedp.Value("#enrollment-jwt", &erJWT, chromedp.ByID), chromedp.Click("#re-enroll", chromedp.ByID))
	waitUntil(t, "a new router JWT", 20*time.Second, func() error {
		var now string
		if err := chromedp.Run(ctx, chromedp.Value("#enrollment-jwt", &now, chromedp.ByID)); err != nil {
			return err
		}
		if now == erJWT || strings.Count(now, ".") != 2 {
			return fmt.Errorf("JWT %q", now)
		}
		return nil
	})
	// The overview's router health names it: never enrolled.
	run(t, ctx, "overview again", chromedp.Navigate(base+"/console/#/"), chromedp.WaitVisible("#router-counts", chromedp.ByID))
	waitText(t, ctx, "overview: the router not online", "#routers-down", "er-1 never enrolled")
	// The last hour, charted from the event log: the changes made so far, the login.
	var changes, logins string
	var bars int
	run(t, ctx, "the last hour's charts", chromedp.WaitVisible("#chart-changes", chromedp.ByID),
		chromedp.Text("#chart-changes figcaption", &changes, chromedp.ByQuery), chromedp.Text("#chart-logins figcaption", &logins, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#chart-changes rect').length`, &bars))
	if n, _ := strconv.Atoi(strings.Fields(changes)[0]); n < 2 || bars < 1 || !strings.HasPrefix(logins, "1 login, 0 failed") {
		t.Fatalf("the last hour: %q (%d bars), %q", changes, bars, logins)
	}
	var routersCaption string
	run(t, ctx, "the node's own samples", chromedp.Text("#chart-routers figcaption", &routersCaption, chromedp.ByQuery))
	if routersCaption != "routers connected to this node now: 0" {
		t.Fatalf("the routers chart: %q", routersCaption)
	}
	screenshot(t, ctx, "overview-health")

	// A bad value: the API's validation error is shown at the field, and nothing is stored.
	run(t, ctx, "service form", chromedp.Navigate(base+"/console/#/r/services/new"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "web", chromedp.ByID),
		chromedp.SendKeys("#f-roleAttributes", "web", chromedp.ByID),
		chromedp.SetValue("#f-maxIdleTimeMillis", "-5", chromedp.ByID),
		chromedp.Click("#save", chromedp.ByID))
	waitText(t, ctx, "the error at the field", `[data-error-for="maxIdleTimeMillis"]`, "maxIdleTimeMillis")
	var invalid bool
	run(t, ctx, "the field is marked", chromedp.Evaluate(`document.querySelector('#f-maxIdleTimeMillis').classList.contains('invalid')`, &invalid))
	if !invalid {
		t.Fatal("the field with the bad value is not marked")
	}
	screenshot(t, ctx, "validation-error")
	run(t, ctx, "fix and save", chromedp.SetValue("#f-maxIdleTimeMillis", "", chromedp.ByID), chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the service", "h2", "Services: web")

	// Edit (PATCH) through the form: the detail shows the new value.
	run(t, ctx, "edit the service", chromedp.Click("#edit", chromedp.ByID), chromedp.WaitVisible("#f-roleAttributes", chromedp.ByID),
		chromedp.SetValue("#f-roleAttributes", "web, edge", chromedp.ByID), chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the edited service", `#fields [data-field="roleAttributes"]`, "web, edge")
	var serviceURL string
	run(t, ctx, "the service's page", chromedp.Location(&serviceURL))

	// Forms take names where the CLI does: a config's type, a service's configs.
	// The config's data through the form its type's schema gives (host.v1: protocol, address, port).
	run(t, ctx, "config form", chromedp.Navigate(base+"/console/#/r/configs/new"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "web-host", chromedp.ByID), chromedp.SendKeys("#f-configTypeId", "host.v1", chromedp.ByID),
		chromedp.Click("#f-name", chromedp.ByID), // the type's field loses the focus: its form appears
		chromedp.WaitVisible("#d-address", chromedp.ByID),
		chromedp.SetValue("#d-protocol", "tcp", chromedp.ByID),
		chromedp.Evaluate(`document.querySelector('#d-protocol').dispatchEvent(new Event('change'))`, nil),
		chromedp.SendKeys("#d-address", "localhost", chromedp.ByID), chromedp.SendKeys("#d-port", "8080", chromedp.ByID))
	screenshot(t, ctx, "config-form")
	var dataJSON string
	run(t, ctx, "the data the form wrote", chromedp.Value("#f-data", &dataJSON, chromedp.ByID))
	var written map[string]any
	if err := json.Unmarshal([]byte(dataJSON), &written); err != nil || written["protocol"] != "tcp" || written["address"] != "localhost" || written["port"] != 8080.0 {
		t.Fatalf("the schema form wrote %q (%v)", dataJSON, err)
	}
	run(t, ctx, "save the config", chromedp.Click("#save", chromedp.ByID), chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the config's type", `#fields [data-field="configType"]`, "host.v1")
	// The config's page has an Edit link too: wait for the service's own
	// (clicking the config's, removed as the service's page renders, fails).
	serviceEdit := `#edit[href^="#/r/services/"]`
	run(t, ctx, "a config by a name that is none", chromedp.Navigate(serviceURL), chromedp.WaitVisible(serviceEdit, chromedp.ByQuery),
		chromedp.Click(serviceEdit, chromedp.ByQuery), chromedp.WaitVisible("#f-configs", chromedp.ByID),
		chromedp.SetValue("#f-configs", "no-such-config", chromedp.ByID), chromedp.Click("#save", chromedp.ByID))
	waitText(t, ctx, "the error at the field", `[data-error-for="configs"]`, "no config named no-such-config")
	run(t, ctx, "the service's config by name", chromedp.SetValue("#f-configs", "web-host", chromedp.ByID), chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the service's configs", `[data-relation="configs"]`, "web-host")

	// A Dial policy through the form, with role completion.
	run(t, ctx, "policy form", chromedp.Navigate(base+"/console/#/r/service-policies/new"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "staff-dial-web", chromedp.ByID),
		chromedp.SetValue("#f-type", "Dial", chromedp.ByID),
		chromedp.SendKeys("#f-identityRoles", "#staff", chromedp.ByID),
		chromedp.SendKeys("#f-serviceRoles", "#web", chromedp.ByID))
	var options []string
	waitUntil(t, "role completion", 10*time.Second, func() error {
		if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#dl-identityRoles option')].map(o=>o.value)`, &options)); err != nil {
			return err
		}
		for _, o := range options {
			if o == "#staff" {
				return nil
			}
		}
		return fmt.Errorf("completions %v", options)
	})
	run(t, ctx, "save the policy", chromedp.Click("#save", chromedp.ByID), chromedp.WaitVisible("#fields", chromedp.ByID))
	waitText(t, ctx, "the policy", "#fields", "Dial")

	// Twelve more services the identity may dial: its related lists are paged.
	for i := range 12 {
		st, m := do(t, http.MethodPost, n.mgmt("/services"), login(t, n, adminUser, n.password), map[string]any{"name": fmt.Sprintf("web-%02d", i), "roleAttributes": []string{"web"}})
		mustStatus(t, "a service", st, m, http.StatusCreated)
	}
	// Lists a person reads: headings in words, times relative with the exact
	// time on hover, sort links only where the API sorts, a search box that
	// searches names as typed, the filter language behind "Advanced".
	run(t, ctx, "identities list", chromedp.Navigate(base+"/console/#/r/identities"), chromedp.WaitVisible("#list tbody tr a", chromedp.ByQuery))
	var heads []string
	var timeText, timeTitle string
	var sortLinks int
	run(t, ctx, "the list's headings and times",
		chromedp.Evaluate(`[...document.querySelectorAll('#list th')].map(th=>th.textContent)`, &heads),
		chromedp.Evaluate(`document.querySelector('#list td time').textContent`, &timeText),
		chromedp.Evaluate(`document.querySelector('#list td time').title`, &timeTitle),
		chromedp.Evaluate(`document.querySelectorAll('#list th a.sort').length`, &sortLinks))
	if !slices.Contains(heads, "Created") || !slices.Contains(heads, "Admin") || !slices.Contains(heads, "Role attributes") ||
		!(strings.HasSuffix(timeText, " ago") || timeText == "now") || timeTitle == "" || sortLinks == 0 || sortLinks == len(heads) {
		t.Fatalf("list headings %q, a time %q (title %q), %d sort links", heads, timeText, timeTitle, sortLinks)
	}
	var bodyText string
	run(t, ctx, "no undefined", chromedp.Evaluate(`document.body.innerText`, &bodyText))
	if strings.Contains(bodyText, "undefined") {
		t.Fatalf("the list says undefined:\n%s", bodyText)
	}
	run(t, ctx, "type a name", chromedp.SendKeys("#filter", "laptop", chromedp.ByID))
	waitUntil(t, "the search narrows the list as typed", 10*time.Second, func() error {
		var names []string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#list tbody tr td:first-child')].map(td=>td.textContent)`, &names)); err != nil {
			return err
		}
		if len(names) != 1 || names[0] != "laptop-1" {
			return fmt.Errorf("rows %v", names)
		}
		return nil
	})
	run(t, ctx, "advanced filter", chromedp.Navigate(base+"/console/#/r/identities?advanced=1&filter="+`name%20%3D%20%22laptop-1%22`),
		chromedp.WaitVisible("#list tbody tr a", chromedp.ByQuery))
	waitText(t, ctx, "the advanced filter's result", "#list tbody", "laptop-1")
	screenshot(t, ctx, "identities")
	// At 800 px the navigation moves above the page, and the page takes the width.
	var navBottom, mainTop, mainWidth float64
	run(t, ctx, "a narrow window", chromedp.EmulateViewport(800, 700),
		chromedp.Evaluate(`document.querySelector('nav').getBoundingClientRect().bottom`, &navBottom),
		chromedp.Evaluate(`document.querySelector('main').getBoundingClientRect().top`, &mainTop),
		chromedp.Evaluate(`document.querySelector('main').getBoundingClientRect().width`, &mainWidth))
	if navBottom > mainTop+1 || mainWidth < 780 {
		t.Fatalf("at 800 px: the navigation ends at %v, the page starts at %v and is %v wide", navBottom, mainTop, mainWidth)
	}
	screenshot(t, ctx, "narrow")
	run(t, ctx, "a wide window again", chromedp.EmulateViewport(1280, 860))

	// The identity's services, then "why".
	run(t, ctx, "the identity", chromedp.Click("#list tbody tr a", chromedp.ByQuery), chromedp.WaitVisible("#relations", chromedp.ByID))
	waitText(t, ctx, "the identity's services", `[data-relation="services"]`, "web")
	waitText(t, ctx, "the first page of its services", `[data-relation="services"] .pager`, "1–10 of 13")
	run(t, ctx, "the next page", chromedp.Click(`[data-relation="services"] button.next`, chromedp.ByQuery))
	waitText(t, ctx, "the second page of its services", `[data-relation="services"] .pager`, "11–13 of 13")
	waitText(t, ctx, "the identity's policies", `[data-relation="service-policies"]`, "staff-dial-web")
	screenshot(t, ctx, "identity-relations")
	// The network view: identity → policy → service → edge routers, what fails in red
	// (web: no edge router both may use is online).
	run(t, ctx, "the network view", chromedp.Click("#network-view", chromedp.ByID), chromedp.WaitVisible("#network", chromedp.ByID))
	var nodes map[string]bool
	run(t, ctx, "its nodes", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#network a.node')].map(a=>[a.dataset.name, a.classList.contains('bad')]))`, &nodes))
	if bad, ok := nodes["web"]; !ok || !bad || nodes["laptop-1"] || nodes["staff-dial-web (Dial)"] {
		t.Fatalf("the network view's nodes (name: failing): %v", nodes)
	}
	var edges int
	run(t, ctx, "its lines", chromedp.Evaluate(`document.querySelectorAll('#network line.edge').length`, &edges))
	if edges < 2 {
		t.Fatalf("%d lines in the network view", edges)
	}
	screenshot(t, ctx, "network")
	run(t, ctx, "a service's network view", chromedp.Navigate(base+"/console/#/r/services?filter=web"), chromedp.WaitVisible("#list tbody tr a", chromedp.ByQuery),
		chromedp.Click("#list tbody tr a", chromedp.ByQuery), chromedp.WaitVisible("#network-view", chromedp.ByID),
		chromedp.Click("#network-view", chromedp.ByID), chromedp.WaitVisible("#network", chromedp.ByID))
	run(t, ctx, "its nodes", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#network a.node')].map(a=>[a.dataset.name, a.classList.contains('bad')]))`, &nodes))
	if _, ok := nodes["laptop-1"]; !ok || nodes["staff-dial-web (Dial)"] {
		t.Fatalf("the service's network view (name: failing): %v", nodes)
	}
	run(t, ctx, "why", chromedp.Navigate(base+"/console/#/why"), chromedp.WaitVisible("#why-identity", chromedp.ByID),
		chromedp.SendKeys("#why-identity", "laptop-1", chromedp.ByID), chromedp.SendKeys("#why-service", "web", chromedp.ByID),
		chromedp.Click("#why-go", chromedp.ByID))
	waitText(t, ctx, "why: dial", "#why-dial", "Dial: allowed")
	waitText(t, ctx, "why: bind", "#why-bind", "Bind: not allowed")
	waitText(t, ctx, "why: the policy", "#why-result", "staff-dial-web")
	screenshot(t, ctx, "why")

	// Events: the recent ones, then a change made elsewhere arrives live.
	run(t, ctx, "events", chromedp.Navigate(base+"/console/#/events"), chromedp.WaitVisible("#events-body tr", chromedp.ByQuery))
	waitText(t, ctx, "the stream is live", "#stream-status", "live")
	apiToken := login(t, n, adminUser, n.password)
	status, m := do(t, http.MethodPost, n.mgmt("/identities"), apiToken, map[string]any{"name": "made-elsewhere", "type": "Device", "isAdmin": false})
	mustStatus(t, "create an identity over the API", status, m, http.StatusCreated)
	waitText(t, ctx, "the live event", "#events-body", "made-elsewhere")
	eventsInWords(t, ctx, "the events page", "#events")
	screenshot(t, ctx, "events")
	// A relative time stays true while the page is open: five minutes on
	// (the page's clock moved), the live event says so.
	run(t, ctx, "five minutes later", chromedp.Evaluate(`window.realNow = Date.now; Date.now = () => window.realNow.call(Date) + 5 * 60e3`, nil))
	waitUntil(t, "the live event's time said again", 20*time.Second, func() error {
		var when string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#events-body tr')].find(tr => tr.innerText.includes('made-elsewhere')).querySelector('time').textContent`, &when)); err != nil {
			return err
		}
		if when != "5 min ago" {
			return fmt.Errorf("it says %q", when)
		}
		return nil
	})
	run(t, ctx, "the clock back", chromedp.Evaluate(`Date.now = window.realNow`, nil))

	// The overview's services no one can reach: web (a Dial policy, no edge router
	// serves it) and a service no policy selects.
	status, m = do(t, http.MethodPost, n.mgmt("/services"), apiToken, map[string]any{"name": "lonely"})
	mustStatus(t, "a service no policy selects", status, m, http.StatusCreated)
	run(t, ctx, "the overview at last", chromedp.Navigate(base+"/console/#/"), chromedp.WaitVisible("#router-counts", chromedp.ByID))
	waitText(t, ctx, "overview: a service no edge router serves", "#unreachable-list", "web no edge router serves it")
	waitText(t, ctx, "overview: a service no one may use", "#unreachable-list", "lonely no identity may dial or bind it")

	// Log out: back to the login, the token gone.
	run(t, ctx, "log out", chromedp.Click("#logout", chromedp.ByID), chromedp.WaitVisible("#username", chromedp.ByID),
		chromedp.Evaluate(`sessionStorage.getItem('edgectl.token')||''`, &token))
	if token != "" {
		t.Fatal("the token is still in session storage after logout")
	}
	screenshot(t, ctx, "login")

	// An expired session returns to the login page.
	consoleLogin(t, ctx, base, n.password)
	run(t, ctx, "expire the session", chromedp.Evaluate(`sessionStorage.setItem('edgectl.token','expired-or-unknown')`, nil),
		chromedp.Navigate(base+"/console/#/r/services"), chromedp.WaitVisible("#username", chromedp.ByID))
	waitText(t, ctx, "the login says why", "#login-message", "session has ended")
}

// rawTime is an API time (RFC 3339) as text.
var rawTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)

// eventsInWords checks that the events table sel says its events as the
// resource lists do: headings in words, no API time as text, each event's
// time relative with the exact time (to the second) on hover.
func eventsInWords(t *testing.T, ctx context.Context, what, sel string) {
	t.Helper()
	var got struct {
		Heads []string
		Text  string
		Rows  int
		Times []struct{ Text, Title, Datetime string }
	}
	run(t, ctx, what, chromedp.Evaluate(fmt.Sprintf(`(() => { const t = document.querySelector(%q); return {
		heads: [...t.querySelectorAll('thead th')].map((th) => th.textContent), text: t.innerText,
		rows: t.querySelectorAll('tbody tr').length,
		times: [...t.querySelectorAll('tbody td:nth-child(2) time')].map((x) => ({text: x.textContent, title: x.title, datetime: x.getAttribute('datetime')})) }; })()`, sel), &got))
	want := []string{"ID", "When", "Namespace", "Action", "Kind", "Name", "By", "Changed fields"}
	if !slices.Equal(got.Heads, want) || rawTime.MatchString(got.Text) || got.Rows == 0 || len(got.Times) != got.Rows {
		t.Fatalf("%s: headings %q, want %q; %d rows, %d times; the table:\n%.1500s", what, got.Heads, want, got.Rows, len(got.Times), got.Text)
	}
	exact := regexp.MustCompile(`\d:\d\d:\d\d`)
	for _, x := range got.Times {
		at, err := time.Parse(time.RFC3339Nano, x.Datetime)
		if err != nil || !(x.Text == "now" || strings.HasSuffix(x.Text, " ago")) || !exact.MatchString(x.Title) || !strings.Contains(x.Title, strconv.Itoa(at.Year())) {
			t.Fatalf("%s: a time says %q, %q on hover, for %q (%v)", what, x.Text, x.Title, x.Datetime, err)
		}
	}
}

// TestConsoleOnAFollower: the console served by a follower of a three-node
// cluster logs in and writes through it (the follower forwards the writes).
func TestConsoleOnAFollower(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	c := startCluster(t, clusterOpts{size: 3})
	f := c.nodes[(c.leader(30*time.Second)+1)%3]
	ctx := newBrowser(t, t.TempDir())
	base := "https://" + f.host()
	consoleLogin(t, ctx, base, c.nodes[0].password)
	waitText(t, ctx, "three members", "#members tbody", c.ids[2])
	run(t, ctx, "identity form on a follower", chromedp.Navigate(base+"/console/#/r/identities/new"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "via-follower", chromedp.ByID),
		chromedp.Click("#save", chromedp.ByID),
		chromedp.WaitVisible("#enrollment-jwt", chromedp.ByID))
	waitText(t, ctx, "the identity", "h2", "via-follower")
}

// TestConsoleLoginWithTOTP: an administrator with TOTP enrolled gets the
// code step after the password, and the console only after the code.
func TestConsoleLoginWithTOTP(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	n := startNode(t, nodeOpts{})
	token := login(t, n, adminUser, n.password)
	status, m := do(t, http.MethodPost, n.mgmt("/current-identity/mfa"), token, map[string]any{})
	if status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("enroll MFA: %d %s", status, js(m))
	}
	status, m = do(t, http.MethodGet, n.mgmt("/current-identity/mfa"), token, nil)
	mustStatus(t, "the MFA enrollment", status, m, http.StatusOK)
	u, err := url.Parse(fmt.Sprint(jget(m, "data", "provisioningUrl")))
	if err != nil || u.Query().Get("secret") == "" {
		t.Fatalf("provisioningUrl: %v %s", err, js(m))
	}
	secret := u.Query().Get("secret")
	code, _ := auth.TOTPCode(secret, time.Now())
	status, m = do(t, http.MethodPost, n.mgmt("/current-identity/mfa/verify"), token, map[string]any{"code": code})
	mustStatus(t, "verify MFA", status, m, http.StatusOK)

	ctx := newBrowser(t, t.TempDir())
	base := "https://" + n.host()
	run(t, ctx, "password step", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible("#username", chromedp.ByID),
		chromedp.SendKeys("#username", adminUser, chromedp.ByID),
		chromedp.SendKeys("#password", n.password, chromedp.ByID),
		chromedp.Click("#login-submit", chromedp.ByID),
		chromedp.WaitVisible("#totp", chromedp.ByID))
	// A wrong code is refused on the code step, which stays.
	wrong := "000000"
	if c, _ := auth.TOTPCode(secret, time.Now()); c == wrong {
		wrong = "000001"
	}
	run(t, ctx, "a wrong code", chromedp.SendKeys("#totp", wrong, chromedp.ByID), chromedp.Click("#totp-submit", chromedp.ByID))
	waitText(t, ctx, "the code is refused", "#totp-form", "INVALID_AUTH")
	// The next step's code: the one just verified is spent.
	next, _ := auth.TOTPCode(secret, time.Now().Add(auth.TOTPPeriod))
	run(t, ctx, "code step", chromedp.SetValue("#totp", next, chromedp.ByID), chromedp.Click("#totp-submit", chromedp.ByID),
		chromedp.WaitVisible("#members tbody tr", chromedp.ByQuery))
}
