package store

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"edgectl/policy"
)

// SetTime sets the time of the command being applied: the time its proposer
// decided, carried in the log, so change markers are the same on every node.
func (tx *Tx) SetTime(t time.Time) { tx.at = t }

// Now is the time of the command being applied (SetTime).
func (tx *Tx) Now() time.Time { return tx.at }

// ServicePolicyType returns Dial or Bind for a service policy, "" if there is none.
func (tx *Tx) ServicePolicyType(policyID string) string {
	p, err := GetAs[*ServicePolicy](tx, KindServicePolicy, policyID)
	if err != nil {
		return ""
	}
	return p.Type
}

var _ policy.Graph = (*Tx)(nil)

// Change markers (side tree treeChanges) say when something that an
// identity's service list shows last changed: "i:ID" for an identity's own
// grants and overrides, "p:ID" for what a service policy grants, "s:ID" for a
// service as shown. When a service policy stops selecting more identities
// than are worth marking one by one (coarseLoss), the terms of its old
// selector are marked instead: "i*" (#all) for every identity and "r:ATTR"
// for the identities with that role attribute. Such a marker may also move
// the time of an identity that lost nothing: a client then refreshes a list
// that did not change, which costs it one request; a 5-second apply that
// stops every write of the cluster (a million marks) costs more.

// lostLink is a service policy link removed by the command being applied:
// sessions that relied on it are checked when the command finishes.
type lostLink struct {
	rel, policy, entity string
}

// lostSelection is a service policy's identity selector old, replaced by
// upd (nil when the policy went), whose identities were not listed one by
// one: Finish checks every session whose identity old selects and upd does
// not.
type lostSelection struct {
	rel      *relation
	old, upd *policy.Selector
}

// defaultCoarseLoss is the most identities a service policy change lists
// one by one (a marker and a session lookup each, a few microseconds) when
// its selector stops selecting them; above it the change marks the
// selector's terms and checks the sessions instead (identitiesLostCoarsely).
const defaultCoarseLoss = 4096

// identitiesLostCoarsely tells the change tracking that the identities the
// service policy selector old selected may have lost its links, without
// listing them: it marks old's terms and leaves the sessions to Finish.
func (tx *Tx) identitiesLostCoarsely(rel *relation, old, upd *policy.Selector) error {
	marks := make([]string, 0, 1+len(old.IDs)+len(old.Attrs))
	if old.All {
		marks = append(marks, "i*")
	}
	for id := range old.IDs {
		marks = append(marks, "i:"+id)
	}
	for _, a := range old.Attrs {
		marks = append(marks, "r:"+a)
	}
	for _, m := range marks {
		if err := tx.mark(m); err != nil {
			return err
		}
	}
	tx.lostSel = append(tx.lostSel, lostSelection{rel: rel, old: old, upd: upd})
	return nil
}

func (tx *Tx) mark(id string) error {
	if tx.at.IsZero() {
		return nil
	}
	tx.sideTxn(treeChanges).Insert([]byte(id), tx.at)
	return nil
}

// changedAt returns the marker time of id, zero if never marked.
func (tx *Tx) changedAt(id string) time.Time {
	v, ok := tx.tree(treeChanges).Get([]byte(id))
	if !ok {
		return time.Time{}
	}
	return v.(time.Time)
}

// linkChanged is told of every link added or removed.
func (tx *Tx) linkChanged(rel *relation, policyID, entityID string, removed bool) error {
	switch rel.name {
	case RelServicePolicyIdentity:
		if removed {
			tx.lost = append(tx.lost, lostLink{rel.name, policyID, entityID})
		}
		return tx.mark("i:" + entityID)
	case RelServicePolicyService:
		if removed {
			tx.lost = append(tx.lost, lostLink{rel.name, policyID, entityID})
		}
		return tx.mark("p:" + policyID)
	case RelServicePolicyPostureCheck:
		return tx.mark("p:" + policyID)
	}
	return nil
}

// recordChanged keeps sessions and change markers in step with a change of
// a record other than a link: old is nil on insert, upd nil on delete.
func (tx *Tx) recordChanged(k *Kind, old, upd Record) error {
	r := upd
	if r == nil {
		r = old
	}
	id := r.GetID()
	switch k {
	case KindService:
		if upd == nil {
			if err := tx.removeWhere(KindSession, "service", id); err != nil {
				return err
			}
		}
		return tx.mark("s:" + id)
	case KindAuthenticator:
		// A pending certificate extension goes with its authenticator (same id).
		if upd == nil && tx.Exists(KindCertExtension, id) {
			return tx.Remove(KindCertExtension, id)
		}
	case KindAPISession:
		if upd == nil {
			if err := tx.removeWhere(KindSession, "apiSession", id); err != nil {
				return err
			}
			if err := tx.dropAPISessionCertificates(id); err != nil {
				return err
			}
			if tx.Exists(KindPostureData, id) {
				return tx.Remove(KindPostureData, id)
			}
			return nil
		}
		// A new TOTP changes MFA posture.
		if old == nil {
			return nil
		}
		if o, n := old.(*APISession), upd.(*APISession); o.IsMfaComplete != n.IsMfaComplete || !timesEqual(o.LastMfaAt, n.LastMfaAt) {
			return tx.reevaluatePosture(id)
		}
	case KindConfig:
		return tx.markServicesOfConfig(id)
	case KindConfigType:
		var configs []string
		tx.Each(KindConfig, "configType", func(c Record) bool { configs = append(configs, c.GetID()); return true }, id)
		for _, c := range configs {
			if err := tx.markServicesOfConfig(c); err != nil {
				return err
			}
		}
	case KindIdentityServiceConfig:
		return tx.mark("i:" + r.(*IdentityServiceConfig).IdentityID)
	case KindPostureCheck:
		var policies []string
		tx.EntityPolicies(RelServicePolicyPostureCheck, id, func(p string) bool { policies = append(policies, p); return true })
		for _, p := range policies {
			if err := tx.mark("p:" + p); err != nil {
				return err
			}
		}
	case KindServicePolicy:
		return tx.mark("p:" + id)
	}
	return nil
}

