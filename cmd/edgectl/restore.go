package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"edgectl/controller"
)

const restoreUsage = `Usage:
  edgectl restore --data-dir DIR [--api-addr HOST:PORT] [--cluster-addr HOST:PORT]
                  [--advertise HOST] [--cluster-advertise HOST:PORT] [--node-id ID] FILE

Makes DIR (new or empty) a new one-node cluster holding the snapshot FILE, a file
downloaded from GET /edge/management/v1/database/snapshots/{id}. Give the same
address flags you will give 'edgectl run': they go into the node's certificates
and into the new cluster's Raft configuration.
`

// restoreCmd builds a new one-node cluster from a snapshot file.
func restoreCmd(args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), restoreUsage); fs.PrintDefaults() }
	var cfg controller.Config
	fs.StringVar(&cfg.DataDir, "data-dir", "", "the new node's data directory (must be new or empty)")
	fs.StringVar(&cfg.APIAddr, "api-addr", "127.0.0.1:1280", "HTTPS address of both APIs (its host goes into the API certificate)")
	fs.StringVar(&cfg.ClusterAddr, "cluster-addr", "127.0.0.1:6262", "mTLS address of Raft and forwarding")
	fs.StringVar(&cfg.Advertise, "advertise", "", "name or address other nodes and clients use (default: host of --api-addr)")
	fs.StringVar(&cfg.ClusterAdvertise, "cluster-advertise", "", "HOST:PORT other nodes dial for Raft (default: --advertise with the port of --cluster-addr)")
	fs.StringVar(&cfg.NodeID, "node-id", "", "node id (default: generated)")
	// Flags may come before or after FILE.
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) != 1 || cfg.DataDir == "" {
		fmt.Fprint(os.Stderr, restoreUsage)
		return errors.New("restore needs --data-dir DIR and one snapshot FILE")
	}
	res, err := controller.Restore(cfg, pos[0])
	if err != nil {
		return err
	}

	fmt.Printf("Restored %s (taken at log index %d) into %s as a new one-node cluster.\n", pos[0], res.Index, cfg.DataDir)
	fmt.Printf("  node id:         %s\n", res.NodeID)
	fmt.Printf("  Raft address:    %s\n", res.ClusterAddr)
	fmt.Printf("  CA bundle:       %s (the cluster's CA is kept: clients that trusted it still do)\n", filepath.Join(cfg.DataDir, "pki", "ca-bundle.pem"))
	fmt.Printf("  records:         %s\n", countsLine(res.Counts))
	if len(res.DroppedControllers) > 0 {
		fmt.Printf("  left out:        the records of the old cluster's nodes (%s)\n", strings.Join(res.DroppedControllers, ", "))
	}
	fmt.Println("\nStart it with:")
	fmt.Printf("  edgectl run %s\n", runFlags(fs))
	fmt.Println("\nThe admin accounts and passwords are the snapshot's (--admin-password is not used), and the API")
	fmt.Println("sessions that were valid when the snapshot was taken are valid again until they expire.")
	fmt.Println("Add nodes as usual: 'edgectl cluster join-token --data-dir DIR', then 'edgectl run --join ... --join-token ...'.")
	return nil
}

// runFlags repeats the flags that `edgectl run` needs to resume the restored node.
func runFlags(fs *flag.FlagSet) string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "node-id" { // kept in the data dir
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
