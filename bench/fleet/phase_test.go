package fleet

import "testing"

// TestTerminatorRouter_AHostBindsThroughDistinctRouters: as sdk-golang
// hosts do (one listener per router, 3 at most by default), a host's
// terminators go through distinct routers until it has one on each, and
// every router makes its share, for the fidelity run's size (1,000 hosts,
// 3 each, 10 routers) and for sizes where hosts and routers share factors
// or not.
func TestTerminatorRouter_AHostBindsThroughDistinctRouters(t *testing.T) {
	for _, c := range []struct{ routers, hosts, perHost int }{
		{10, 1000, 3}, {10, 20, 10}, {3, 7, 3}, {100, 100, 1}, {4, 6, 9}, {10, 9, 3}, {10, 99, 12},
	} {
		perRouter := make([]int, c.routers)
		seen := map[[2]int]int{}
		for j := range c.hosts * c.perHost {
			r := terminatorRouter(j, c.routers, c.hosts)
			perRouter[r]++
			seen[[2]int{j % c.hosts, r}]++
		}
		for hr, k := range seen {
			if most := (c.perHost + c.routers - 1) / c.routers; k > most {
				t.Errorf("%+v: host %d has %d terminators through router %d, at most %d expected", c, hr[0], k, hr[1], most)
			}
		}
		want := c.hosts * c.perHost / c.routers
		for r, k := range perRouter {
			if k < want-c.perHost || k > want+c.perHost {
				t.Errorf("%+v: router %d makes %d terminators, about %d expected", c, r, k, want)
			}
		}
	}
}
