package fsm

import (
	"encoding/json"
	"fmt"

	"edgectl/store"
)

// Policy commands serve the three policy kinds; the payload names the kind's table.
var (
	CmdPolicyCreate = command("policy.create", 1)
	CmdPolicyUpdate = command("policy.update", 1)
	CmdPolicyDelete = command("policy.delete", 1)
)

// PolicyCreate is the payload of CmdPolicyCreate.
type PolicyCreate struct {
	Table  string          `json:"table"`
	Policy json.RawMessage `json:"policy"`
}

// PolicyUpdate is the payload of CmdPolicyUpdate.
type PolicyUpdate struct {
	Table string `json:"table"`
	Update
}

// PolicyDelete is the payload of CmdPolicyDelete.
type PolicyDelete struct {
	Table string `json:"table"`
	ID    string `json:"id"`
}

func policyKind(table string) (*store.Kind, error) {
	k, ok := store.PolicyKind(table)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a policy table", errCorrupt, table)
	}
	return k, nil
}

func registerPolicies(f *FSM) {
	on(f, CmdPolicyCreate, func(tx *store.Tx, p *PolicyCreate) (any, error) {
		k, err := policyKind(p.Table)
		if err != nil {
			return nil, err
		}
		rec := k.New()
		if err := json.Unmarshal(p.Policy, rec); err != nil {
			return nil, fmt.Errorf("%w: policy: %v", errCorrupt, err)
		}
		return nil, tx.CreatePolicy(k, rec)
	})
	on(f, CmdPolicyUpdate, func(tx *store.Tx, p *PolicyUpdate) (any, error) {
		k, err := policyKind(p.Table)
		if err != nil {
			return nil, err
		}
		return nil, tx.UpdatePolicy(k, p.ID, p.Patch, p.At)
	})
	on(f, CmdPolicyDelete, func(tx *store.Tx, p *PolicyDelete) (any, error) {
		k, err := policyKind(p.Table)
		if err != nil {
			return nil, err
		}
		return nil, tx.DeletePolicy(k, p.ID)
	})
}
