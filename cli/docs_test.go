package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command `edgectl help` lists is documented in docs/cli.md, and every
// flag of it is named there.
func TestEveryCommandIsInTheDocs(t *testing.T) {
	raw, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			path := sub.CommandPath()
			if !strings.Contains(doc, path) && !strings.Contains(doc, strings.TrimSuffix(path, " "+sub.Name())+" "+sub.Name()) &&
				!strings.Contains(doc, sub.Name()+"|") && !strings.Contains(doc, "|"+sub.Name()) {
				t.Errorf("docs/cli.md does not show %q", path)
			}
			sub.Flags().VisitAll(func(f *pflag.Flag) {
				if f.Name != "help" && !strings.Contains(doc, "--"+f.Name) && (f.Shorthand == "" || !strings.Contains(doc, "-"+f.Shorthand+" ")) {
					t.Errorf("docs/cli.md does not name --%s of %q", f.Name, path)
				}
			})
			walk(sub)
		}
	}
	walk(rootCmd())
}

// docs/cli.md names every resource an export writes.
func TestTheDocsNameEveryExportedResource(t *testing.T) {
	raw, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "## Declarative: export and apply")
	if start < 0 {
		t.Fatal("docs/cli.md has no export section")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end > 0 {
		section = section[:end+3]
	}
	for _, k := range exportKinds() {
		if !strings.Contains(section, "`"+k+"`") {
			t.Errorf("docs/cli.md's export section does not name %s", k)
		}
	}
}
