package main

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"edgectl/bench/benchkit"
)

// counts is what one side gave a controller.
type counts struct {
	perRouter []int       // terminators per router, sorted
	total     int         // terminators
	perHost   map[int]int // hosts by their number of terminators
	twice     int         // (host, router) pairs with more than one terminator
	circuits  int         // dials that succeeded
	dials     int         // dials tried
}

// hostShape is perHost as "3×1000" (1,000 hosts with 3 terminators each),
// the most first.
func (c counts) hostShape() string {
	var ks []int
	for k := range c.perHost {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	slices.Reverse(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d×%d", k, c.perHost[k]))
	}
	return strings.Join(parts, ", ")
}

// tally lists the terminators of service (through the Fabric API, 500 a
// page) and counts them per router (each of routers, by id, even with
// none) and per host (the hosting identity, hostId).
func tally(a *benchkit.API, service string, routers []string) (counts, error) {
	c := counts{perHost: map[int]int{}}
	byRouter := map[string]int{}
	for _, id := range routers {
		byRouter[id] = 0
	}
	byHost := map[string]int{}
	pairs := map[[2]string]int{}
	filter := benchkit.Filter(fmt.Sprintf(`service.name = "%s"`, service))
	for offset := 0; ; offset += 500 {
		out, err := a.Do(http.MethodGet, fmt.Sprintf("%s/terminators?limit=500&offset=%d&%s", benchkit.FabricAPI, offset, filter), nil)
		if err != nil {
			return c, err
		}
		page, _ := out["data"].([]any)
		for _, t := range page {
			r, _ := benchkit.JGet(t, "router", "id").(string)
			if r == "" {
				r, _ = benchkit.JGet(t, "routerId").(string)
			}
			h, _ := benchkit.JGet(t, "hostId").(string)
			if _, ok := byRouter[r]; !ok {
				return c, fmt.Errorf("terminator %v: router %q is none of the run's", benchkit.JGet(t, "id"), r)
			}
			byRouter[r]++
			byHost[h]++
			pairs[[2]string{h, r}]++
			c.total++
		}
		if len(page) < 500 {
			break
		}
	}
	for _, n := range byRouter {
		c.perRouter = append(c.perRouter, n)
	}
	slices.Sort(c.perRouter)
	for _, n := range byHost {
		c.perHost[n]++
	}
	for _, n := range pairs {
		if n > 1 {
			c.twice++
		}
	}
	return c, nil
}

// count is the count of terminators matching filter.
func count(a *benchkit.API, filter string) (int, error) {
	out, err := a.Do(http.MethodGet, benchkit.FabricAPI+"/terminators?limit=1&"+benchkit.Filter(filter), nil)
	if err != nil {
		return 0, err
	}
	n, ok := benchkit.JGet(out, "meta", "pagination", "totalCount").(float64)
	if !ok {
		return 0, errors.New("no totalCount")
	}
	return int(n), nil
}
