# edgectl: the two commands a new user needs are `make run` and `make test`.
GO ?= go
# The release number: the file VERSION (CHANGELOG.md says what each release holds).
VERSION ?= $(shell cat VERSION)
REVISION := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.revision=$(REVISION) -X main.buildDate=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build install package run cluster test ziti oracle bench bench-micro bench-load bench-events bench-sidebyside bench-scale bench-dial bench-mesh bench-fleet bench-fidelity scale chaos chaos-dataplane openziti fuzz race vet clean third-party-check

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/edgectl ./cmd/edgectl

# edgectl on the PATH: PREFIX/bin (default ~/.local/bin; `make install PREFIX=/usr/local` as root).
PREFIX ?= $(HOME)/.local
install: build
	install -d $(PREFIX)/bin
	install -m 0755 bin/edgectl $(PREFIX)/bin/edgectl
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "add $(PREFIX)/bin to your PATH: export PATH=\"$(PREFIX)/bin:\$$PATH\"" ;; esac

# The Debian package, dist/edgectl_$(VERSION)_amd64.deb: the binary, a hardened systemd unit, a default config,
# a system user and data dir, a daily backup timer (deploy/debian). nfpm, a maintained packager for Go projects,
# builds it from the module proxy (docs/operations.md, "The Debian package").
NFPM ?= github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
package:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -ldflags "$(LDFLAGS)" -o bin/edgectl ./cmd/edgectl
	mkdir -p dist
	EDGECTL_VERSION=$(patsubst v%,%,$(VERSION)) $(GO) run $(NFPM) package -f deploy/debian/nfpm.yaml -p deb -t dist/

# A one-node cluster on 127.0.0.1:1280 with its data in ./data.
run: build
	./bin/edgectl run

# A three-node cluster on 127.0.0.1 (APIs on ports 1381-1383) with its data in ./cluster-data;
# it prints how to reach and stop it (scripts/cluster.sh stop).
cluster: build
	sh scripts/cluster.sh start

# OpenZiti's `ziti` v1.7.2 (router, tunnelers, enroll), built once into ~/.cache/edgectl (scripts/ziti.sh).
ziti:
	sh scripts/ziti.sh

# Unit tests, then the integration tests that start real nodes (and real OpenZiti routers: the
# cached ziti binary is built first if missing, about 8 minutes once). The data plane's and the control
# channel's unit tests run under the race detector (the circuit lifecycle with fake routers); every
# package's coverage is printed. The race run and the oracle (its own module) are mostly compiling on a
# fresh machine: they run beside the integration tests, which spend much of their time waiting on
# processes, and the target fails if any of the three does.
RACE_PKGS = ./dataplane/... ./ctrlchan/
test:
	EDGECTL_ZITI=$$(sh scripts/ziti.sh) && export EDGECTL_ZITI && \
	$(GO) vet ./... && \
	sh scripts/third_party.sh check && \
	(cd third_party/go-immutable-radix && $(GO) test -count=1 ./...) && \
	(cd third_party/go-memdb && $(GO) test -count=1 ./...) && \
	{ (cd integration/ziti && GOSUMDB=off $(GO) test -count=1 ./...) & oracle=$$!; \
	  $(GO) test -race -count=1 -cover $(RACE_PKGS) & race=$$!; \
	  $(GO) test -count=1 -cover -timeout 12m $$($(GO) list ./... | grep -v -e '^edgectl/dataplane' -e '^edgectl/ctrlchan$$'); rc=$$?; \
	  wait $$oracle || rc=1; wait $$race || rc=1; \
	  [ $$rc = 0 ] || echo "make test: FAILED (the unit and integration tests, the race run or the oracle: see above)" >&2; exit $$rc; }

# third_party/ is exactly the upstream releases plus the patches in third_party/patches (third_party/README.md):
# the releases come from the module proxy, the patches are applied to a temporary copy, any difference fails.
third-party-check:
	sh scripts/third_party.sh check

# The oracle: edgectl's control-channel framing and messages against OpenZiti's own packages (channel/v4 v4.2.41,
# ziti v1.7.2), in a module of its own that the main module never requires.
oracle:
	cd integration/ziti && GOSUMDB=off $(GO) vet ./... && GOSUMDB=off $(GO) test -count=1 ./...

