package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"
)

func checkOutput(o string) error {
	switch o {
	case "table", "wide", "json", "yaml":
		return nil
	}
	return usagef("-o %q: use table, wide, json or yaml", o)
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printValue(v any, output string) error {
	if output == "yaml" {
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(out)
		return err
	}
	return printJSON(v)
}

// printRecords prints a list: a table (id and the columns the API's
// description gives the resource, else id, name and a few telling fields;
// wide: every scalar field), or the records as the API gave them.
func printRecords(items []map[string]any, output string, columns []string) error {
	if items == nil {
		items = []map[string]any{}
	}
	if output == "json" || output == "yaml" {
		return printValue(items, output)
	}
	cols := tableColumns(items, output == "wide")
	if output == "table" && len(columns) > 0 {
		cols = append([]string{"id"}, columns...)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	labels := make([]string, len(cols))
	for i, c := range cols {
		labels[i] = columnLabel(c)
	}
	fmt.Fprintln(tw, strings.Join(labels, "\t"))
	for _, it := range items {
		var cells []string
		for _, c := range cols {
			cells = append(cells, humanCell(field(it, c), time.Now()))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d records\n", len(items))
	return nil
}

// tableColumns: id and name first, then the fields a reader looks for.
func tableColumns(items []map[string]any, wide bool) []string {
	present := map[string]bool{}
	for _, it := range items {
		for k, v := range it {
			if isScalarish(v) {
				present[k] = true
			}
		}
	}
	cols := []string{"id"}
	if present["name"] || len(items) == 0 {
		cols = append(cols, "name")
	}
	if !wide {
		// The fields that tell records of a kind apart: a policy's roles, a
		// config's type, a service's configs, an API session's identity and
		// last activity, an enrollment's identity, method and expiry.
		for _, k := range []string{"typeId", "type", "semantic", "roleAttributes", "identityRoles", "serviceRoles",
			"edgeRouterRoles", "postureCheckRoles", "configType", "configs", "identity", "method", "ipAddress",
			"isVerified", "isOnline", "lastActivityAt", "expiresAt"} {
			if present[k] {
				cols = append(cols, k)
			}
		}
		return cols
	}
	var rest []string
	for k := range present {
		if k != "id" && k != "name" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(cols, rest...)
}

func isScalarish(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		_, named := x["name"]
		return named
	case []any:
		for _, e := range x {
			if _, ok := e.(map[string]any); ok {
				return false
			}
		}
	}
	return true
}

// cell renders a value for a table: lists joined, references by name.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, cell(e))
		}
		return strings.Join(parts, ",")
	case map[string]any:
		if n, ok := x["name"]; ok {
			return cell(n)
		}
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// humanCell is cell for a person reading a table: a time is said relative
// to now ("3 min ago", "in 2 h"), with the date past a week; -o json and
// yaml keep the exact times.
func humanCell(v any, now time.Time) string {
	s, ok := v.(string)
	if !ok || len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return cell(v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return cell(v)
	}
	return relativeTime(t, now)
}

// relativeTime says when t is from now, to the unit a person uses.
func relativeTime(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var amount string
	switch {
	case d < 10*time.Second:
		return "now"
	case d < time.Minute:
		amount = fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		amount = fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		amount = fmt.Sprintf("%d h", int(d.Hours()))
	case d < 7*24*time.Hour:
		amount = fmt.Sprintf("%d days", int(d.Hours()/24))
	default:
		return t.Local().Format("2006-01-02 15:04")
	}
	if future {
		return "in " + amount
	}
	return amount + " ago"
}

// printDetail prints one record as "field: value" lines.
func printDetail(rec map[string]any) error {
	keys := make([]string, 0, len(rec))
	for k := range rec {
		if k != "_links" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	now := time.Now()
	for _, k := range keys {
		v := cell(rec[k])
		if h := humanCell(rec[k], now); h != v { // a time: exact, local, and how long ago
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				v = t.Local().Format("2006-01-02 15:04:05 MST") + " (" + h + ")"
			}
		}
		fmt.Fprintf(tw, "%s:\t%s\n", k, v)
	}
	return tw.Flush()
}

func readAllStdin() ([]byte, error) { return io.ReadAll(os.Stdin) }

// field is the value at a dotted path of a record (type.name).
func field(rec map[string]any, path string) any {
	var v any = rec
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// columnLabel is a table column's heading: the field in capitals (of a
// dotted path, the record it names, type.name: TYPE, else its last part), a
// boolean's "is" left out (isOnline: ONLINE).
func columnLabel(field string) string {
	if named, ok := strings.CutSuffix(field, ".name"); ok {
		field = named
	} else if i := strings.LastIndex(field, "."); i >= 0 {
		field = field[i+1:]
	}
	if len(field) > 2 && strings.HasPrefix(field, "is") && field[2] >= 'A' && field[2] <= 'Z' {
		field = field[2:]
	}
	return strings.ToUpper(field)
}
