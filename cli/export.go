package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"edgectl/api"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// export and apply: the network as a file of names, not ids, and back.
//
// A record is exported as the fields its create takes (from the served
// OpenAPI document), with references written as names (role entries @name, and the
// reference fields of refResources). Records the controller makes itself
// (the default admin and auth policy, the built-in config types, system
// edge router policies) are left out. Apply compares each record with the
// file in that same form, so applying the file an export wrote changes
// nothing.

// exportKinds are the exported resources, in the order apply creates them
// (a record only names records of earlier kinds): the API's description
// gives each its place.
var exportKinds = sync.OnceValue(func() []string {
	var rs []api.ResourceInfo
	for _, r := range managementResources() {
		if r.Export > 0 {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b api.ResourceInfo) int { return a.Export - b.Export })
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
})

// generatedFields are never exported: the controller makes them.
var generatedFields = map[string]bool{"id": true, "_links": true, "createdAt": true, "updatedAt": true, "version": true}

// controllerMade reports whether the controller made rec itself (the
// API's description marks such records).
func controllerMade(kind string, rec map[string]any) bool {
	r, err := resourceByName(kind)
	return err == nil && r.IsBuiltin(rec)
}

// routerIdentity reports whether rec is the identity of an edge router's
// tunneler: it is exported (its attributes and hosting settings are the
// user's) and applied after the edge routers, which make it, but it goes
// only with its router or the router's isTunnelerEnabled, never by prune.
func routerIdentity(kind string, rec map[string]any) bool {
	return kind == "identities" && rec["typeId"] == "Router"
}

// network is what export reads: every exported record of every kind, and
// id → name of every record, for writing references as names.
type network struct {
	records map[string][]map[string]any
	names   map[string]map[string]string // resource → id → name
	fields  map[string]map[string]bool   // resource → fields its create takes (nil: all but the generated)
}

func (c *client) readNetwork(kinds []string) (*network, error) {
	nw := &network{records: map[string][]map[string]any{}, names: map[string]map[string]string{}, fields: map[string]map[string]bool{}}
	need := map[string]bool{}
	for _, k := range kinds {
		need[k] = true
	}
	for _, path := range append(exportKinds(), "identity-types") {
		items, err := c.listAll("/"+path, "", 0)
		if err != nil {
			return nil, err
		}
		nw.names[path] = map[string]string{}
		for _, it := range items {
			nw.names[path][cell(it["id"])] = cell(it["name"])
		}
		if !need[path] {
			continue
		}
		for _, it := range items {
			if !controllerMade(path, it) {
				nw.records[path] = append(nw.records[path], it)
			}
		}
		if path != "posture-checks" { // its fields depend on the type: all but the generated
			// The fields a create takes (a config's type is set at create
			// only), less the requests that are not state (an identity's
			// enrollment).
			if schema := c.operationSchema(http.MethodPost, "/"+path); schema != nil {
				props, _ := schema["properties"].(map[string]any)
				nw.fields[path] = map[string]bool{}
				for f := range props {
					nw.fields[path][f] = f != "enrollment"
				}
			}
		}
	}
	return nw, nil
}

// exported is rec in the file's form.
func (nw *network) exported(kind string, rec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range rec {
		if generatedFields[k] || (nw.fields[kind] != nil && !nw.fields[kind][k]) {
			continue
		}
		out[k] = nw.named(k, v)
	}
	if kind == "identities" { // the view's type is an object; a create takes the type's id (its name)
		out["type"] = rec["typeId"]
	}
	return jsonNormal(out).(map[string]any)
}

// named writes the ids of a field as names.
func (nw *network) named(field string, v any) any {
	roleResources, refResources := fieldResources()
	if path, ok := roleResources[field]; ok {
		roles, _ := v.([]any)
		out := make([]any, 0, len(roles))
		for _, r := range roles {
			s, _ := r.(string)
			if strings.HasPrefix(s, "@") {
				if n, ok := nw.names[path][s[1:]]; ok {
					s = "@" + n
				}
			}
			out = append(out, s)
		}
		return out
	}
	if path, ok := refResources[field]; ok {
		switch x := v.(type) {
		case string:
			if n, ok := nw.names[path][x]; ok {
				return n
			}
		case []any:
			out := make([]any, 0, len(x))
			for _, e := range x {
				s, _ := e.(string)
				if n, ok := nw.names[path][s]; ok {
					s = n
				}
				out = append(out, s)
			}
			return out
		}
	}
	return v
}

// jsonNormal gives v the shapes JSON decoding gives (float64 numbers, []any,
// map[string]any), so that values from a file and from the API compare.
func jsonNormal(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// exportFile is the network in the file's form, records sorted by name.
func (nw *network) exportFile(kinds []string) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, k := range kinds {
		items := []map[string]any{}
		for _, rec := range nw.records[k] {
			items = append(items, nw.exported(k, rec))
		}
		sort.Slice(items, func(i, j int) bool { return cell(items[i]["name"]) < cell(items[j]["name"]) })
		out[k] = items
	}
	return out
}

// kindsOf checks resource names for export and apply (all when none).
func kindsOf(args []string) ([]string, error) {
	if len(args) == 0 {
		return exportKinds(), nil
	}
	var out []string
	for _, k := range exportKinds() {
		for _, a := range args {
			r, err := resourceByName(a)
			if err != nil {
				return nil, err
			}
			if r.Path == k && !contains(out, k) {
				out = append(out, k)
			}
		}
	}
	if len(out) != len(args) {
		return nil, usagef("export and apply take: %s", strings.Join(exportKinds(), ", "))
	}
	return out, nil
}

func exportCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "export [RESOURCE...]",
		Short: "Write the network as names, not ids (no secrets, no generated fields), as YAML or JSON",
		Args:  argsWhat{"RESOURCE": "a resource kind"}.check,
		Long: "Write the network as names, not ids (no secrets, no generated fields), as YAML or JSON.\n" +
			"Resources, in apply order: " + strings.Join(exportKinds(), ", ") + ".",
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return usagef("-o %q: use yaml or json", output)
			}
			kinds, err := kindsOf(args)
			if err != nil {
				return err
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			nw, err := c.readNetwork(kinds)
			if err != nil {
				return err
			}
			return printValue(nw.exportFile(kinds), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "yaml or json")
	return cmd
}

func applyCmd() *cobra.Command {
	var file string
	var dryRun, prune bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE [--dry-run] [--prune]",
		Short: "Make the controller match a file written by export: create, update, and with --prune delete",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("apply needs -f FILE (- for standard input)")
			}
			var raw []byte
			var err error
			if file == "-" {
				raw, err = readAllStdin()
			} else {
				raw, err = os.ReadFile(file)
			}
			if err != nil {
				return fmt.Errorf("-f: %w", err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				return usagef("-f %s: neither YAML nor JSON: %v", file, err)
			}
			want := map[string][]map[string]any{}
			var kinds []string
			for k, v := range jsonNormal(normalizeYAML(doc)).(map[string]any) {
				r, err := resourceByName(k)
				if err != nil || !contains(exportKinds(), r.Path) {
					return usagef("-f %s: %q is not a resource export writes", file, k)
				}
				items, _ := v.([]any)
				for i, it := range items {
					m, ok := it.(map[string]any)
					if !ok || cell(m["name"]) == "-" || cell(m["name"]) == "" {
						return usagef("-f %s: %s[%d] has no name", file, k, i)
					}
					want[r.Path] = append(want[r.Path], m)
				}
				kinds = append(kinds, r.Path)
			}
			kinds, _ = kindsOf(kinds)
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			return c.apply(kinds, want, dryRun, prune)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the file export wrote (YAML or JSON), - for standard input")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change, change nothing")
	cmd.Flags().BoolVar(&prune, "prune", false, "also delete the records of the file's resources that it does not list")
	return cmd
}

// apply creates and updates in dependency order, then (prune) deletes in
// the reverse order, printing each change as it goes.
func (c *client) apply(kinds []string, want map[string][]map[string]any, dryRun, prune bool) error {
	prefix := ""
	if dryRun {
		prefix = "(dry run) "
	}
	changes := 0
	for _, kind := range kinds {
		nw, err := c.readNetwork([]string{kind}) // fresh: earlier kinds may have just been created
		if err != nil {
			return err
		}
		existing := map[string]map[string]any{}
		for _, rec := range nw.records[kind] {
			existing[cell(rec["name"])] = rec
		}
		for _, item := range want[kind] {
			name := cell(item["name"])
			cur, ok := existing[name]
			if !ok {
				fmt.Printf("%s+ %s %s\n", prefix, singular(kind), name)
				changes++
				if dryRun {
					continue
				}
				body := jsonNormal(item).(map[string]any)
				if err := c.resolveRoleNames(body); err != nil {
					return fmt.Errorf("%s %s: %w", singular(kind), name, err)
				}
				if _, _, err := c.do(http.MethodPost, "/"+kind, body); err != nil {
					return fmt.Errorf("%s %s: %w", singular(kind), name, err)
				}
				continue
			}
			have := nw.exported(kind, cur)
			patch := map[string]any{}
			var fields []string
			for k, v := range item {
				if !reflect.DeepEqual(have[k], v) {
					patch[k] = v
					fields = append(fields, k)
				}
			}
			if len(patch) == 0 {
				continue
			}
			sort.Strings(fields)
			fmt.Printf("%s~ %s %s: %s\n", prefix, singular(kind), name, strings.Join(fields, ", "))
			changes++
			if dryRun {
				continue
			}
			patch = jsonNormal(patch).(map[string]any)
			if err := c.resolveRoleNames(patch); err != nil {
				return fmt.Errorf("%s %s: %w", singular(kind), name, err)
			}
			if _, _, err := c.do(http.MethodPatch, "/"+kind+"/"+url.PathEscape(cell(cur["id"])), patch); err != nil {
				return fmt.Errorf("%s %s: %w", singular(kind), name, err)
			}
		}
	}
	if prune {
		for i := len(kinds) - 1; i >= 0; i-- {
			kind := kinds[i]
			nw, err := c.readNetwork([]string{kind})
			if err != nil {
				return err
			}
			keep := map[string]bool{}
			for _, item := range want[kind] {
				keep[cell(item["name"])] = true
			}
			for _, rec := range nw.records[kind] {
				if keep[cell(rec["name"])] || routerIdentity(kind, rec) {
					continue
				}
				fmt.Printf("%s- %s %s\n", prefix, singular(kind), cell(rec["name"]))
				changes++
				if dryRun {
					continue
				}
				if _, _, err := c.do(http.MethodDelete, "/"+kind+"/"+url.PathEscape(cell(rec["id"])), nil); err != nil {
					return fmt.Errorf("%s %s: %w", singular(kind), cell(rec["name"]), err)
				}
			}
		}
	}
	if changes == 0 {
		fmt.Println("no changes")
	}
	return nil
}
