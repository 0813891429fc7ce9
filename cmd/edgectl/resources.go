package main

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
	"time"

	"edgectl/api"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// The resource commands (list, get, create, update, delete) work on every
// Management API resource. The resources, their relation lists and whether
// they have names come from the API's own tables (api.ManagementResources);
// the types of the fields --set writes come from the served OpenAPI
// document. Nothing here is written per resource.

// resourceByName finds a resource by its API path or singular
// ("identities", "identity", "service-policy").
func resourceByName(name string) (api.ResourceInfo, error) {
	var names []string
	for _, r := range api.ManagementResources() {
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

func listCmd() *cobra.Command {
	var output string
	var limit int
	cmd := &cobra.Command{
		Use:               "list RESOURCE [FILTER]",
		Short:             "List the records of a resource (all pages), optionally filtered",
		Args:              argsSpec("list", []string{"RESOURCE"}, []string{"FILTER"}),
		ValidArgsFunction: completeRecords(false),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			return printRecords(items, output)
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
		Args:              argsSpec("get", []string{"RESOURCE", "NAME|ID"}, []string{"RELATION"}),
		ValidArgsFunction: completeRecords(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, c, err := resourceClient(cmd, args[0], func(r api.ResourceInfo) error {
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
			id, err := c.resolve(r, args[1])
			if err != nil {
				return err
			}
			if len(args) == 3 {
				items, err := c.listAll("/"+r.Path+"/"+url.PathEscape(id)+"/"+args[2], "", 0)
				if err != nil {
					return err
				}
				return printRecords(items, output)
			}
			data, _, err := c.do(http.MethodGet, "/"+r.Path+"/"+url.PathEscape(id), nil)
			if err != nil {
				return err
			}
			var rec map[string]any
			_ = json.Unmarshal(data, &rec)
			if output == "table" || output == "wide" {
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

// bodyFlags are the ways create and update take a body.
type bodyFlags struct {
	sets []string
	file string
}

func (b *bodyFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&b.sets, "set", nil, "path=value (repeatable): a.b=1, list=a,b, flag=true, x=null, or JSON")
	cmd.Flags().StringVarP(&b.file, "file", "f", "", "JSON or YAML body file, - for standard input")
}

// body builds the request body: the file, then each --set on top, typed by
// the schema of the operation (properties of type array take a,b lists).
func (b *bodyFlags) body(schema map[string]any) (map[string]any, error) {
	body := map[string]any{}
	if b.file != "" {
		var raw []byte
		var err error
		if b.file == "-" {
			raw, err = readAllStdin()
		} else {
			raw, err = os.ReadFile(b.file)
		}
		if err != nil {
			return nil, fmt.Errorf("-f: %w", err)
		}
		if err := yaml.Unmarshal(raw, &body); err != nil {
			return nil, usagef("-f %s: neither JSON nor YAML: %v", b.file, err)
		}
		body = normalizeYAML(body).(map[string]any)
		if err := checkFields(schema, body, "-f "+b.file+": "); err != nil {
			return nil, err
		}
	}
	for _, s := range b.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("--set %q: want path=value", s)
		}
		path := strings.Split(k, ".")
		for _, p := range path {
			if p == "" {
				return nil, usagef("--set %q: empty name in the path", s)
			}
		}
		if err := checkPath(schema, path, "--set "+k+": "); err != nil {
			return nil, err
		}
		m := body
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = setValue(v, propertyType(schema, path))
	}
	return body, nil
}

// fieldsOf are the named properties of an object schema, or nil when the
// schema does not close its fields (no properties, or additional ones
// allowed, as for tags or a config's data).
func fieldsOf(schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	if ap, ok := schema["additionalProperties"]; ok && ap != false {
		return nil
	}
	return props
}

// checkFields refuses a field of body that the operation's schema does not
// have, at any depth where the schema names its fields, saying which known
// field it looks like: the API ignores unknown fields, so a misspelt one
// would change nothing while the command said it was done.
func checkFields(schema, body map[string]any, where string) error {
	props := fieldsOf(schema)
	if props == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		p, ok := props[k]
		if !ok {
			return unknownField(where, k, props)
		}
		sub, isObj := body[k].(map[string]any)
		ps, hasSchema := p.(map[string]any)
		if isObj && hasSchema {
			if err := checkFields(ps, sub, where); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPath refuses a --set path that leaves the schema's named fields.
func checkPath(schema map[string]any, path []string, where string) error {
	for _, p := range path {
		props := fieldsOf(schema)
		if props == nil {
			return nil
		}
		next, ok := props[p]
		if !ok {
			return unknownField(where, p, props)
		}
		schema, _ = next.(map[string]any)
	}
	return nil
}

// unknownField is the error of a field the schema lacks, with the closest
// known name when one is close enough to be a slip.
func unknownField(where, name string, props map[string]any) error {
	best, dist := "", 4
	for k := range props {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < dist || (d == dist && k < best) {
			best, dist = k, d
		}
	}
	if best != "" {
		return usagef("%sno field %q here; did you mean %q?", where, name, best)
	}
	return usagef("%sno field %q here; the fields are %s", where, name, strings.Join(slices.Sorted(maps.Keys(props)), ", "))
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// propertyType is the "type" of the property at path in an object schema.
func propertyType(schema map[string]any, path []string) string {
	for i, p := range path {
		props, _ := schema["properties"].(map[string]any)
		prop, _ := props[p].(map[string]any)
		if prop == nil {
			return ""
		}
		if i == len(path)-1 {
			t, _ := prop["type"].(string)
			return t
		}
		schema = prop
	}
	return ""
}

// setValue types the value of a --set: by the schema's type when known,
// else JSON when it parses, else a string (a,b lists for arrays).
func setValue(v, typ string) any {
	switch typ {
	case "array":
		if strings.HasPrefix(v, "[") {
			var l []any
			if json.Unmarshal([]byte(v), &l) == nil {
				return l
			}
		}
		if v == "" {
			return []any{}
		}
		out := []any{}
		for _, e := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(e))
		}
		return out
	case "string":
		if v == "null" {
			return nil
		}
		return v
	}
	var j any
	if json.Unmarshal([]byte(v), &j) == nil {
		return j
	}
	if strings.Contains(v, ",") {
		return setValue(v, "array")
	}
	return v
}

// normalizeYAML turns YAML's map[any]any (old decoders) into JSON shapes.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
	}
	return v
}

// operationSchema is the request body schema of METHOD /path in the served
// Management API document (nil when it has none).
func (c *client) operationSchema(method, path string) map[string]any {
	data, _, err := c.do(http.MethodGet, "/specs/edge-management/spec", nil)
	if err != nil {
		return nil
	}
	var doc map[string]any
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	paths, _ := doc["paths"].(map[string]any)
	op, _ := paths[path].(map[string]any)
	m, _ := op[strings.ToLower(method)].(map[string]any)
	rb, _ := m["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	return schema
}

func createCmd() *cobra.Command {
	var bf bodyFlags
	var typ, roleAttrs, jwtFile string
	var ef enrollmentFlags
	cmd := &cobra.Command{
		Use:   "create RESOURCE [NAME]",
		Short: "Create a record from --set and/or -f, and print its id",
		Long: "Create a record. NAME sets the name. For identities, --type (default User), --role-attributes and\n" +
			"--jwt-file (an ott enrollment is made, its JWT written there) are shortcuts. For edge routers and\n" +
			"routers, --jwt-file writes the router's enrollment JWT (for `ziti router enroll`).\n" +
			"`create enrollment ott|updb|ottca IDENTITY [--duration 24h] [--username U] [--ca CA] [--jwt-file F]`\n" +
			"makes an enrollment for the identity and prints its JWT.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && (args[0] == "enrollment" || args[0] == "enrollments") {
				if len(args) != 3 {
					return usagef("create enrollment needs the method and the identity: edgectl create enrollment ott|updb|ottca IDENTITY")
				}
				return nil
			}
			return argsSpec("create", []string{"RESOURCE"}, []string{"NAME"})(cmd, args)
		},
		ValidArgsFunction: completeRecords(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "enrollment" || args[0] == "enrollments" {
				if len(bf.sets) > 0 || bf.file != "" {
					return usagef("create enrollment takes --duration, --username, --ca and --jwt-file, not --set or -f")
				}
				ef.jwtFile = jwtFile
				return createEnrollment(cmd, args[1], args[2], &ef)
			}
			if cmd.Flags().Changed("duration") || ef.username != "" || ef.ca != "" {
				return usagef("--duration, --username and --ca are for enrollments")
			}
			r, c, err := resourceClient(cmd, args[0], func(r api.ResourceInfo) error {
				router := r.Path == "edge-routers" || r.Path == "routers"
				if r.Path != "identities" && (typ != "" || roleAttrs != "" || (jwtFile != "" && !router)) {
					return usagef("--type and --role-attributes are for identities, --jwt-file for identities and routers; use --set")
				}
				return nil
			})
			if err != nil {
				return err
			}
			isIdentity := r.Path == "identities"
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
			var created struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(data, &created)
			if jwtFile != "" {
				rec, _, err := c.do(http.MethodGet, "/"+r.Path+"/"+created.ID, nil)
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
			fmt.Println(created.ID)
			return nil
		},
	}
	bf.add(cmd)
	cmd.Flags().StringVar(&typ, "type", "", "identities: User, Device, Service, Router or Default")
	cmd.Flags().StringVar(&roleAttrs, "role-attributes", "", "identities: a,b")
	cmd.Flags().StringVar(&jwtFile, "jwt-file", "", "identities, edge routers, routers, enrollments: write the enrollment JWT to this file")
	cmd.Flags().DurationVar(&ef.duration, "duration", 24*time.Hour, "enrollments: how long the enrollment stays valid")
	cmd.Flags().StringVar(&ef.username, "username", "", "updb enrollments: the username (default: the identity's name)")
	cmd.Flags().StringVar(&ef.ca, "ca", "", "ottca enrollments: the CA (name or id)")
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
		Args:              argsNamed("update", "RESOURCE", "NAME|ID"),
		ValidArgsFunction: completeRecords(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			roles := cmd.Flags().Changed("role-attributes")
			r, c, err := resourceClient(cmd, args[0], func(r api.ResourceInfo) error {
				if typ != "" && r.Path != "identities" {
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
			id, err := c.resolve(r, args[1])
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
			if _, _, err := c.do(http.MethodPatch, "/"+r.Path+"/"+url.PathEscape(id), body); err != nil {
				return err
			}
			fmt.Println(id)
			return nil
		},
	}
	bf.add(cmd)
	cmd.Flags().StringVar(&typ, "type", "", "identities: User, Device, Service, Router or Default")
	cmd.Flags().StringVar(&roleAttrs, "role-attributes", "", "the role attributes, a,b (\"\" for none)")
	return cmd
}

// argsNamed checks that a command got exactly the arguments named, saying
// which are missing or too many.
func argsNamed(command string, names ...string) cobra.PositionalArgs {
	return argsSpec(command, names, nil)
}

// argsSpec checks a command's arguments: the required ones, then at most
// the optional ones, saying which are missing or which are too many.
func argsSpec(command string, required, optional []string) cobra.PositionalArgs {
	usage := strings.Join(required, " ")
	for _, o := range optional {
		usage += " [" + o + "]"
	}
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) < len(required):
			return usagef("%s needs %s: edgectl %s %s", command, strings.Join(required[len(args):], " and "), command, usage)
		case len(args) > len(required)+len(optional):
			return usagef("%s takes %s, then nothing more (got %q too)", command, usage, args[len(required)+len(optional):])
		}
		return nil
	}
}

func deleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "delete RESOURCE NAME|ID...",
		Short:             "Delete records",
		ValidArgsFunction: completeRecords(true),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return argsNamed("delete", "RESOURCE", "NAME|ID")(cmd, args)
			}
			return nil
		},
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

// roleResources are the resources the role arrays of policies select.
var roleResources = map[string]string{"identityRoles": "identities", "serviceRoles": "services",
	"edgeRouterRoles": "edge-routers", "postureCheckRoles": "posture-checks"}

// refResources are the fields that hold the id of another record (or a list
// of ids: configs), by the resource they name.
var refResources = map[string]string{"configTypeId": "config-types", "authPolicyId": "auth-policies",
	"identityId": "identities", "serviceId": "services", "caId": "cas", "configs": "configs"}

// resolveRoleNames turns names into ids where the API takes ids: "@name"
// entries of role arrays become "@id", and reference fields (configTypeId,
// configs, authPolicyId, ...) take a name or an id.
func (c *client) resolveRoleNames(body map[string]any) error {
	for field, path := range roleResources {
		roles, ok := body[field].([]any)
		if !ok {
			continue
		}
		r, err := resourceByName(path)
		if err != nil {
			return err
		}
		for i, e := range roles {
			s, _ := e.(string)
			if !strings.HasPrefix(s, "@") {
				continue
			}
			id, err := c.resolve(r, s[1:])
			if err != nil {
				return fmt.Errorf("%s[%d] %q: %w", field, i, s, err)
			}
			roles[i] = "@" + id
		}
	}
	for field, path := range refResources {
		r, err := resourceByName(path)
		if err != nil {
			return err
		}
		switch v := body[field].(type) {
		case string:
			id, err := c.resolve(r, v)
			if err != nil {
				return fmt.Errorf("%s: %w", field, err)
			}
			body[field] = id
		case []any:
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					continue
				}
				id, err := c.resolve(r, s)
				if err != nil {
					return fmt.Errorf("%s[%d]: %w", field, i, err)
				}
				v[i] = id
			}
		}
	}
	return nil
}

