package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// `edgectl list circuits`: the circuits the node the profile talks to
// routed (GET /circuits), with who dials what, through which routers, and
// for how long, in words.

// isCircuits says whether a list command's resource is the circuits.
func isCircuits(name string) bool { return name == "circuits" || name == "circuit" }

func listCircuits(c *client, filter, output string, limit int) error {
	if err := checkOutput(output); err != nil {
		return err
	}
	items, err := c.listAll("/circuits", filter, limit)
	if err != nil {
		return err
	}
	if output == "json" || output == "yaml" {
		return printRecords(items, output, nil)
	}
	now := time.Now()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	header := "ID\tIDENTITY\tSERVICE\tPATH\tAGE"
	if output == "wide" {
		header += "\tTERMINATOR\tLINKS"
	}
	fmt.Fprintln(tw, header)
	for _, it := range items {
		var nodes, links []string
		if p, ok := it["path"].(map[string]any); ok {
			nodes = refNames(p["nodes"])
			links = refNames(p["links"])
		}
		age := "-"
		if t, err := time.Parse(time.RFC3339Nano, str(it["createdAt"])); err == nil {
			age = ageInWords(now.Sub(t))
		}
		row := []string{cell(it["id"]), refName(it["identity"], str(it["identityId"])), refName(it["service"], "-"),
			firstNonEmpty(strings.Join(nodes, " > "), "-"), age}
		if output == "wide" {
			row = append(row, refName(it["terminator"], "-"), firstNonEmpty(strings.Join(links, ","), "-"))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d circuits\n", len(items))
	return nil
}

// refName is the name of an entity reference ({id, name}), else def.
func refName(v any, def string) string {
	if m, ok := v.(map[string]any); ok {
		return firstNonEmpty(str(m["name"]), str(m["id"]), def)
	}
	return firstNonEmpty(def, "-")
}

func refNames(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, refName(x, "?"))
	}
	return out
}

// ageInWords says a duration as a person would: "12 seconds", "3 minutes",
// "1 hour 5 minutes", "2 days 4 hours".
func ageInWords(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	pair := func(a int64, au string, b int64, bu string) string {
		if b == 0 {
			return unit(a, au)
		}
		return unit(a, au) + " " + unit(b, bu)
	}
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return unit(int64(d/time.Second), "second")
	case d < time.Hour:
		return pair(int64(d/time.Minute), "minute", int64(d%time.Minute/time.Second), "second")
	case d < 24*time.Hour:
		return pair(int64(d/time.Hour), "hour", int64(d%time.Hour/time.Minute), "minute")
	}
	return pair(int64(d/(24*time.Hour)), "day", int64(d%(24*time.Hour)/time.Hour), "hour")
}

func listCircuitsCmd(cmd *cobra.Command, args []string, output string, limit int) error {
	c, err := newClient(cmd)
	if err != nil {
		return err
	}
	filter := ""
	if len(args) == 2 {
		filter = args[1]
	}
	return listCircuits(c, filter, output, limit)
}
