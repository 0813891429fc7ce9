package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"edgectl/api"

	"github.com/spf13/cobra"
)

// The resource commands (list, get, create, update, delete) work on every
// Management API resource. The resources, their relation lists and whether
// they have names come from the API's own tables (api.ManagementResources);
// the types of the fields --set writes come from the served OpenAPI
// document. The one kind of resource treated apart is the kind whose
// records enroll (ResourceInfo.Enrollment): identities take --type and
// --role-attributes and, like routers, --jwt-file.

// resourceByName finds a resource by its API path or singular
// ("identities", "identity", "service-policy").
func resourceByName(name string) (api.ResourceInfo, error) {
	var names []string
	for _, r := range managementResources() {
		if name == r.Path || name == singular(r.Path) {
			return r, nil
		}
		names = append(names, r.Path)
	}
	sort.Strings(names)
	best, dist := "", 4
	for _, n := range names {
		for _, cand := range []string{n, singular(n)} {
			if d := editDistance(strings.ToLower(name), cand); d < dist {
				best, dist = n, d
			}
		}
	}
	if best != "" {
		return api.ResourceInfo{}, usagef("unknown resource %q; did you mean %q?", name, best)
	}
	return api.ResourceInfo{}, usagef("unknown resource %q; one of: %s", name, strings.Join(names, ", "))
}

// singular is the singular of a resource path: identities → identity,
// service-policies → service-policy, cas → ca.
func singular(path string) string {
	switch {
	case strings.HasSuffix(path, "ies"):
		return strings.TrimSuffix(path, "ies") + "y"
	case strings.HasSuffix(path, "s"):
		return strings.TrimSuffix(path, "s")
	}
	return path
}

// resolve turns NAME|ID into an id: an exact name match, else an id.
func (c *client) resolve(r api.ResourceInfo, ref string) (string, error) {
	if r.Named {
		data, _, err := c.do(http.MethodGet, "/"+r.Path+"?limit=2&filter="+url.QueryEscape(`name = "`+strings.ReplaceAll(ref, `"`, `\"`)+`"`), nil)
		if err != nil {
			return "", err
		}
		var found []struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(data, &found)
		switch len(found) {
		case 1:
			return found[0].ID, nil
		case 2:
			return "", fmt.Errorf("more than one %s is named %q: give the id", singular(r.Path), ref)
		}
	}
	if _, _, err := c.do(http.MethodGet, "/"+r.Path+"/"+url.PathEscape(ref), nil); err != nil {
		var ae *apiError
		if asAPIError(err, &ae) && ae.Status == http.StatusNotFound {
			return "", fmt.Errorf("no %s has the name or id %q", singular(r.Path), ref)
		}
		return "", err
	}
	return ref, nil
}

func asAPIError(err error, target **apiError) bool {
	ae, ok := err.(*apiError)
	if ok {
		*target = ae
	}
	return ok
}

// listAll reads every record of path matching filter (all pages), or the
// first limit when limit > 0.
func (c *client) listAll(path, filter string, limit int) ([]map[string]any, error) {
	return c.listFrom(path, filter, limit, 0)
}