// markServicesOfConfig marks what shows a config: the services it is
// attached to, and the identities whose service-config overrides use it.
func (tx *Tx) markServicesOfConfig(configID string) error {
	var marks []string
	tx.Each(KindService, "configs", func(s Record) bool { marks = append(marks, "s:"+s.GetID()); return true }, configID)
	tx.Each(KindIdentityServiceConfig, "config", func(r Record) bool {
		marks = append(marks, "i:"+r.(*IdentityServiceConfig).IdentityID)
		return true
	}, configID)
	for _, m := range marks {
		if err := tx.mark(m); err != nil {
			return err
		}
	}
	return nil
}

// Finish ends the sessions that the command took access away from: for
// every service policy link it removed, the sessions of that identity and
// service are checked against the grants that remain.
func (tx *Tx) Finish() error {
	lost, lostSel := tx.lost, tx.lostSel
	tx.lost, tx.lostSel = nil, nil
	type pair struct{ identity, service string }
	check := map[pair]struct{}{}
	if len(lostSel) > 0 {
		tx.Each(KindSession, "id", func(r Record) bool {
			s := r.(*Session)
			for _, l := range lostSel {
				if tx.entityMatches(l.rel, l.old, s.IdentityID) && (l.upd == nil || !tx.entityMatches(l.rel, l.upd, s.IdentityID)) {
					check[pair{s.IdentityID, s.ServiceID}] = struct{}{}
				}
			}
			return true
		})
	}
	for _, l := range lost {
		switch l.rel {
		case RelServicePolicyIdentity:
			tx.Each(KindSession, "identity", func(r Record) bool {
				check[pair{l.entity, r.(*Session).ServiceID}] = struct{}{}
				return true
			}, l.entity)
		case RelServicePolicyService:
			tx.Each(KindSession, "service", func(r Record) bool {
				check[pair{r.(*Session).IdentityID, l.entity}] = struct{}{}
				return true
			}, l.entity)
		}
	}
	// In a fixed order: each removal is a change the FSM makes an event of,
	// and every node must number the same events alike.
	pairs := make([]pair, 0, len(check))
	for p := range check {
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(strings.Compare(a.identity, b.identity), strings.Compare(a.service, b.service))
	})
	for _, p := range pairs {
		grants := policy.PairGrants(tx, p.identity, p.service)
		var revoke []string
		tx.Each(KindSession, "identity", func(r Record) bool {
			s := r.(*Session)
			if s.ServiceID == p.service && !hasType(grants, s.Type) {
				revoke = append(revoke, s.ID)
			}
			return true
		}, p.identity)
		for _, id := range revoke {
			if err := tx.Remove(KindSession, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasType reports whether some grant is of type typ, whatever its posture:
// posture is judged by the node that takes the request, with its clock.
func hasType(grants []policy.Grant, typ string) bool {
	for _, g := range grants {
		if g.Type == typ {
			return true
		}
	}
	return false
}

// LastServiceChange is when anything last changed that an identity's
// service list shows: its own grants and overrides, what its policies
// grant, and the services it sees. It reads the identity's policies and
// services, so it costs what listing them costs.
func (tx *Tx) LastServiceChange(i *Identity) time.Time {
	last := i.CreatedAt
	later := func(t time.Time) {
		if t.After(last) {
			last = t
		}
	}
	later(tx.changedAt("i:" + i.ID))
	later(tx.changedAt("i*"))
	for _, a := range i.RoleAttributes {
		later(tx.changedAt("r:" + a))
	}
	seen := map[string]struct{}{}
	tx.EntityPolicies(RelServicePolicyIdentity, i.ID, func(p string) bool {
		later(tx.changedAt("p:" + p))
		tx.PolicyEntities(RelServicePolicyService, p, func(s string) bool {
			if _, ok := seen[s]; !ok {
				seen[s] = struct{}{}
				later(tx.changedAt("s:" + s))
			}
			return true
		})
		return true
	})
	return last
}

func timesEqual(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