# Benchmarks: every figure of docs/performance.md, each with its command (bench/README.md says what each tool
# measures). `make bench` runs them all in turn; each part has a target of its own.
bench: bench-micro bench-load bench-events bench-sidebyside bench-scale bench-dial bench-mesh bench-fleet bench-fidelity

# Go micro benchmarks of the packages (filters, the log store, lists, the model, the FSM, the router feed, authn).
bench-micro:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./store/filter/ ./cluster/
	$(GO) test -run '^$$' -bench 'ListIdentities|ClientServices_List50' -benchtime 2s ./api/
	$(GO) test -run '^$$' -bench 'OnLargeModel' -benchtime 100x ./store/
	$(GO) test -run '^$$' -bench 'SnapshotOfLargeModel|Dump_Events' -benchtime 3x ./store/
	$(GO) test -run '^$$' -bench 'ApplyBatch_IdentityCreate|DecodeEntry' -benchtime 2s -benchmem ./fsm/
	$(GO) test -run '^$$' -bench 'ChangeEvents_IdentityCreate' -benchtime 20000x -benchmem ./dataplane/
	$(GO) test -run '^$$' -bench 'FullState_10kIdentities' -benchtime 20x -benchmem ./dataplane/
	$(GO) test -run '^$$' -bench 'Names_MillionNames' -benchtime 2s -benchmem ./store/
	$(GO) test -run '^$$' -bench 'ListAfterRename' -benchtime 8000x ./store/
	$(GO) test -run '^$$' -bench 'Filter_Terminators10k' -benchtime 2s ./store/
	$(GO) test -run '^$$' -bench 'BenchmarkAuthn' -benchtime 3s ./api/
	$(GO) test -run '^$$' -bench 'EventStream_100SlowClients' -benchtime 1x ./api/

# HTTPS load on a real node, then on a three-node cluster (bench/loadbench).
bench-load: build
	$(GO) run ./bench/loadbench -bin bin/edgectl
	$(GO) run ./bench/loadbench -bin bin/edgectl -cluster -trials 3

# Writes with the event log on and off, in interleaved pairs.
bench-events:
	bash bench/events-onoff.sh 5 3s && bash bench/events-onoff.sh 5 3s dataplane

# Three edgectl nodes beside a three-member etcd, same load tool (bench/httpload).
bench-sidebyside:
	bash bench/sidebyside.sh 64 10 3

# The model at scale, a tenth of the full size (bench/scalebench; `make scale` for a million identities).
bench-scale:
	$(GO) run ./bench/scalebench -quick

# Dial setup through a real OpenZiti router, edgectl beside OpenZiti's own controller (bench/dialbench).
bench-dial: build
	$(GO) run ./bench/dialbench -edgectl bin/edgectl -ziti $$(sh scripts/ziti.sh)

# Three real OpenZiti routers in a mesh, edgectl beside OpenZiti's own controller (bench/meshbench): time to a
# usable path after the routers start, time to reroute an open stream when a link is cut, two-hop dial setup.
bench-mesh: build
	$(GO) run ./bench/meshbench -edgectl bin/edgectl -ziti $$(sh scripts/ziti.sh) -dials 100

# Simulated edge routers and their SDK clients over the real control protocol (bench/fleet): terminators, circuits
# and a SIGKILL restart on one edgectl node, on three, and on OpenZiti's own controller, at a modest size (the full
# size, 100 routers and 100,000 terminators, is in bench/README.md).
bench-fleet: build
	$(GO) run ./bench/fleet/cmd/fleet -edgectl bin/edgectl -ziti $$(sh scripts/ziti.sh) -cluster -routers 10 -hosts 100 -services 10 -terminators 2000 -circuits 1000 -budget 5m

