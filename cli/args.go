package cli

// Positional arguments: what each command takes, what is missing or too
// many, and their completion in the shell.

import (
	"fmt"
	"strings"

	"edgectl/api"

	"github.com/spf13/cobra"
)

// argsWhat says, for a command, what each positional argument its Use names
// stands for ("URL": "the controller URL"); its check is the command's
// Args. The Use line is the one place the arguments are declared: the words
// after the command's name, up to the first flag, each NAME (required),
// [NAME] (optional, after the required), NAME... (one or more) or
// [NAME...] (any number). A missing argument is named in words, with the
// command's Example when it has one, else its usage; an extra one is quoted.
type argsWhat map[string]string

// noArgs is the Args of a command that takes no positional argument.
var noArgs = argsWhat(nil).check

// positional is one positional argument of a Use line.
type positional struct {
	name               string
	optional, variadic bool
}

// positionals are the positional arguments a Use line names.
func positionals(use string) []positional {
	words := strings.Fields(use)
	var out []positional
	for _, w := range words[min(1, len(words)):] {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[-") {
			break
		}
		p := positional{name: w}
		if inner, ok := strings.CutPrefix(p.name, "["); ok {
			p.name, p.optional = strings.TrimSuffix(inner, "]"), true
		}
		p.name, p.variadic = strings.CutSuffix(p.name, "...")
		out = append(out, p)
	}
	return out
}

// argCounts are how many arguments pos needs, and how many it takes at
// most (-1: any number).
func argCounts(pos []positional) (required, most int) {
	most = len(pos)
	for i, p := range pos {
		if !p.optional {
			required = i + 1
		}
		if p.variadic {
			most = -1
		}
	}
	return required, most
}

// check is a cobra.PositionalArgs: args against the positional arguments
// of cmd's Use line.
func (w argsWhat) check(cmd *cobra.Command, args []string) error {
	pos := positionals(cmd.Use)
	required, most := argCounts(pos)
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	usage := cmd.CommandPath()
	if _, rest, ok := strings.Cut(cmd.Use, " "); ok {
		usage += " " + strings.TrimSpace(rest)
	}
	switch {
	case len(args) < required:
		var missing []string
		for _, p := range pos[len(args):required] {
			missing = append(missing, w.what(p.name))
		}
		hint := ": " + usage
		if ex, _, _ := strings.Cut(strings.TrimSpace(cmd.Example), "\n"); ex != "" {
			hint = ", e.g. " + strings.TrimSpace(ex)
		}
		return usagef("%s: missing %s%s", path, joinAnd(missing), hint)
	case most >= 0 && len(args) > most:
		extra := make([]string, 0, len(args)-most)
		for _, a := range args[most:] {
			extra = append(extra, fmt.Sprintf("%q", a))
		}
		s := ""
		if len(extra) > 1 {
			s = "s"
		}
		if most == 0 {
			return usagef("%s: extra argument%s %s: %s takes no arguments", path, s, strings.Join(extra, " "), path)
		}
		return usagef("%s: extra argument%s %s: %s", path, s, strings.Join(extra, " "), usage)
	}
	return nil
}

// what is what the argument name stands for, else the name itself.
func (w argsWhat) what(name string) string {
	if s := w[name]; s != "" {
		return s
	}
	return name
}

// joinAnd joins a list as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(l []string) string {
	if len(l) < 2 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
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
