package controller

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"edgectl/fsm"
	"edgectl/store"
)

// The built-in records (store/builtins.go) and the step that adds them to a
// cluster, new or upgraded.

// tunnelDefinitions are the JSON schema definitions the tunneler config
// types share: addresses, ports, protocols, health checks and the hosting
// terminator of host.v1 and host.v2. Written for edgectl from the data the
// tunnelers read; the config type names and ids are OpenZiti's.
//
//go:embed builtin/tunnel-definitions.json
var tunnelDefinitions json.RawMessage

// BuiltinRecords are the built-in identity type and config types, stamped at.
func BuiltinRecords(at time.Time) *store.Builtins {
	base := func(id string) store.Base { return store.Base{ID: id, CreatedAt: at, UpdatedAt: at} }
	configType := func(id, name string, schema map[string]any) *store.ConfigType {
		schema["$id"] = "https://edgectl.dev/schemas/" + name + ".json"
		raw, err := json.Marshal(schema)
		if err != nil {
			panic(fmt.Sprintf("built-in schema %s: %v", name, err)) // constant data
		}
		return &store.ConfigType{Base: base(id), Named: store.Named{Name: name}, Schema: raw}
	}
	ref := func(def string) map[string]any { return map[string]any{"$ref": "#/definitions/" + def} }
	withDefs := func(m map[string]any) map[string]any {
		m["definitions"] = tunnelDefinitions
		return m
	}
	hostPort := func(extra map[string]any) map[string]any {
		props := map[string]any{"hostname": map[string]any{"type": "string"}, "port": ref("port")}
		for k, v := range extra {
			props[k] = v
		}
		return withDefs(map[string]any{"type": "object", "additionalProperties": false,
			"required": []string{"hostname", "port"}, "properties": props})
	}
	return &store.Builtins{
		IdentityTypes: []*store.IdentityType{{Base: base(store.IdentityTypeDefault), Named: store.Named{Name: store.IdentityTypeDefault}}},
		ConfigTypes: []*store.ConfigType{
			configType(store.ConfigTypeInterceptV1, "intercept.v1", withDefs(map[string]any{
				"type": "object", "additionalProperties": false,
				"required": []string{"protocols", "addresses", "portRanges"},
				"properties": map[string]any{
					"protocols":  ref("protocolSet"),
					"addresses":  ref("addressSet"),
					"portRanges": ref("portRangeSet"),
					"dialOptions": map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
						"identity": map[string]any{"type": "string"}, "connectTimeoutSeconds": ref("seconds")}},
					"sourceIp":               map[string]any{"type": "string"},
					"allowedSourceAddresses": ref("addressSet"),
				},
			})),
			configType(store.ConfigTypeHostV1, "host.v1", withDefs(ref("terminator"))),
			configType(store.ConfigTypeHostV2, "host.v2", withDefs(map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"terminators"},
				"properties": map[string]any{"terminators": map[string]any{"type": "array", "minItems": 1, "items": ref("terminator")}},
			})),
			configType(store.ConfigTypeTunnelerClientV1, "ziti-tunneler-client.v1", hostPort(nil)),
			configType(store.ConfigTypeTunnelerServerV1, "ziti-tunneler-server.v1", hostPort(map[string]any{
				"protocol":   map[string]any{"type": []string{"string", "null"}, "enum": []any{"tcp", "udp", nil}},
				"portChecks": map[string]any{"type": "array", "items": ref("portCheck")},
				"httpChecks": map[string]any{"type": "array", "items": ref("httpCheck")},
			})),
			// proxy.v1: the port a router's tunneler listens on for the service,
			// and the protocols it accepts there.
			configType(store.ConfigTypeProxyV1, "proxy.v1", map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"port", "protocols"},
				"properties": map[string]any{
					"port": map[string]any{"type": "number", "minimum": 1, "maximum": 65535},
					"protocols": map[string]any{"type": "array", "minItems": 1,
						"items": map[string]any{"type": "string", "enum": []string{"tcp", "udp"}}},
					"binding": map[string]any{"type": "string"},
				},
			}),
		},
	}
}

