module edgectl

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/go-immutable-radix v1.3.1
	// go-memdb: the in-memory model (MVCC reads, secondary indexes); go-immutable-radix: its side trees.
	github.com/hashicorp/go-memdb v1.3.5
	// raft stays at 1.7.3: 1.8 needed a go-metrics version that raft-boltdb/v2 2.3.1 did not provide (raft-boltdb
	// is gone since v0.2.0; moving to 1.8 is a change of its own).
	github.com/hashicorp/raft v1.7.3
	// raft-wal: the Raft log, term and vote; one append and one fsync per batch (cluster/logstore.go, docs/performance.md).
	github.com/hashicorp/raft-wal v0.4.2
	github.com/julienschmidt/httprouter v1.3.0
	github.com/pquerna/otp v1.5.0
	github.com/prometheus/client_golang v1.25.0
	// jsonschema: config type schemas, a complete validator that reports the failing path.
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	// bbolt: raft-wal's meta store.
	go.etcd.io/bbolt v1.3.6 // indirect
	golang.org/x/crypto v0.58.0
	golang.org/x/text v0.43.0
)

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/chromedp/cdproto v0.0.0-20250724212937-08a3db8b4327
	github.com/chromedp/chromedp v0.14.2
	github.com/getkin/kin-openapi v0.152.0
	github.com/go-json-experiment/json v1.27.2
	github.com/gorilla/websocket v1.5.3
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	google.golang.org/protobuf v1.36.12
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/armon/go-metrics v0.4.1 // indirect
	github.com/benbjohnson/immutable v0.4.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/coreos/etcd v3.3.27+incompatible // indirect
	github.com/coreos/go-systemd v0.0.0-20191104093116-d3cd4ed1dbcf // indirect
	github.com/coreos/pkg v0.0.0-20220810130054-c7d1c02cb6cf // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/hashicorp/go-metrics v0.5.4 // indirect
	github.com/hashicorp/go-msgpack/v2 v2.1.2 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/exp v0.0.0-20220827204233-334a2380cb91 // indirect
)

// Patched copies: watch channels made on first use, a cheaper set of writable nodes (third_party/README.md).
replace (
	github.com/hashicorp/go-immutable-radix => ./third_party/go-immutable-radix
	github.com/hashicorp/go-memdb => ./third_party/go-memdb
)