// listFrom is listAll from the start-th match on.
func (c *client) listFrom(path, filter string, limit, start int) ([]map[string]any, error) {
	var out []map[string]any
	page := 500
	if limit > 0 && limit < page {
		page = limit
	}
	for offset := start; ; {
		q := url.Values{"limit": {strconv.Itoa(page)}, "offset": {strconv.Itoa(offset)}}
		if filter != "" {
			q.Set("filter", filter)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		data, meta, err := c.do(http.MethodGet, path+sep+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		var items []map[string]any
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, fmt.Errorf("%s is not a list", path)
		}
		out = append(out, items...)
		var m struct {
			Pagination struct {
				TotalCount int `json:"totalCount"`
			} `json:"pagination"`
		}
		_ = json.Unmarshal(meta, &m)
		offset += len(items)
		if len(items) == 0 || offset >= m.Pagination.TotalCount || (limit > 0 && len(out) >= limit) {
			break
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Paging clauses of the filter language, with its string literals taken out
// first (a name may hold the words).
var (
	filterStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	filterSkip    = regexp.MustCompile(`(?i)\bskip\s+(\d+)\b`)
	filterLimit   = regexp.MustCompile(`(?i)\blimit\s+(\d+)\b`)
)

// pagingOf reads the `skip N` and `limit N` of a filter (0: none; `limit
// none` is every record, as without one).
func pagingOf(filter string) (skip, limit int) {
	bare := filterStrings.ReplaceAllString(filter, `""`)
	if m := filterSkip.FindStringSubmatch(bare); m != nil {
		skip, _ = strconv.Atoi(m[1])
	}
	if m := filterLimit.FindStringSubmatch(bare); m != nil {
		limit, _ = strconv.Atoi(m[1])
	}
	return skip, limit
}

// resourceClient starts every per-resource command: the resource named on
// the command line, the command's own usage checks (check may be nil; they
// come before any login profile is read), then the client.
func resourceClient(cmd *cobra.Command, name string, check func(api.ResourceInfo) error) (api.ResourceInfo, *client, error) {
	r, err := resourceByName(name)
	if err != nil {
		return r, nil, err
	}
	if check != nil {
		if err := check(r); err != nil {
			return r, nil, err
		}
	}
	c, err := newClient(cmd)
	return r, c, err
}

// recordClient is resourceClient for the resource args[0], with the id of
// its record args[1] (a name or an id).
func recordClient(cmd *cobra.Command, args []string, check func(api.ResourceInfo) error) (api.ResourceInfo, *client, string, error) {
	r, c, err := resourceClient(cmd, args[0], check)
	if err != nil {
		return r, c, "", err
	}
	id, err := c.resolve(r, args[1])
	return r, c, id, err
}

// resourceArgs are the positional arguments of the resource commands.
var resourceArgs = argsWhat{"RESOURCE": "the resource kind (identity, service, ...)", "NAME|ID": "the record (its name or id)",
	"FILTER": "a filter", "NAME": "the name", "RELATION": "the relation"}

func listCmd() *cobra.Command {
	var output string
	var limit int
	cmd := &cobra.Command{
		Use:               "list RESOURCE [FILTER]",
		Short:             "List the records of a resource (all pages), optionally filtered",
		Args:              resourceArgs.check,
		ValidArgsFunction: completeRecords(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if isCircuits(args[0]) { // not a resource of the model: this node's circuits (cli/circuits.go)
				return listCircuitsCmd(cmd, args, output, limit)
			}
			r, c, err := resourceClient(cmd, args[0], func(api.ResourceInfo) error { return checkOutput(output) })
			if err != nil {
				return err
			}
			filter := ""
			if len(args) == 2 {
				filter = args[1]
			}
			// The filter's own `skip N` and `limit N` hold as in the API: the
			// pages this command asks for would otherwise override them.
			skip, filterLimit := pagingOf(filter)
			if !cmd.Flags().Changed("limit") {
				limit = filterLimit
			}
			items, err := c.listFrom("/"+r.Path, filter, limit, skip)
			if err != nil {
				return err
			}
			if output == "table" || output == "wide" {
				c.namesForIDs(items)
			}
			return printRecords(items, output, r.Columns)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table, wide, json or yaml")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many records (default: all)")
	return cmd
}

func getCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "get RESOURCE NAME|ID [RELATION]",
		Short:             "Show one record, or one of its relation lists (e.g. get identity alice services)",
		Args:              resourceArgs.check,
		ValidArgsFunction: completeRecords(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, c, id, err := recordClient(cmd, args, func(r api.ResourceInfo) error {
				if err := checkOutput(output); err != nil {
					return err
				}
				if len(args) == 3 && !contains(r.Relations, args[2]) {
					return usagef("%s has no relation %q; one of: %s", r.Path, args[2], strings.Join(r.Relations, ", "))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(args) == 3 {
				items, err := c.listAll("/"+r.Path+"/"+url.PathEscape(id)+"/"+args[2], "", 0)
				if err != nil {
					return err
				}
				var cols []string // the relation's own resource's columns
				if rel, err := resourceByName(args[2]); err == nil {
					cols = rel.Columns
				}
				if output == "table" || output == "wide" {
					c.namesForIDs(items)
				}
				return printRecords(items, output, cols)
			}
			data, _, err := c.do(http.MethodGet, "/"+r.Path+"/"+url.PathEscape(id), nil)
			if err != nil {
				return err
			}
			var rec map[string]any
			_ = json.Unmarshal(data, &rec)
			if output == "table" || output == "wide" {
				c.namesForIDs([]map[string]any{rec})
				return printDetail(rec)
			}
			return printValue(rec, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table, wide, json or yaml")
	return cmd
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func createCmd() *cobra.Command {
	var bf bodyFlags
	var typ, roleAttrs, jwtFile string
	cmd := &cobra.Command{
		Use:   "create RESOURCE [NAME]",
		Short: "Create a record from --set and/or -f, and print its id",
		Long: "Create a record. NAME sets the name. For identities, --type (default User), --role-attributes and\n" +
			"--jwt-file (an ott enrollment is made, its JWT written there) are shortcuts. For edge routers and\n" +
			"routers, --jwt-file writes the router's enrollment JWT (for `ziti router enroll`).\n" +
			"`create enrollment ott|updb|ottca IDENTITY [--duration 24h] [--username U] [--ca CA] [--jwt-file F]`\n" +
			"makes an enrollment for the identity and prints its JWT.",
		Args:              resourceArgs.check,
		ValidArgsFunction: completeRecords(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, c, err := resourceClient(cmd, args[0], func(r api.ResourceInfo) error {
				if r.Enrollment != "identity" && (typ != "" || roleAttrs != "" || (jwtFile != "" && r.Enrollment != "router")) {
					return usagef("--type and --role-attributes are for identities, --jwt-file for identities and routers; use --set")
				}
				return nil
			})
			if err != nil {
				return err
			}
			isIdentity := r.Enrollment == "identity"
			body, err := bf.body(c.operationSchema(http.MethodPost, "/"+r.Path))
			if err != nil {
				return err
			}
			if len(args) == 2 {
				body["name"] = args[1]
			}
			if err := c.resolveRoleNames(body); err != nil {
				return err
			}
			if isIdentity {
				if typ != "" || body["type"] == nil {
					body["type"] = firstNonEmpty(typ, "User")
				}
				if _, ok := body["isAdmin"]; !ok {
					body["isAdmin"] = false
				}
				if roleAttrs != "" {
					body["roleAttributes"] = setValue(roleAttrs, "array")
				}
				if jwtFile != "" && body["enrollment"] == nil {
					body["enrollment"] = map[string]any{"ott": true}
				}
			}
			data, _, err := c.do(http.MethodPost, "/"+r.Path, body)
			if err != nil {
				return err
			}
			id := createdID(data)
			if jwtFile != "" {
				rec, _, err := c.do(http.MethodGet, "/"+r.Path+"/"+id, nil)
				if err != nil {
					return err
				}
				var got struct {
					Enrollment struct {
						Ott struct {
							JWT string `json:"jwt"`
						} `json:"ott"`
					} `json:"enrollment"`
					EnrollmentJWT string `json:"enrollmentJwt"` // routers
				}
				_ = json.Unmarshal(rec, &got)
				jwt := firstNonEmpty(got.Enrollment.Ott.JWT, got.EnrollmentJWT)
				if err := os.WriteFile(jwtFile, []byte(jwt), 0o600); err != nil {
					return fmt.Errorf("--jwt-file: %w", err)
				}
			}
			fmt.Println(id)
			return nil
		},
	}
	bf.add(cmd)
	cmd.Flags().StringVar(&typ, "type", "", "identities: User, Device, Service, Router or Default")
	cmd.Flags().StringVar(&roleAttrs, "role-attributes", "", "identities: a,b")
	cmd.Flags().StringVar(&jwtFile, "jwt-file", "", "identities, edge routers, routers: write the enrollment JWT to this file")
	cmd.AddCommand(createEnrollmentCmd())
	return cmd
}

func updateCmd() *cobra.Command {
	var bf bodyFlags
	var typ, roleAttrs string
	cmd := &cobra.Command{
		Use:   "update RESOURCE NAME|ID",
		Short: "Change fields of a record (PATCH) from --set, -f or the shorthand flags",
		Long: "Change fields of a record (a PATCH) from -f, then each --set. The shorthands of create work here too:\n" +
			"--role-attributes a,b (any resource with role attributes; \"\" for none) and, for identities, --type.",
		Args:              resourceArgs.check,
		ValidArgsFunction: completeRecords(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			roles := cmd.Flags().Changed("role-attributes")
			r, c, id, err := recordClient(cmd, args, func(r api.ResourceInfo) error {
				if typ != "" && r.Enrollment != "identity" {
					return usagef("--type is for identities; use --set")
				}
				if len(bf.sets) == 0 && bf.file == "" && typ == "" && !roles {
					return usagef("nothing to change: give --set, -f, --role-attributes or --type")
				}
				return nil
			})
			if err != nil {
				return err
			}
			schema := c.operationSchema(http.MethodPatch, "/"+r.Path+"/{id}")
			body, err := bf.body(schema)
			if err != nil {
				return err
			}
			if roles {
				if err := checkPath(schema, []string{"roleAttributes"}, "--role-attributes: "); err != nil {
					return err
				}
				body["roleAttributes"] = setValue(roleAttrs, "array")
			}
			if typ != "" {
				body["type"] = typ
			}
			if err := c.resolveRoleNames(body); err != nil {
				return err
			}
			data, _, err := c.do(http.MethodPatch, "/"+r.Path+"/"+url.PathEscape(id), body)
			if err != nil {
				return err
			}
			fmt.Println(id)
			warnNodes(data)
			return nil
		},
	}
	bf.add(cmd)
	cmd.Flags().StringVar(&typ, "type", "", "identities: User, Device, Service, Router or Default")
	cmd.Flags().StringVar(&roleAttrs, "role-attributes", "", "the role attributes, a,b (\"\" for none)")
	return cmd
}

// warnNodes writes to stderr the nodes where a change made on every node
// (a link's) was not made, from the answer's data.nodes (node id → outcome).
func warnNodes(data json.RawMessage) {
	var d struct {
		Nodes map[string]string `json:"nodes"`
	}
	if json.Unmarshal(data, &d) != nil {
		return
	}
	for _, node := range slices.Sorted(maps.Keys(d.Nodes)) {
		if what := d.Nodes[node]; what != "changed" {
			fmt.Fprintf(os.Stderr, "edgectl: node %s: %s\n", node, what)
		}
	}
}

func deleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "delete RESOURCE NAME|ID...",
		Short:             "Delete records",
		ValidArgsFunction: completeRecords(true),
		Args:              resourceArgs.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, c, err := resourceClient(cmd, args[0], nil)
			if err != nil {
				return err
			}
			for _, ref := range args[1:] {
				id, err := c.resolve(r, ref)
				if err != nil {
					return err
				}
				if _, _, err := c.do(http.MethodDelete, "/"+r.Path+"/"+url.PathEscape(id), nil); err != nil {
					return fmt.Errorf("%s: %w", ref, err)
				}
				fmt.Printf("deleted %s %s\n", singular(r.Path), id)
			}
			return nil
		},
	}
}