// upgradeCheckInterval is how often the leader looks for what an upgrade
// step still has to do (until nothing is left: after an upgrade, once every
// member can apply the commands of the steps).
const upgradeCheckInterval = 5 * time.Second

// runUpgradeSteps brings the model up to what this release expects, from
// the leader, in the background: the built-in records, the event log, the
// data-plane keys and the identities of edge routers whose tunneler was
// enabled before router identities existed. (Reissuing enrollment JWTs signed the old way, which
// only builds before v0.1.0 made, is gone since v0.2.0.) Each step is a command
// of this release's command version, so a cluster with an older member
// waits (the writer's gate refuses until then).
func (n *Node) runUpgradeSteps() {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		wait := time.Duration(0)
		for {
			select {
			case <-n.stopping:
				return
			case <-time.After(wait):
			}
			wait = upgradeCheckInterval
			b := BuiltinRecords(time.Now().UTC())
			tx := n.Store.Read()
			missing, eventsOff := tx.MissingBuiltins(b), !tx.Events().Enabled && !n.cfg.NoEventLog
			clusterOff := !tx.Events().Cluster && !n.cfg.NoEventLog
			noKeys := tx.DataPlaneKeys() == nil
			routerIdentities := len(tx.RouterIdentitiesMissing()) > 0
			// While a member cannot apply the router identity commands, edge
			// routers are written without identities (api.routerWrite): the
			// step watches for them until the upgrade is done.
			upgrading := n.commandGate(fsm.CmdRouterIdentitiesEnsure) != nil
			if !missing && !eventsOff && !clusterOff && !noKeys && !routerIdentities && !upgrading {
				return
			}
			if !n.Raft.IsLeader() {
				wait = time.Second // a new cluster elects its first leader in about that
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if missing {
				if _, err := n.Writer.Do(ctx, fsm.CmdBuiltinsEnsure, b); err != nil {
					n.log.Info("upgrade step: built-in records not added yet", "reason", err)
				}
			}
			if eventsOff {
				if _, err := n.Writer.Do(ctx, fsm.CmdEventsEnable, n.wantedRetention(DefaultEventRetention())); err != nil {
					n.log.Info("upgrade step: event log not on yet", "reason", err)
				}
			}
			if clusterOff && !eventsOff {
				if _, err := n.Writer.Do(ctx, fsm.CmdEventsCluster, struct{}{}); err != nil {
					n.log.Info("upgrade step: cluster events not on yet", "reason", err)
				}
			}
			if noKeys {
				if keys, err := NewDataPlaneKeys(time.Now().UTC()); err != nil {
					n.log.Warn("upgrade step: data-plane keys", "error", err)
				} else if _, err := n.Writer.Do(ctx, fsm.CmdDataPlaneKeysEnsure, keys); err != nil {
					n.log.Info("upgrade step: data-plane keys not made yet", "reason", err)
				}
			}
			if routerIdentities {
				if res, err := n.Writer.Do(ctx, fsm.CmdRouterIdentitiesEnsure, fsm.At{At: time.Now().UTC()}); err != nil {
					n.log.Info("upgrade step: router identities not made yet", "reason", err)
				} else {
					var ids []string
					_ = json.Unmarshal(res, &ids)
					n.log.Info("upgrade step: upgrading edge routers with a tunneler: their identities made", "routers", strings.Join(ids, ","))
				}
			}
			cancel()
		}
	}()
}

// DefaultEventRetention is the event log's retention when it is turned on.
func DefaultEventRetention() store.EventState {
	return store.EventState{RetentionCount: fsm.DefaultEventRetentionCount, RetentionSeconds: fsm.DefaultEventRetentionSeconds}
}
