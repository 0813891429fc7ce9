package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// finding is one result of `edgectl verify`.
type finding struct {
	Severity string `json:"severity"` // error or warning
	Kind     string `json:"kind"`     // resource of the subject
	Subject  string `json:"subject"`  // its name (or id)
	ID       string `json:"id"`
	Message  string `json:"message"`
	// EdgeRouter names the edge router whose tunneler the subject is (an
	// identity of type Router).
	EdgeRouter string `json:"edgeRouter,omitempty"`
}

func verifyCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Find what keeps the network from working: grants without a usable edge router, dangling @ids, unused records",
		Long: "Errors: an identity granted Dial or Bind on a service with no edge router that both may use, or whose\n" +
			"usable edge routers are all unenrolled or offline; a policy naming an @id that no longer exists.\n" +
			"Warnings: edge routers never enrolled or not connected to the node asked, identities with no edge router,\n" +
			"services no one can dial or bind, policies that select nothing, posture checks no policy uses.\n" +
			"Router health is as the node asked sees it (a router holds a channel to every node). Exit 1 when there is\n" +
			"an error, else 0.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return usagef("-o %q: use table or json", output)
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			fs, err := c.verify()
			if err != nil {
				return err
			}
			if output == "json" {
				if fs == nil {
					fs = []finding{}
				}
				if err := printJSON(fs); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SEVERITY\tKIND\tSUBJECT\tFINDING")
				for _, f := range fs {
					subject := f.Subject
					if f.EdgeRouter != "" {
						subject += " (tunneler of edge router " + f.EdgeRouter + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Severity, f.Kind, subject, f.Message)
				}
				_ = tw.Flush()
				fmt.Fprintf(os.Stderr, "%d findings\n", len(fs))
			}
			for _, f := range fs {
				if f.Severity == "error" {
					return exitError{code: 1}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

// exitError ends the command with a status and no message of its own (what
// it had to say is printed already).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// verify collects the findings, errors first.
func (c *client) verify() ([]finding, error) {
	var out []finding
	routerNames := map[string]string{}
	add := func(sev, kind string, rec map[string]any, format string, args ...any) {
		f := finding{Severity: sev, Kind: kind, Subject: firstNonEmpty(cell(rec["name"]), cell(rec["id"])),
			ID: cell(rec["id"]), Message: fmt.Sprintf(format, args...)}
		if kind == "identity" && rec["typeId"] == "Router" {
			f.EdgeRouter = routerNames[f.ID] // a router's identity has its id
		}
		out = append(out, f)
	}
	lists := map[string][]map[string]any{}
	ids := map[string]bool{}
	for _, path := range []string{"identities", "services", "edge-routers", "posture-checks", "service-policies",
		"edge-router-policies", "service-edge-router-policies"} {
		items, err := c.listAll("/"+path, "", 0)
		if err != nil {
			return nil, err
		}
		lists[path] = items
		for _, it := range items {
			ids[cell(it["id"])] = true
			if path == "edge-routers" {
				routerNames[cell(it["id"])] = cell(it["name"])
			}
		}
	}
	rel := func(path, id, relation string) ([]map[string]any, error) {
		return c.listAll("/"+path+"/"+url.PathEscape(id)+"/"+relation, "", 0)
	}

	// Grants that cannot be used, and identities without routers.
	for _, ident := range lists["identities"] {
		id := cell(ident["id"])
		routers, err := rel("identities", id, "edge-routers")
		if err != nil {
			return nil, err
		}
		services, err := rel("identities", id, "services")
		if err != nil {
			return nil, err
		}
		if len(routers) == 0 && len(services) > 0 {
			add("warning", "identity", ident, "no edge router policy gives it an edge router")
		}
		for _, svc := range services {
			data, _, err := c.do(http.MethodGet, "/identities/"+url.PathEscape(id)+"/policy-advice/"+url.PathEscape(cell(svc["id"])), nil)
			if err != nil {
				return nil, err
			}
			var adv struct {
				IsDialAllowed, IsBindAllowed bool
				CommonRouters                []any
			}
			_ = json.Unmarshal(data, &adv)
			granted := adv.IsDialAllowed || adv.IsBindAllowed
			switch {
			case granted && len(adv.CommonRouters) == 0:
				add("error", "identity", ident, "is granted %s on service %q but no edge router is usable by both",
					grantWord(adv.IsDialAllowed, adv.IsBindAllowed), cell(svc["name"]))
			case granted && !anyOnline(adv.CommonRouters):
				add("error", "identity", ident, "is granted %s on service %q but none of the edge routers usable by both is online: %s",
					grantWord(adv.IsDialAllowed, adv.IsBindAllowed), cell(svc["name"]), routerCell(adv.CommonRouters))
			}
		}
	}
	// Edge routers that cannot serve anyone.
	for _, er := range lists["edge-routers"] {
		switch {
		case er["isVerified"] != true:
			add("warning", "edge-router", er, "has never been enrolled: `ziti router enroll` with its enrollment JWT")
		case er["disabled"] == true:
			add("warning", "edge-router", er, "is disabled")
		case er["isOnline"] != true:
			add("warning", "edge-router", er, "is enrolled but not connected to this node")
		}
	}
	// Services no one can use.
	for _, svc := range lists["services"] {
		who, err := rel("services", cell(svc["id"]), "identities")
		if err != nil {
			return nil, err
		}
		if len(who) == 0 {
			add("warning", "service", svc, "no identity can dial or bind it")
		}
	}
	// Policies: dangling @ids, and selections that are empty.
	type sel struct{ relA, relB string }
	sels := map[string]sel{"service-policies": {"identities", "services"}, "edge-router-policies": {"identities", "edge-routers"},
		"service-edge-router-policies": {"services", "edge-routers"}}
	used := map[string]bool{}
	for path, s := range sels {
		kind := singular(path)
		for _, p := range lists[path] {
			r, _ := resourceByName(path)
			for field := range r.Roles {
				roles, _ := p[field].([]any)
				for _, r := range roles {
					if rs, _ := r.(string); strings.HasPrefix(rs, "@") && !ids[rs[1:]] {
						add("error", kind, p, "%s names %s, which no longer exists", field, rs)
					}
				}
			}
			if p["isSystem"] == true {
				continue
			}
			a, err := rel(path, cell(p["id"]), s.relA)
			if err != nil {
				return nil, err
			}
			b, err := rel(path, cell(p["id"]), s.relB)
			if err != nil {
				return nil, err
			}
			if len(a) == 0 || len(b) == 0 {
				add("warning", kind, p, "selects no %s", map[bool]string{true: s.relA, false: s.relB}[len(a) == 0])
			}
			if path == "service-policies" {
				checks, err := rel(path, cell(p["id"]), "posture-checks")
				if err != nil {
					return nil, err
				}
				for _, pc := range checks {
					used[cell(pc["id"])] = true
				}
			}
		}
	}
	for _, pc := range lists["posture-checks"] {
		if !used[cell(pc["id"])] {
			add("warning", "posture-check", pc, "no service policy uses it")
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity == "error" && out[j].Severity != "error" })
	return out, nil
}

func grantWord(dial, bind bool) string {
	switch {
	case dial && bind:
		return "Dial and Bind"
	case dial:
		return "Dial"
	}
	return "Bind"
}

// anyOnline reports whether one of policy advice's common routers is online.
func anyOnline(routers []any) bool {
	for _, r := range routers {
		if m, _ := r.(map[string]any); m["isOnline"] == true {
			return true
		}
	}
	return false
}
