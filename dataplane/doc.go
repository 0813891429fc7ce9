// Package dataplane is the controller's side of the routers. It keeps the
// state routers share with this node: the connected routers (admitted on
// their control channel, ALPN "ziti-ctrl" on the API port), the circuits
// this node routed, and the links routers report to it. It tells routers
// of the model's changes (the edge sync and the router data model), routes
// circuits for dials and moves them when their paths fail, and shows all of
// it to the APIs (isOnline, syncStatus, circuits, links).
//
// What a router may do is decided from the replicated model only; which
// routers are connected, their circuits and their links are node-local: a
// router holds a channel to every node, and each node reports its own.
//
// What it must never do:
//   - block a router's reader on another router: a handler on a reader
//     sends other routers only urgent messages (send), and anything that
//     waits runs on the router's pools (handlers.go, background.go); a
//     router that connects or leaves tells the others on their own queues
//     (peers.go), so a slow one holds up neither;
//   - start a goroutine without goAttach, or make a call of its own
//     (a Raft write, a request to a router) outside the Manager's context,
//     which Close cancels;
//   - write Raft on a reader or while holding a lock: writes run on the
//     pools (removeTerminator, createTerminator, extend) or in the caller's
//     goroutine (fabricmgmt's fixes);
//   - hold a table's lock across a send: the tables (circuittable.go,
//     linktable.go) are released before any message goes out;
//   - find paths or judge fabric validations itself: path finding is the
//     pure package path, the Fabric API's checks the package fabricmgmt.
//
// The files, by step:
//
//	manager.go      Config, the Manager and a Router, New/Start/Close, Status, the connected routers
//	admit.go        admission: ServeTLS, admit, join, serve, drop, watch
//	away.go         a router whose channel closed: away (its circuits kept) until back (reconciled) or gone
//	hello.go        the hello's version and capability headers
//	handlers.go     every message a router sends, on its reader or on a pool; send, reply, request
//	background.go   goAttach, the per-router pools, the Manager's context
//	session.go      session checks shared by the dial and the terminators; edge errors
//	dial.go         the dial in numbered steps; routeOn, routeResult
//	circuits.go     Circuit, ending circuits, faults, confirmations, access lost
//	circuittable.go the circuit table: building, live and moving circuits
//	reroute.go      moving circuits: a router gone, a link failed or changed, smart rerouting
//	paths.go        the snapshot path finding runs on (package path)
//	terminators.go  terminators routers create, update and remove; their check on connect
//	tunnel.go       a router's own tunneler: its terminators and circuits as its Router identity
//	requestcheck.go a router's requests held to its own: refused, counted, audited
//	logsample.go    refusals logged sampled
//	links.go        link messages and an operator's link changes
//	linktable.go    the link table
//	peers.go        link listeners announced to peers; a link's dialer verified
//	modelsync.go    the FSM's changes, queued and dispatched to routers
//	edgesync.go     the edge sync of each router: hello, full state, change queue
//	rdm.go rdmsync.go   the router data model: its events, its log and subscriptions
//	rdmstate.go     the full state's one encoding, shared by the routers that need it
//	extend.go       router certificate extension
//	ctrladdrs.go    the cluster's control addresses told to routers
//	events.go       router events
//	dpevents.go     data-plane events at their sites: circuits, terminators, routers, links, usage
//	metrics.go      the Prometheus metrics and content-type names
//	fabric.go       the Manager's view for fabricmgmt, and the Fabric API's entry points
//
// Sub-packages: path (graph, costs, Dijkstra, terminator choice, a
// circuit's routes, smart-reroute selection), fabricmgmt (validations and
// inspections), wire (the routers' messages, as OpenZiti encodes them),
// dpevent (the data-plane events' ring buffer, filter and OpenZiti's
// formats).
package dataplane
