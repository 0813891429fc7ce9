package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runLine runs a command line on a fresh command tree in which no command
// may run (arguments it accepts stop before the command does anything) and
// returns the exit status, the line written to stderr and what cobra itself
// wrote (a usage dump, which must not come).
func runLine(args ...string) (code int, line, cobraOut string) {
	root := rootCmd()
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return errors.New("the arguments were accepted") }
	var out, stderr bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	code = execute(root, args, &stderr)
	return code, stderr.String(), out.String()
}

// Every command that takes positional arguments, found by walking the
// command tree (so a new command is covered as it is added), and every
// command without subcommands: too few arguments name in words what is
// missing, with the command's example or usage; too many quote the extra
// one; both in one line on stderr, exit status 2, no usage dump.
func TestEveryCommandNamesMissingAndExtraArguments(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no login profile: nothing can be reached
	checked := 0
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		pos := positionals(cmd.Use)
		if !cmd.HasParent() || len(pos) == 0 && cmd.HasSubCommands() {
			return // an extra word there is an unknown command
		}
		checked++
		path := strings.Fields(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "))
		name := strings.Join(path, " ")
		required, most := argCounts(pos)
		placeholders := func(n int) []string {
			out := append([]string{}, path...)
			for i := 1; i <= n; i++ {
				out = append(out, fmt.Sprintf("arg%d", i))
			}
			return out
		}
		hint := ": " + cmd.CommandPath()
		if _, rest, ok := strings.Cut(cmd.Use, " "); ok {
			hint += " " + rest
		}
		if cmd.Example != "" {
			hint = ", e.g. " + strings.Split(cmd.Example, "\n")[0]
		}
		for given := 0; given < required; given++ {
			args := placeholders(given)
			code, line, out := runLine(args...)
			if code != 2 || out != "" || strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "edgectl: "+name+": missing ") ||
				strings.Contains(line, "missing "+pos[given].name) || !strings.HasSuffix(line, hint+"\n") {
				t.Errorf("edgectl %s: exit %d, stderr %q, cobra wrote %q; want exit 2 and one line naming in words what is missing, ending %q",
					strings.Join(args, " "), code, line, out, hint)
			}
		}
		if most >= 0 {
			args := placeholders(most + 1)
			code, line, out := runLine(args...)
			if code != 2 || out != "" || strings.Count(line, "\n") != 1 ||
				!strings.HasPrefix(line, fmt.Sprintf("edgectl: %s: extra argument %q", name, args[len(args)-1])) {
				t.Errorf("edgectl %s: exit %d, stderr %q, cobra wrote %q; want exit 2 and one line quoting the extra argument",
					strings.Join(args, " "), code, line, out)
			}
		}
	}
	walk(rootCmd())
	if checked < 20 {
		t.Fatalf("only %d commands checked: the walk missed the tree", checked)
	}
	// The messages as a person reads them.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"login"}, "edgectl: login: missing the controller URL, e.g. edgectl login https://127.0.0.1:1280 -u admin\n"},
		{[]string{"why", "alice"}, "edgectl: why: missing the service: edgectl why IDENTITY SERVICE\n"},
		{[]string{"why"}, "edgectl: why: missing the identity and the service: edgectl why IDENTITY SERVICE\n"},
		{[]string{"why", "alice", "web", "db", "x"}, `edgectl: why: extra arguments "db" "x": edgectl why IDENTITY SERVICE` + "\n"},
		{[]string{"version", "now"}, `edgectl: version: extra argument "now": version takes no arguments` + "\n"},
		{[]string{"create", "enrollment", "ott"}, "edgectl: create enrollment: missing the identity: edgectl create enrollment METHOD IDENTITY\n"},
	} {
		if code, line, _ := runLine(c.args...); code != 2 || line != c.want {
			t.Errorf("edgectl %s: exit %d, %q; want exit 2, %q", strings.Join(c.args, " "), code, line, c.want)
		}
	}
}
