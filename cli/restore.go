package cli

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"edgectl/controller"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const restoreLong = `Makes DIR (new or empty) a new one-node cluster holding the snapshot FILE, a file
downloaded from GET /edge/management/v1/database/snapshots/{id} (or written by
'edgectl backup'). Give the same address flags you will give 'edgectl run': they
go into the node's certificates and into the new cluster's Raft configuration.`

// restoreCmd builds a new one-node cluster from a snapshot file.
func restoreCmd() *cobra.Command {
	var cfg controller.Config
	cmd := &cobra.Command{
		Use:   "restore FILE --data-dir DIR",
		Short: "Make a new one-node cluster from a snapshot file",
		Long:  restoreLong,
		Args:  argsWhat{"FILE": "the snapshot file"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg.DataDir == "" {
				return usagef("restore needs --data-dir DIR")
			}
			// A bad address flag is a mistake in the command line (exit 2),
			// as it is for run.
			if err := cfg.ValidateGiven(cmd.Flags().Changed); err != nil {
				return usageError{err}
			}
			res, err := controller.Restore(cfg, args[0])
			if err != nil {
				return err
			}
			fmt.Printf("Restored %s (taken at log index %d) into %s as a new one-node cluster.\n", args[0], res.Index, cfg.DataDir)
			fmt.Printf("  node id:         %s\n", res.NodeID)
			fmt.Printf("  Raft address:    %s\n", res.ClusterAddr)
			fmt.Printf("  CA bundle:       %s (the cluster's CA is kept: clients that trusted it still do)\n", filepath.Join(cfg.DataDir, "pki", "ca-bundle.pem"))
			fmt.Printf("  records:         %s\n", countsLine(res.Counts))
			if len(res.DroppedControllers) > 0 {
				fmt.Printf("  left out:        the records of the old cluster's nodes (%s)\n", strings.Join(res.DroppedControllers, ", "))
			}
			fmt.Println("\nStart it with:")
			fmt.Printf("  edgectl run %s\n", runFlags(cmd.Flags()))
			fmt.Println("\nThe admin accounts and passwords are the snapshot's (--admin-password is not used), and the API")
			fmt.Println("sessions that were valid when the snapshot was taken are valid again until they expire.")
			fmt.Println("Add nodes as usual: 'edgectl cluster join-token --data-dir DIR', then 'edgectl run --join ... --join-token ...'.")
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.DataDir, "data-dir", "", "the new node's data directory (must be new or empty)")
	addressFlags(fs, &cfg)
	fs.StringVar(&cfg.NodeID, "node-id", "", "node id (default: generated)")
	return cmd
}

// runFlags repeats the flags that `edgectl run` needs to resume the restored node.
func runFlags(fs *pflag.FlagSet) string {
	var out []string
	fs.Visit(func(f *pflag.Flag) {
		if f.Name != "node-id" && f.Name != "profile" { // kept in the data dir; not a run flag
			out = append(out, "--"+f.Name, shellQuote(f.Value.String()))
		}
	})
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '.' || r == '/' || r == ':' || r == '-' || r == '_' || r == '[' || r == ']' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// countsLine renders the non-zero record counts, sorted by table.
func countsLine(counts map[string]int) string {
	var parts []string
	for t, n := range counts {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