# The fleet's fidelity (bench/fleet/cmd/fidelity): on edgectl and on OpenZiti's controller, 10 real `ziti router`
# processes and 1,000 real sdk-golang hosting identities (integration/sdk's sdkecho, 100 contexts to a process),
# with the fleet tool at the same size first (OpenZiti's controller answers its router creates 503 for minutes after
# the real side): terminators per router and per host, circuits, side by side. About 1.3 GiB of memory for the
# hosts and 25 minutes; the time is mostly the 1,000 `ziti edge enroll` runs per controller (docs/performance.md).
bench-fidelity: build
	cd integration/sdk && GOSUMDB=off GOWORK=off $(GO) build -o ../../bin/sdkecho .
	$(GO) run ./bench/fleet/cmd/fidelity -edgectl bin/edgectl -ziti $$(sh scripts/ziti.sh) -sdkecho bin/sdkecho -routers 10 -hosts 1000 -dials 200 \
		-fleet-first

# A million identities beside 100,000, the two sizes in their own processes taking turns request by request,
# so that the host's slow moments fall on both (issue 16's aims are ratios to 100k): about 8 minutes, 8 GiB of memory.
scale:
	$(GO) run ./bench/scalebench -identities 1000000 -paired 100000 -cluster=false -restart -gc-before -requests 2000

# The fault test at length: three nodes, clients over all of them, leader and followers
# killed, paused and cut off for 3 minutes, then every write and the register histories checked;
# it prints each restarted node's time to its first /readyz 200 and fails above 10 s. Campaign
# settings (clients, node flags, faults, roaming clients): docs/operations.md, "Chaos campaigns".
chaos:
	EDGECTL_CHAOS_DURATION=3m $(GO) test -count=1 -timeout 20m -run 'TestClusterChaos|TestRegisterChecker' -v ./integration/

# The data plane's fault test at length: three nodes, three real routers with links, hosting and dialing clients
# with open streams and new dials; nodes killed, paused, cut off from the routers and restarted in turn, routers
# restarted, a link cut, a host killed, for 3 minutes; each fault and the checks after it are printed
# (docs/operations.md, "Chaos for the data plane"). The nodes are started as the packaged socket unit starts
# them (their API ports held across restarts), the deployment in which a rolling restart meets the 5 s aim;
# EDGECTL_DPCHAOS_ACTIVATION= (empty) runs them without.
chaos-dataplane:
	rc=1; EDGECTL_ZITI=$$(sh scripts/ziti.sh) && export EDGECTL_ZITI && out=$$(mktemp) && \
	{ EDGECTL_DPCHAOS_ACTIVATION=$${EDGECTL_DPCHAOS_ACTIVATION-1} EDGECTL_DPCHAOS_DURATION=3m $(GO) test -count=1 -timeout 30m -run 'TestDataPlaneChaos' -v ./integration/ >$$out 2>&1; rc=$$?; } ; \
	[ -n "$$out" ] && grep -v '^\s*{\|^\s*20[0-9][0-9]-[0-9][0-9]-' $$out; echo "(the whole output, with every process's log: $$out)"; exit $$rc

# OpenZiti's own `ziti` CLI (v1.7.2, built from the module proxy) driven against a fresh node.
openziti:
	sh scripts/openziti-cli.sh

# The race detector over the unit tests and over real nodes (the integration tests build the edgectl they start
# with -race, and a race stops the node); about 6 minutes on 2 cores. The SDK program's test is left out: the race
# detector finds races in sdk-golang itself.
race:
	EDGECTL_ZITI=$$(sh scripts/ziti.sh) && export EDGECTL_ZITI && \
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /integration) && \
	GOFLAGS=-race GORACE="halt_on_error=1" $(GO) test -count=1 -timeout 30m -skip TestTraffic_SDKListenAndDial ./integration/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzReadMessage -fuzztime 60s ./ctrlchan/
	$(GO) test -run '^$$' -fuzz FuzzDecoders -fuzztime 60s ./dataplane/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzListeners$$' -fuzztime 60s ./dataplane/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzVerifyRouter$$' -fuzztime 60s ./dataplane/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzRouterLinks$$' -fuzztime 60s ./dataplane/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzMetrics$$' -fuzztime 60s ./dataplane/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzLinkStateUpdate$$' -fuzztime 60s ./dataplane/wire/
	$(GO) test -run '^$$' -fuzz FuzzCompile -fuzztime 60s ./store/filter/
	$(GO) test -run '^$$' -fuzz FuzzFastDecode -fuzztime 60s ./fsm/

vet:
	$(GO) vet ./...

clean:
	rm -rf bin data
