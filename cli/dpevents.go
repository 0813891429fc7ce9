package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Data-plane events (docs/api-events.md): `edgectl events --data-plane`
// reads those of the node the profile talks to, from GET
// /data-plane-events or, with --follow, its stream; --all reads them
// beside the audit trail.

type eventsOpts struct {
	filter, output string
	follow, all    bool
	fromID         int64
	fromSet        bool
}

func dataPlaneEvents(c *client, o eventsOpts) error {
	var mu sync.Mutex
	locked := func(p func(json.RawMessage)) func(json.RawMessage) {
		return func(raw json.RawMessage) { mu.Lock(); defer mu.Unlock(); p(raw) }
	}
	printDP, printAudit := locked(dataPlanePrinter(o.output)), locked(eventPrinter(o.output))
	lastDP, lastAudit := int64(-1), int64(-1)
	var err error
	if !o.follow || o.fromSet {
		if o.all {
			if lastAudit, err = printKept(c, "/events", 500, o.filter, o.fromID, printAudit); err != nil {
				return err
			}
		}
		if lastDP, err = printKept(c, "/data-plane-events", 1000, o.filter, o.fromID, printDP); err != nil {
			return err
		}
	}
	if !o.follow {
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !o.all {
		return followEvents(ctx, c, "/data-plane-events/stream", o.filter, lastDP, printDP)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- followEvents(ctx, c, "/events/stream", o.filter, lastAudit, printAudit) }()
	go func() { errs <- followEvents(ctx, c, "/data-plane-events/stream", o.filter, lastDP, printDP) }()
	err = <-errs // the first to end (an error, or the interrupt) ends both
	cancel()
	<-errs
	return err
}

// dataPlanePrinter prints a data-plane event as a line of text (what
// happened, to whom, on which node) or as its JSON.
func dataPlanePrinter(output string) func(raw json.RawMessage) {
	return linePrinter(output, func(e map[string]any) string {
		return fmt.Sprintf("%s.%s  %s  on %s", str(e["namespace"]), str(e["action"]), dataPlaneWhat(e), str(e["nodeId"]))
	})
}

// dataPlaneWhat says what a data-plane event is about, in a few words.
func dataPlaneWhat(e map[string]any) string {
	name := func(n, id string) string { return firstNonEmpty(str(e[n]), str(e[id]), "-") }
	var parts []string
	switch str(e["namespace"]) {
	case "circuit":
		parts = append(parts, str(e["circuitId"]), name("identityName", "identityId")+" → "+name("serviceName", "serviceId"))
		if p := strs(e["pathNames"]); len(p) > 0 {
			parts = append(parts, "via "+strings.Join(p, " > "))
		}
		if c := str(e["cause"]); c != "" {
			parts = append(parts, "cause "+c)
		}
	case "usage":
		switch str(e["action"]) {
		case "identity":
			parts = append(parts, name("identityName", "identityId"))
		case "service":
			parts = append(parts, name("serviceName", "serviceId"))
		default:
			parts = append(parts, str(e["circuitId"]), name("identityName", "identityId")+" → "+name("serviceName", "serviceId"))
		}
		parts = append(parts, "at "+name("routerName", "routerId"))
	case "terminator":
		parts = append(parts, str(e["terminatorId"]), name("serviceName", "serviceId"), "on "+name("routerName", "routerId"))
	case "router":
		parts = append(parts, name("routerName", "routerId"))
	case "link":
		parts = append(parts, str(e["linkId"]), str(e["srcRouterId"])+" → "+str(e["dstRouterId"]))
	}
	if v, ok := e["durationMillis"].(float64); ok {
		parts = append(parts, "after "+ageInWords(time.Duration(v)*time.Millisecond))
	}
	if in, ok := e["bytesIn"].(float64); ok {
		out, _ := e["bytesOut"].(float64)
		parts = append(parts, fmt.Sprintf("%.0f bytes in, %.0f out", in, out))
	}
	if r := str(e["reason"]); r != "" {
		parts = append(parts, "("+r+")")
	}
	return strings.Join(parts, " ")
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}
