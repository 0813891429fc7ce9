package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"edgectl/api"
	"edgectl/controller"

	"github.com/spf13/cobra"
)

// Cluster commands talk to the node running on --data-dir through its local
// admin socket (DIR/admin.sock) when --data-dir is given; else through the
// login profile when there is one; else to the node on ./data.

// socketClient is an HTTP client that reaches the node's admin socket.
func socketClient(dataDir string) *http.Client {
	sock := filepath.Join(dataDir, controller.AdminSocket)
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}}
}

// adminCall sends one Management API request through the socket and returns its data.
func adminCall(dataDir, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, "http://local"+api.ManagementPrefix+path, rd)
	resp, err := socketClient(dataDir).Do(req)
	if err != nil {
		return nil, fmt.Errorf("is a node running on %s? %w", dataDir, unwrapURLError(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("unexpected answer (%d): %.200s", resp.StatusCode, raw)
	}
	if env.Error != nil {
		return nil, &apiError{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message}
	}
	return env.Data, nil
}

func clusterCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Cluster membership, through the node on --data-dir, else the login profile, else the node on ./data",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", "", "data directory of a node running on this machine, reached through its admin socket (default: the login profile, else ./data)")
	call := func(cmd *cobra.Command, method, path string, body any) (json.RawMessage, error) {
		return clusterCall(cmd, dataDir, method, path, body)
	}

	list := &cobra.Command{Use: "list", Short: "List the members", Args: noArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		data, err := call(cmd, http.MethodGet, "/cluster/members", nil)
		if err != nil {
			return err
		}
		var members []map[string]any
		_ = json.Unmarshal(data, &members)
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tADDRESS\tLEADER\tVOTER\tAPI")
		for _, m := range members {
			apiURL := ""
			if a, ok := m["apiAddresses"].(map[string]any); ok {
				if l, ok := a["edge-management"].([]any); ok && len(l) > 0 {
					apiURL, _ = l[0].(map[string]any)["url"].(string)
				}
			}
			fmt.Fprintf(tw, "%v\t%v\t%v\t%v\t%s\n", m["id"], m["address"], m["isLeader"], m["isVoter"], apiURL)
		}
		return tw.Flush()
	}}

	var ttl time.Duration
	joinToken := &cobra.Command{Use: "join-token", Short: "Make a one-use join token", Args: noArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		data, err := call(cmd, http.MethodPost, "/cluster/join-tokens", map[string]any{"ttlSeconds": int64(ttl.Seconds())})
		if err != nil {
			return err
		}
		var out struct {
			Token     string    `json:"token"`
			ExpiresAt time.Time `json:"expiresAt"`
		}
		_ = json.Unmarshal(data, &out)
		fmt.Println(out.Token)
		fmt.Fprintf(os.Stderr, "valid once, until %s\n", out.ExpiresAt.Format(time.RFC3339))
		return nil
	}}
	joinToken.Flags().DurationVar(&ttl, "ttl", time.Hour, "how long the join token stays valid")

	var nonvoter bool
	add := &cobra.Command{Use: "add ID ADDRESS", Short: "Add a node that has this cluster's certificates",
		Args: argsWhat{"ID": "the node id of the new member", "ADDRESS": "its cluster address (HOST:PORT)"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := call(cmd, http.MethodPost, "/cluster/members", map[string]any{"id": args[0], "address": args[1], "isVoter": !nonvoter})
			return err
		}}
	add.Flags().BoolVar(&nonvoter, "nonvoter", false, "add the member as a non-voter")

	remove := &cobra.Command{Use: "remove ID", Short: "Remove a member", Args: argsWhat{"ID": "the node id of the member"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := call(cmd, http.MethodDelete, "/cluster/members/"+args[0], nil)
			return err
		}}
	transfer := &cobra.Command{Use: "transfer-leadership [ID]", Short: "Move leadership (to ID, or to the most up-to-date voter)",
		Args: argsWhat{"ID": "the node id of the member to lead"}.check,
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{}
			if len(args) == 1 {
				body["id"] = args[0]
			}
			_, err := call(cmd, http.MethodPost, "/cluster/transfer-leadership", body)
			return err
		}}

	var output string
	var maxLag uint64
	status := &cobra.Command{Use: "status", Short: "Every member: leader, online, applied index, lag, version; exits 1 when one is down or lags",
		Long: "Every member as the answering node sees it. Like `etcdctl endpoint health`, it exits 1 (after printing) when a\n" +
			"member does not answer or lags more than --max-lag commands behind the commit index, so scripts and probes can use it.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return usagef("-o %q: use table or json", output)
			}
			data, err := call(cmd, http.MethodGet, "/controllers", nil)
			if err != nil {
				return err
			}
			var members []map[string]any
			_ = json.Unmarshal(data, &members)
			var out []map[string]any
			for _, m := range members {
				out = append(out, map[string]any{"id": m["id"], "address": m["address"], "isLeader": m["isLeader"],
					"isOnline": m["isOnline"], "lastAppliedIndex": m["lastAppliedIndex"], "lag": m["lag"],
					"version": m["version"], "commandVersion": m["commandVersion"]})
			}
			if output == "json" {
				if err := printJSON(out); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tADDRESS\tLEADER\tONLINE\tAPPLIED\tLAG\tVERSION")
				for _, m := range out {
					applied, lag := cell(m["lastAppliedIndex"]), cell(m["lag"])
					if m["isOnline"] != true { // what it last said is no state of now
						applied, lag = "unknown", "unknown"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(m["id"]), cell(m["address"]), cell(m["isLeader"]),
						cell(m["isOnline"]), applied, lag, cell(m["version"]))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			return unhealthy(out, maxLag)
		}}
	status.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	status.Flags().Uint64Var(&maxLag, "max-lag", 1000, "commands a member may be behind the commit index and still count as healthy")

	cmd.AddCommand(list, joinToken, add, remove, transfer, status)
	return cmd
}

// clusterCall sends a Management API request for a cluster command: to the
// node on dataDir through its admin socket when given, else through the
// login profile when there is one, else to the node on ./data.
func clusterCall(cmd *cobra.Command, dataDir, method, path string, body any) (json.RawMessage, error) {
	if dataDir == "" {
		if ps, err := loadProfiles(); err == nil && ps[profileName(cmd)] != nil {
			c, err := newClient(cmd)
			if err != nil {
				return nil, err
			}
			data, _, err := c.do(method, path, body)
			return data, err
		}
		dataDir = "./data"
	}
	return adminCall(dataDir, method, path, body)
}

// unhealthy is the error of a cluster status with a member that does not
// answer or lags more than maxLag commands, nil when every member is well.
func unhealthy(members []map[string]any, maxLag uint64) error {
	for _, m := range members {
		if m["isOnline"] != true {
			return fmt.Errorf("member %s (%s) does not answer", cell(m["id"]), cell(m["address"]))
		}
		if lag, ok := m["lag"].(float64); ok && uint64(lag) > maxLag {
			return fmt.Errorf("member %s (%s) is %d commands behind the commit index (--max-lag %d)", cell(m["id"]), cell(m["address"]), uint64(lag), maxLag)
		}
	}
	return nil
}
