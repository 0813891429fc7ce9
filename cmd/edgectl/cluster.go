package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"edgectl/api"
	"edgectl/controller"
)

const clusterUsage = `Usage:
  edgectl cluster list                [--data-dir DIR]
  edgectl cluster join-token          [--data-dir DIR] [--ttl 1h]
  edgectl cluster add ID ADDRESS      [--data-dir DIR] [--nonvoter]
  edgectl cluster remove ID           [--data-dir DIR]
  edgectl cluster transfer-leadership [ID] [--data-dir DIR]

These talk to the node running on DIR through its local admin socket (DIR/admin.sock).
`

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
		return nil, fmt.Errorf("is a node running on %s? %w", dataDir, err)
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
		return nil, fmt.Errorf("unexpected answer (%d): %s", resp.StatusCode, raw)
	}
	if env.Error != nil {
		return nil, fmt.Errorf("%s: %s", env.Error.Code, env.Error.Message)
	}
	return env.Data, nil
}

func clusterCmd(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, clusterUsage)
		return errors.New("a cluster subcommand is required")
	}
	sub := args[0]
	fs := flag.NewFlagSet("cluster "+sub, flag.ContinueOnError)
	dataDir := fs.String("data-dir", "./data", "data directory of the running node")
	ttl := fs.Duration("ttl", time.Hour, "how long the join token stays valid")
	nonvoter := fs.Bool("nonvoter", false, "add the member as a non-voter")
	// Flags may come before or after the positional arguments.
	var pos []string
	rest := args[1:]
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	switch sub {
	case "list":
		data, err := adminCall(*dataDir, http.MethodGet, "/cluster/members", nil)
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
	case "join-token":
		data, err := adminCall(*dataDir, http.MethodPost, "/cluster/join-tokens", map[string]any{"ttlSeconds": int64(ttl.Seconds())})
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
	case "add":
		if len(pos) != 2 {
			return errors.New("usage: edgectl cluster add ID ADDRESS")
		}
		_, err := adminCall(*dataDir, http.MethodPost, "/cluster/members", map[string]any{"id": pos[0], "address": pos[1], "isVoter": !*nonvoter})
		return err
	case "remove":
		if len(pos) != 1 {
			return errors.New("usage: edgectl cluster remove ID")
		}
		_, err := adminCall(*dataDir, http.MethodDelete, "/cluster/members/"+pos[0], nil)
		return err
	case "transfer-leadership":
		body := map[string]any{}
		if len(pos) == 1 {
			body["id"] = pos[0]
		}
		_, err := adminCall(*dataDir, http.MethodPost, "/cluster/transfer-leadership", body)
		return err
	}
	fmt.Fprint(os.Stderr, clusterUsage)
	return fmt.Errorf("unknown cluster subcommand %q", strings.TrimSpace(sub))
}
