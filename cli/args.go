package cli

// Arguments of the resource commands: how many, what is missing, and their
// completion in the shell.

import (
	"strings"

	"edgectl/api"

	"github.com/spf13/cobra"
)

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