// completeRecords completes a resource command's arguments in the shell:
// the resource kinds first, then (for commands that take a record) the
// names of its records that start with what is typed, from the controller
// of the login profile.
func completeRecords(takesRecord bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch {
		case len(args) == 0:
			var out []string
			for _, r := range api.ManagementResources() {
				if strings.HasPrefix(r.Path, toComplete) {
					out = append(out, r.Path)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case len(args) == 1 && takesRecord:
			r, err := resourceByName(args[0])
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			c, err := newClient(cmd)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			field := "id"
			if r.Named {
				field = "name"
			}
			filter := ""
			if toComplete != "" {
				filter = field + ` contains "` + strings.ReplaceAll(toComplete, `"`, `\"`) + `"`
			}
			items, err := c.listAll("/"+r.Path, filter, 100)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, it := range items {
				if v, _ := it[field].(string); strings.HasPrefix(v, toComplete) {
					out = append(out, v)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// namesForIDs rewrites, in records about to be shown as a table, the ids
// that stand for other records into their names: "@id" entries of role
// arrays and the reference fields (configs, configTypeId, identityId...).
// An id whose record is gone, or one it cannot look up, stays as it is.
func (c *client) namesForIDs(items []map[string]any) {
	wanted := map[string]map[string]bool{} // resource path -> ids
	want := func(path, id string) {
		if wanted[path] == nil {
			wanted[path] = map[string]bool{}
		}
		wanted[path][id] = true
	}
	for _, it := range items {
		for field, path := range roleResources {
			for _, e := range asList(it[field]) {
				if s, _ := e.(string); strings.HasPrefix(s, "@") {
					want(path, s[1:])
				}
			}
		}
		for field, path := range refResources {
			if s, ok := it[field].(string); ok && s != "" {
				want(path, s)
			}
			for _, e := range asList(it[field]) {
				if s, ok := e.(string); ok {
					want(path, s)
				}
			}
		}
	}
	names := map[string]map[string]string{}
	for path, ids := range wanted {
		r, err := resourceByName(path)
		if err != nil || !r.Named {
			continue
		}
		quoted := make([]string, 0, len(ids))
		for id := range ids {
			quoted = append(quoted, `"`+strings.ReplaceAll(id, `"`, `\"`)+`"`)
		}
		recs, err := c.listAll("/"+path, "id in ["+strings.Join(quoted, ",")+"]", 0)
		if err != nil {
			continue
		}
		names[path] = map[string]string{}
		for _, rec := range recs {
			id, _ := rec["id"].(string)
			name, _ := rec["name"].(string)
			names[path][id] = name
		}
	}
	name := func(path, id string) string {
		if n := names[path][id]; n != "" {
			return n
		}
		return id
	}
	for _, it := range items {
		for field, path := range roleResources {
			for i, e := range asList(it[field]) {
				if s, _ := e.(string); strings.HasPrefix(s, "@") {
					it[field].([]any)[i] = "@" + name(path, s[1:])
				}
			}
		}
		for field, path := range refResources {
			if s, ok := it[field].(string); ok && s != "" {
				it[field] = name(path, s)
			}
			for i, e := range asList(it[field]) {
				if s, ok := e.(string); ok {
					it[field].([]any)[i] = name(path, s)
				}
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
