package api

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"

	"edgectl/store"
)

func TestZZDumpRoutes(t *testing.T) {
	s := New(Deps{Store: store.New()}, Config{})
	var lines []string
	for _, r := range s.routes {
		lines = append(lines, fmt.Sprintf("%d %s %s %s %s %d", r.api, r.method, r.path, r.op, r.tag, r.access))
	}
	sort.Strings(lines)
	var order []string
	for _, r := range s.routes {
		order = append(order, fmt.Sprintf("%d %s %s", r.api, r.method, r.path))
	}
	a, _ := json.Marshal(s.openAPI(clientAPI))
	b, _ := json.Marshal(s.openAPI(managementAPI))
	out := os.Getenv("DUMP")
	os.WriteFile(out+".routes", []byte(fmt.Sprintln(lines)), 0o644)
	os.WriteFile(out+".order", []byte(fmt.Sprintln(order)), 0o644)
	os.WriteFile(out+".openapi", append(a, b...), 0o644)
}
