package cli

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"edgectl/api"
	"edgectl/internal/atomicfile"

	"github.com/spf13/cobra"
)

func whyCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "why IDENTITY SERVICE",
		Short: "Can this identity dial or bind this service, through which policies, edge routers and posture checks",
		Args:  argsWhat{"IDENTITY": "the identity", "SERVICE": "the service"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return usagef("-o %q: use text or json", output)
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			out, err := c.why(args[0], args[1])
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(out)
			}
			printWhy(out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// why answers whether identity may dial and bind service (each a name or an
// id), and if not why: for each of dial and bind, the granting policies,
// the edge routers both may use, the posture checks judged, the reasons.
func (c *client) why(identity, service string) (map[string]any, error) {
	identities, _ := resourceByName("identities")
	services, _ := resourceByName("services")
	iid, err := c.resolve(identities, identity)
	if err != nil {
		return nil, err
	}
	sid, err := c.resolve(services, service)
	if err != nil {
		return nil, err
	}
	data, _, err := c.do(http.MethodGet, "/identities/"+url.PathEscape(iid)+"/policy-advice/"+url.PathEscape(sid), nil)
	if err != nil {
		return nil, err
	}
	var adv struct {
		Identity, Service            map[string]any
		IsDialAllowed, IsBindAllowed bool
		IdentityRouterCount          int
		ServiceRouterCount           int
		CommonRouters                []map[string]any
		DialPolicies, BindPolicies   []map[string]any
		PostureChecks                []map[string]any
	}
	if err := json.Unmarshal(data, &adv); err != nil {
		return nil, err
	}
	ref := func(m map[string]any) map[string]any { return map[string]any{"id": m["id"], "name": m["name"]} }
	side := func(typ string, allowed bool, policies []map[string]any) map[string]any {
		ps := []any{}
		for _, p := range policies {
			ps = append(ps, ref(p))
		}
		routers := []any{}
		online := 0
		var down []string
		for _, r := range adv.CommonRouters {
			rr := ref(r)
			rr["isOnline"], rr["isVerified"] = r["isOnline"] == true, r["isVerified"] == true
			routers = append(routers, rr)
			switch {
			case r["isOnline"] == true:
				online++
			case r["isVerified"] != true:
				down = append(down, fmt.Sprintf("%v (never enrolled)", r["name"]))
			default:
				down = append(down, fmt.Sprintf("%v (offline)", r["name"]))
			}
		}
		checks := []any{}
		postureOK := len(policies) == 0
		for _, p := range policies {
			policyOK := true
			for _, pc := range adv.PostureChecks {
				if pc["policyId"] != p["id"] {
					continue
				}
				judged, _ := pc["apiSessions"].([]any)
				passed := false
				for _, j := range judged {
					if m, _ := j.(map[string]any); m["passed"] == true {
						passed = true
					}
				}
				policyOK = policyOK && passed
				checks = append(checks, map[string]any{"id": pc["id"], "name": pc["name"], "policy": p["name"],
					"passed": passed, "apiSessions": judged})
			}
			postureOK = postureOK || policyOK
		}
		reasons := []any{}
		switch {
		case len(policies) == 0:
			reasons = append(reasons, fmt.Sprintf("no service policy grants %s on this service to this identity", typ))
		case !postureOK:
			reasons = append(reasons, "a granting policy's posture checks fail for every API session of the identity (or it has none)")
		}
		if len(policies) > 0 && len(adv.CommonRouters) == 0 {
			reasons = append(reasons, fmt.Sprintf("no edge router is usable by both: the identity's edge router policies give %d, the service's service edge router policies give %d, none in common",
				adv.IdentityRouterCount, adv.ServiceRouterCount))
		}
		if len(policies) > 0 && len(adv.CommonRouters) > 0 && online == 0 {
			reasons = append(reasons, "none of the edge routers usable by both is online on this node: "+strings.Join(down, ", "))
		}
		return map[string]any{"allowed": allowed && online > 0, "policies": ps, "edgeRouters": routers,
			"postureChecks": checks, "reasons": reasons}
	}
	ident := ref(adv.Identity)
	if er, err := c.routerOfIdentity(iid); err != nil {
		return nil, err
	} else if er != nil {
		ident["edgeRouter"] = ref(er)
	}
	return map[string]any{"identity": ident, "service": ref(adv.Service),
		"dial": side("Dial", adv.IsDialAllowed, adv.DialPolicies), "bind": side("Bind", adv.IsBindAllowed, adv.BindPolicies)}, nil
}

// routerOfIdentity returns the edge router whose tunneler identity id is
// (an identity of type Router has its router's id), or nil.
func (c *client) routerOfIdentity(id string) (map[string]any, error) {
	var ident, er map[string]any
	data, _, err := c.do(http.MethodGet, "/identities/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &ident); err != nil || ident["typeId"] != "Router" {
		return nil, err
	}
	data, _, err = c.do(http.MethodGet, "/edge-routers/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, nil // a Router identity without its router: shown as any identity
	}
	if err := json.Unmarshal(data, &er); err != nil {
		return nil, err
	}
	return er, nil
}

// identityLabel is an identity's name, with the edge router it is the
// tunneler of.
func identityLabel(ident map[string]any) string {
	if er, ok := ident["edgeRouter"].(map[string]any); ok {
		return fmt.Sprintf("%v (the tunneler of edge router %v)", ident["name"], er["name"])
	}
	return cell(ident["name"])
}

// printWhy prints why's answer as text.
func printWhy(out map[string]any) {
	fmt.Printf("%s → %s\n", identityLabel(out["identity"].(map[string]any)), out["service"].(map[string]any)["name"])
	for _, t := range []string{"dial", "bind"} {
		s := out[t].(map[string]any)
		verdict := "no"
		if s["allowed"] == true {
			verdict = "yes"
		}
		fmt.Printf("  %s: %s\n", t, verdict)
		fmt.Printf("    policies:       %s\n", cell(s["policies"]))
		fmt.Printf("    edge routers:   %s\n", routerCell(s["edgeRouters"].([]any)))
		for _, pc := range s["postureChecks"].([]any) {
			m := pc.(map[string]any)
			fmt.Printf("    posture check:  %s (policy %s): passed %v\n", m["name"], m["policy"], m["passed"])
		}
		for _, r := range s["reasons"].([]any) {
			fmt.Printf("    why not:        %s\n", r)
		}
	}
}

func backupCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Take a snapshot of the cluster's state and download it (restore it with 'edgectl restore')",
		Long: "Takes a snapshot through the login profile's controller, or with --data-dir through the local admin\n" +
			"socket of the node on that machine (no login needed: what a backup timer uses), and writes it to FILE.",
		Args: argsWhat{"FILE": "the file to write the snapshot to"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			var hc *http.Client
			var base, token string
			if dataDir != "" {
				hc, base = socketClient(dataDir), "http://local"
			} else {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				hc, base, token = c.http, c.p.URL, c.p.Token
			}
			data, _, err := doAPI(hc, base, token, http.MethodPost, "/database/snapshot", nil)
			if err != nil {
				if dataDir != "" {
					return fmt.Errorf("is a node running on %s? %w", dataDir, err)
				}
				return err
			}
			var snap struct {
				ID    string `json:"id"`
				Index uint64 `json:"index"`
			}
			if err := json.Unmarshal(data, &snap); err != nil || snap.ID == "" {
				return fmt.Errorf("the controller answered no snapshot: %s", data)
			}
			req, _ := http.NewRequest(http.MethodGet, strings.TrimRight(base, "/")+api.ManagementPrefix+"/database/snapshots/"+url.PathEscape(snap.ID), nil)
			if token != "" {
				req.Header.Set("zt-session", token)
			}
			dl := *hc
			dl.Timeout = 0 // a snapshot may be large: the download takes what it takes
			resp, err := dl.Do(req)
			if err != nil {
				return fmt.Errorf("download: %w", unwrapURLError(err))
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				raw, _ := io.ReadAll(resp.Body)
				return fmt.Errorf("download answered %d: %.200s", resp.StatusCode, raw)
			}
			n, err := atomicfile.Copy(args[0], args[0]+".part", resp.Body)
			if err != nil {
				return err
			}
			fmt.Printf("%s: snapshot %s (log index %d), %d bytes\n", args[0], snap.ID, snap.Index, n)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "back up through the admin socket of the node running on this data dir (no login needed)")
	return cmd
}

func adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Operations on the machine of a node (local admin socket)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	var dataDir string
	var passStdin bool
	reset := &cobra.Command{
		Use:   "reset-password",
		Short: "Set a new password for the default admin, through the node's local admin socket",
		Long: "The way back from a lost admin password: on the machine of a running node, with access to its data dir,\n" +
			"sets the default admin's password. Without --password-stdin a password is generated and printed once.",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			dir := firstNonEmpty(dataDir, "./data")
			pass := ""
			if passStdin {
				line, err := bufio.NewReader(os.Stdin).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("--password-stdin: %w", err)
				}
				pass = strings.TrimRight(line, "\r\n")
				if pass == "" {
					return usagef("--password-stdin: the first line is empty")
				}
			} else {
				b := make([]byte, 18)
				_, _ = rand.Read(b)
				pass = base64.RawURLEncoding.EncodeToString(b)
			}
			data, err := adminCall(dir, http.MethodGet, "/identities?filter="+url.QueryEscape("isDefaultAdmin = true"), nil)
			if err != nil {
				return err
			}
			var admins []struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(data, &admins) != nil || len(admins) != 1 {
				return fmt.Errorf("no default admin found on %s", dir)
			}
			data, err = adminCall(dir, http.MethodGet, "/identities/"+admins[0].ID+"/authenticators", nil)
			if err != nil {
				return err
			}
			var auths []struct {
				ID, Method, Username string
			}
			_ = json.Unmarshal(data, &auths)
			for _, a := range auths {
				if a.Method != "updb" {
					continue
				}
				if _, err := adminCall(dir, http.MethodPut, "/authenticators/"+a.ID, map[string]any{"username": a.Username, "password": pass}); err != nil {
					return err
				}
				if passStdin {
					fmt.Printf("The password of the default admin %q is set.\n", a.Username)
				} else {
					fmt.Printf("The default admin %q has the new password:\n\n    %s\n\nIt is shown only this once.\n", a.Username, pass)
				}
				return nil
			}
			return fmt.Errorf("the default admin has no password authenticator")
		},
	}
	reset.Flags().StringVar(&dataDir, "data-dir", "", "data directory of the node running on this machine (default ./data)")
	reset.Flags().BoolVar(&passStdin, "password-stdin", false, "read the new password from the first line of standard input")
	cmd.AddCommand(reset)
	return cmd
}

// routerCell names edge routers with their state: "er1 (online), er2 (offline)".
func routerCell(routers []any) string {
	if len(routers) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(routers))
	for _, r := range routers {
		m := r.(map[string]any)
		state := "offline"
		switch {
		case m["isOnline"] == true:
			state = "online"
		case m["isVerified"] != true:
			state = "never enrolled"
		}
		parts = append(parts, fmt.Sprintf("%v (%s)", m["name"], state))
	}
	return strings.Join(parts, ", ")
}
