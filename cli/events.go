package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"edgectl/api"

	"github.com/spf13/cobra"
)

// eventsCmd prints the audit trail (docs/api-events.md): the events kept,
// from GET /events, or with --follow those after them as they are applied,
// from the SSE stream GET /events/stream.
func eventsCmd() *cobra.Command {
	var filter, output string
	var follow, dataPlane, all bool
	var fromID int64
	cmd := &cobra.Command{
		Use:   "events [--follow] [--filter F] [--from-id N] [-o text|json]",
		Short: "The audit trail: the events kept, or with --follow every new one as it happens",
		Long: "Prints the events of the cluster's log, oldest first: with --from-id N those after N, else every one kept.\n" +
			"--data-plane prints the data-plane events of the node instead (circuits, terminators, routers, links,\n" +
			"usage; --filter then takes their fields: namespace = \"circuit\" and cause = \"noTerminator\"); --all both.\n" +
			"--filter takes the conditions of GET /events (namespace = \"entity\" and entityType = \"identities\").\n" +
			"--follow prints each new event as the cluster applies it (the SSE stream), from now on, or after the kept\n" +
			"events past --from-id N; it reconnects where it left off, until interrupted. -o json prints one JSON\n" +
			"object a line.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return usagef("-o %q: use text or json", output)
			}
			if cmd.Flags().Changed("from-id") && fromID < 0 {
				return usagef("--from-id %d: must be an event id (0 or more)", fromID)
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			if dataPlane || all {
				return dataPlaneEvents(c, eventsOpts{filter: filter, output: output, follow: follow, all: all, fromID: fromID, fromSet: cmd.Flags().Changed("from-id")})
			}
			print := eventPrinter(output)
			last := int64(-1) // following from now on
			if !follow || cmd.Flags().Changed("from-id") {
				if last, err = printKept(c, "/events", 500, filter, fromID, print); err != nil {
					return err
				}
			}
			if !follow {
				return nil
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return followEvents(ctx, c, "/events/stream", filter, last, print)
		}}
	cmd.Flags().StringVar(&filter, "filter", "", `conditions of GET /events: namespace = "entity" and entityType = "identities"`)
	cmd.Flags().Int64Var(&fromID, "from-id", 0, "only the events after this id")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events as they happen")
	cmd.Flags().BoolVar(&dataPlane, "data-plane", false, "the data-plane events of the node the profile talks to (circuits, terminators, routers, links, usage) instead of the audit trail")
	cmd.Flags().BoolVar(&all, "all", false, "both the audit trail and the node's data-plane events (--filter then takes the fields both have: namespace, action, id)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json (one object a line)")
	return cmd
}

// eventPrinter prints one audit event as a line of text or as JSON.
func eventPrinter(output string) func(raw json.RawMessage) {
	return linePrinter(output, func(e map[string]any) string {
		what := cell(e["entityType"])
		if name := cell(e["entityName"]); name != "-" && name != "" {
			what += " " + name
		} else if id := cell(e["entityId"]); id != "-" && id != "" {
			what += " " + id
		}
		actor := "-"
		if a, ok := e["actor"].(map[string]any); ok {
			actor = firstNonEmpty(str(a["identityName"]), str(a["nodeId"]), "-")
		}
		return fmt.Sprintf("%s.%s  %s  by %s", cell(e["namespace"]), cell(e["action"]), what, actor)
	})
}

// linePrinter prints one event (its JSON) as JSON (-o json), or as a line
// of text: its id, its time in local time, then what line says of it.
func linePrinter(output string, line func(e map[string]any) string) func(raw json.RawMessage) {
	if output == "json" {
		return func(raw json.RawMessage) { fmt.Println(string(raw)) }
	}
	return func(raw json.RawMessage) {
		var e map[string]any
		if json.Unmarshal(raw, &e) != nil {
			return
		}
		at := cell(e["at"])
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
			at = t.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Printf("%s  %s  %s\n", cell(e["id"]), at, line(e))
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// printKept prints the kept events of list path (the audit events, the
// data-plane events) after fromID, page by page (limit a page), and returns
// the id of the last one (fromID when there was none).
func printKept(c *client, path string, limit int, filter string, fromID int64, print func(json.RawMessage)) (int64, error) {
	last := fromID
	for {
		q := url.Values{"limit": {strconv.Itoa(limit)}, "fromId": {strconv.FormatInt(last, 10)}}
		if filter != "" {
			q.Set("filter", filter)
		}
		data, _, err := c.do(http.MethodGet, path+"?"+q.Encode(), nil)
		if err != nil {
			return last, err
		}
		var page []json.RawMessage
		if err := json.Unmarshal(data, &page); err != nil {
			return last, fmt.Errorf("unexpected answer of %s: %w", path, err)
		}
		for _, raw := range page {
			var e struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(raw, &e)
			print(raw)
			last = max(last, e.ID)
		}
		if len(page) < limit {
			return last, nil
		}
	}
}

// followEvents prints the events after last (-1: from now on) from the
// stream, reconnecting from the last one printed when the connection drops
// or the server found it too slow, until ctx ends. An error the stream
// reports otherwise (the events it would resume from were compacted, a bad
// filter) ends it.
func followEvents(ctx context.Context, c *client, path, filter string, last int64, print func(json.RawMessage)) error {
	backoff := 200 * time.Millisecond
	for {
		err := streamOnce(ctx, c, path, filter, &last, print)
		if ctx.Err() != nil {
			return nil
		}
		var ae *apiError
		if errors.As(err, &ae) && ae.Code != "TOO_SLOW" {
			return err
		}
		fmt.Fprintf(os.Stderr, "edgectl: the event stream broke (%v); resuming after event %d\n", err, max(last, 0))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// streamOnce reads one connection of the SSE stream.
func streamOnce(ctx context.Context, c *client, path, filter string, last *int64, print func(json.RawMessage)) error {
	q := url.Values{}
	if *last >= 0 {
		q.Set("fromId", strconv.FormatInt(*last, 10))
	}
	if filter != "" {
		q.Set("filter", filter)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.p.URL, "/")+api.ManagementPrefix+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("zt-session", c.p.Token)
	req.Header.Set("Accept", "text/event-stream")
	hc := *c.http
	hc.Timeout = 0 // a stream lasts; the server's heartbeats keep it alive
	resp, err := hc.Do(req)
	if err != nil {
		return unwrapURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		var env struct {
			Error *struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(raw, &env) == nil && env.Error != nil {
			return &apiError{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message}
		}
		return fmt.Errorf("unexpected answer (%d): %.200s", resp.StatusCode, raw)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				payload := json.RawMessage(strings.Join(data, "\n"))
				if event == "lost" { // data-plane events the node no longer keeps: said, and the stream goes on
					fmt.Fprintf(os.Stderr, "edgectl: %s\n", payload)
					event, data = "", nil
					continue
				}
				if event == "error" {
					var e struct{ Code, Message string }
					_ = json.Unmarshal(payload, &e)
					return &apiError{Status: resp.StatusCode, Code: e.Code, Message: e.Message}
				}
				var e struct {
					ID int64 `json:"id"`
				}
				_ = json.Unmarshal(payload, &e)
				if e.ID > *last {
					print(payload)
					*last = e.ID
				}
			}
			event, data = "", nil
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}
