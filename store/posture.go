package store

import (
	"sort"
	"strings"
	"time"

	"edgectl/policy"
	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// PostureData is what one API session reported about its endpoint. It is
// replicated, so every node evaluates posture checks locally with the same
// data, and it goes when the API session ends (posture data is volatile).
type PostureData struct {
	Base                                 // ID is the API session id
	IdentityID string                    `json:"identityId"`
	OS         *PostureOS                `json:"os,omitempty"`
	MAC        *PostureMAC               `json:"mac,omitempty"`
	Domain     *PostureDomain            `json:"domain,omitempty"`
	Processes  map[string]PostureProcess `json:"processes,omitempty"`
	UnlockedAt *time.Time                `json:"unlockedAt,omitempty"`
	WokenAt    *time.Time                `json:"wokenAt,omitempty"`
	// Failing is the sorted ids of the checks that failed at the last
	// evaluation; when it changes, the identity's service list changed.
	Failing []string `json:"failing,omitempty"`
}

// PostureOS is a reported operating system.
type PostureOS struct {
	Type           string    `json:"type"`
	Version        string    `json:"version"`
	Build          string    `json:"build"`
	PostureCheckID string    `json:"postureCheckId"`
	LastUpdatedAt  time.Time `json:"lastUpdatedAt"`
}

// PostureMAC is a reported set of hardware addresses.
type PostureMAC struct {
	Addresses      []string  `json:"addresses"`
	PostureCheckID string    `json:"postureCheckId"`
	LastUpdatedAt  time.Time `json:"lastUpdatedAt"`
}

// PostureDomain is a reported Windows domain.
type PostureDomain struct {
	Domain         string    `json:"domain"`
	PostureCheckID string    `json:"postureCheckId"`
	LastUpdatedAt  time.Time `json:"lastUpdatedAt"`
}

// PostureProcess is a reported process.
type PostureProcess struct {
	Path               string    `json:"path"`
	IsRunning          bool      `json:"isRunning"`
	Hash               string    `json:"binaryHash"`
	SignerFingerprints []string  `json:"signerFingerprints"`
	PostureCheckID     string    `json:"postureCheckId"`
	LastUpdatedAt      time.Time `json:"lastUpdatedAt"`
}

// KindPostureData holds posture data per API session.
var KindPostureData = &Kind{Table: "postureData", Entity: "posture data",
	new:     func() Record { return &PostureData{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID")},
	Fields: baseFields(map[string]filter.Field{
		"identityId": filter.StringField(func(r any) string { return r.(*PostureData).IdentityID }),
	})}

// PostureResponse is one validated response of an endpoint.
type PostureResponse struct {
	CheckID            string   `json:"checkId"`
	TypeID             string   `json:"typeId"` // OS, MAC, DOMAIN, PROCESS, ENDPOINT_STATE
	OSType             string   `json:"osType,omitempty"`
	OSVersion          string   `json:"osVersion,omitempty"`
	OSBuild            string   `json:"osBuild,omitempty"`
	MacAddresses       []string `json:"macAddresses,omitempty"`
	Domain             string   `json:"domain,omitempty"`
	Path               string   `json:"path,omitempty"`
	IsRunning          bool     `json:"isRunning,omitempty"`
	Hash               string   `json:"hash,omitempty"`
	SignerFingerprints []string `json:"signerFingerprints,omitempty"`
	Unlocked           bool     `json:"unlocked,omitempty"`
	Woken              bool     `json:"woken,omitempty"`
}

// PostureEndpointState is the response type of wake and unlock events.
const PostureEndpointState = policy.ResponseEndpointState

// PostureDataOf returns an API session's posture data, or nil.
func (tx *Tx) PostureDataOf(apiSessionID string) *PostureData {
	r := tx.First(KindPostureData, "id", apiSessionID)
	if r == nil {
		return nil
	}
	return r.(*PostureData)
}

// IdentityPostureData returns the posture data of an identity's API sessions, newest first.
func (tx *Tx) IdentityPostureData(identityID string) []*PostureData {
	var out []*PostureData
	tx.Each(KindPostureData, "identity", func(r Record) bool { out = append(out, r.(*PostureData)); return true }, identityID)
	sort.Slice(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out
}

// ApplyPostureResponses merges responses into an API session's posture data
// at the command's time, then re-evaluates that session's access.
func (tx *Tx) ApplyPostureResponses(apiSessionID string, responses []PostureResponse) error {
	as, err := GetAs[*APISession](tx, KindAPISession, apiSessionID)
	if err != nil {
		return Invalid("apiSessionId", "the API session ended", apiSessionID)
	}
	at := tx.at
	d := &PostureData{Base: Base{ID: apiSessionID, CreatedAt: at}, IdentityID: as.IdentityID}
	if old := tx.PostureDataOf(apiSessionID); old != nil {
		cp := *old
		cp.Processes = make(map[string]PostureProcess, len(old.Processes))
		for k, v := range old.Processes {
			cp.Processes[k] = v
		}
		d = &cp
	}
	d.UpdatedAt = at
	for _, r := range responses {
		switch r.TypeID {
		case policy.CheckOS:
			d.OS = &PostureOS{Type: r.OSType, Version: r.OSVersion, Build: r.OSBuild, PostureCheckID: r.CheckID, LastUpdatedAt: at}
		case policy.CheckMAC:
			d.MAC = &PostureMAC{Addresses: r.MacAddresses, PostureCheckID: r.CheckID, LastUpdatedAt: at}
		case policy.CheckDomain:
			d.Domain = &PostureDomain{Domain: r.Domain, PostureCheckID: r.CheckID, LastUpdatedAt: at}
		case policy.CheckProcess:
			if d.Processes == nil {
				d.Processes = map[string]PostureProcess{}
			}
			d.Processes[r.Path] = PostureProcess{Path: r.Path, IsRunning: r.IsRunning, Hash: r.Hash,
				SignerFingerprints: r.SignerFingerprints, PostureCheckID: r.CheckID, LastUpdatedAt: at}
		case PostureEndpointState:
			t := at
			if r.Unlocked {
				d.UnlockedAt = &t
			}
			if r.Woken {
				d.WokenAt = &t
			}
		}
	}
	if err := tx.Upsert(KindPostureData, d); err != nil {
		return err
	}
	return tx.reevaluatePosture(apiSessionID)
}

// CheckOf converts a posture check record for the evaluator.
func CheckOf(pc *PostureCheck) *policy.Check {
	c := &policy.Check{ID: pc.ID, Name: pc.Name, TypeID: pc.TypeID, MacAddresses: pc.MacAddresses,
		TimeoutSeconds: pc.TimeoutSeconds, PromptOnWake: pc.PromptOnWake, PromptOnUnlock: pc.PromptOnUnlock,
		Semantic: pc.Semantic, Domains: pc.Domains}
	for _, os := range pc.OperatingSystems {
		c.OperatingSystems = append(c.OperatingSystems, policy.OSRule{Type: os.Type, Versions: os.Versions})
	}
	procs := pc.Processes
	if pc.Process != nil {
		procs = append([]Process{*pc.Process}, procs...)
	}
	for _, p := range procs {
		c.Processes = append(c.Processes, policy.ProcessRule{OSType: p.OSType, Path: p.Path, Hashes: p.Hashes, SignerFingerprints: p.SignerFingerprints})
	}
	return c
}

// PostureInput is what the evaluator needs of an API session: its reported
// data and its MFA state.
func (tx *Tx) PostureInput(as *APISession) *policy.Data {
	d := &policy.Data{MFA: policy.MFAData{PassedMfa: as.IsMfaComplete && as.LastMfaAt != nil, PassedAt: as.LastMfaAt}}
	pd := tx.PostureDataOf(as.ID)
	if pd == nil {
		return d
	}
	if pd.OS != nil {
		d.OS = &policy.OSData{Type: pd.OS.Type, Version: pd.OS.Version, Build: pd.OS.Build}
	}
	if pd.MAC != nil {
		d.MACs = pd.MAC.Addresses
	}
	if pd.Domain != nil {
		dom := pd.Domain.Domain
		d.Domain = &dom
	}
	if len(pd.Processes) > 0 {
		d.Processes = map[string]policy.ProcessData{}
		for path, p := range pd.Processes {
			d.Processes[path] = policy.ProcessData{IsRunning: p.IsRunning, Hash: p.Hash, SignerFingerprints: p.SignerFingerprints}
		}
	}
	d.UnlockedAt, d.WokenAt = pd.UnlockedAt, pd.WokenAt
	if as.LastMfaAt != nil {
		d.MFA.PassedOnWake = d.WokenAt != nil && as.LastMfaAt.After(*d.WokenAt)
		d.MFA.PassedOnUnlock = d.UnlockedAt != nil && as.LastMfaAt.After(*d.UnlockedAt)
	}
	return d
}

// Passing returns the posture verdict function for an API session at now:
// a grant passes when every one of its checks passes.
func (tx *Tx) Passing(as *APISession, now time.Time) policy.Passing {
	data := tx.PostureInput(as)
	cache := map[string]bool{}
	return func(g policy.Grant) bool {
		for _, id := range g.Checks {
			ok, seen := cache[id]
			if !seen {
				pc, err := GetAs[*PostureCheck](tx, KindPostureCheck, id)
				ok = err == nil && policy.Evaluate(CheckOf(pc), data, now).Passing
				cache[id] = ok
			}
			if !ok {
				return false
			}
		}
		return true
	}
}

// reevaluatePosture judges an API session's posture at the command's time:
// sessions its posture no longer allows are removed, and when the set of
// failing checks changed, the identity's service list is marked changed.
func (tx *Tx) reevaluatePosture(apiSessionID string) error {
	as, err := GetAs[*APISession](tx, KindAPISession, apiSessionID)
	if err != nil || tx.at.IsZero() {
		return nil
	}
	passing := tx.Passing(as, tx.at)
	var revoke []string
	tx.Each(KindSession, "apiSession", func(r Record) bool {
		s := r.(*Session)
		if !policy.Allowed(policy.PairGrants(tx, s.IdentityID, s.ServiceID), s.Type, passing) {
			revoke = append(revoke, s.ID)
		}
		return true
	}, apiSessionID)
	for _, id := range revoke {
		if err := tx.Remove(KindSession, id); err != nil {
			return err
		}
	}
	failing := tx.failingChecks(as)
	pd := tx.PostureDataOf(apiSessionID)
	var before []string
	if pd != nil {
		before = pd.Failing
	}
	if strings.Join(before, ",") == strings.Join(failing, ",") && len(revoke) == 0 {
		return nil
	}
	if pd == nil {
		pd = &PostureData{Base: Base{ID: apiSessionID, CreatedAt: tx.at, UpdatedAt: tx.at}, IdentityID: as.IdentityID}
	} else {
		cp := *pd
		pd = &cp
	}
	pd.Failing = failing
	if err := tx.Upsert(KindPostureData, pd); err != nil {
		return err
	}
	return tx.mark("i:" + as.IdentityID)
}

// failingChecks lists, sorted, the posture checks of the identity's service
// policies that fail for the API session at the command's time.
func (tx *Tx) failingChecks(as *APISession) []string {
	data := tx.PostureInput(as)
	seen := map[string]struct{}{}
	var failing []string
	tx.EntityPolicies(RelServicePolicyIdentity, as.IdentityID, func(p string) bool {
		tx.PolicyEntities(RelServicePolicyPostureCheck, p, func(c string) bool {
			if _, done := seen[c]; done {
				return true
			}
			seen[c] = struct{}{}
			pc, err := GetAs[*PostureCheck](tx, KindPostureCheck, c)
			if err == nil && !policy.Evaluate(CheckOf(pc), data, tx.at).Passing {
				failing = append(failing, c)
			}
			return true
		})
		return true
	})
	sort.Strings(failing)
	return failing
}

// SweepPosture re-evaluates, at the command's time, every API session that
// has sessions or posture data: time alone (an MFA timeout, the end of a
// wake grace) can make a check fail, and the leader proposes this sweep
// periodically so that every node removes the same sessions.
func (tx *Tx) SweepPosture() error {
	ids := map[string]struct{}{}
	tx.Each(KindSession, "id", func(r Record) bool { ids[r.(*Session).APISessionID] = struct{}{}; return true })
	tx.Each(KindPostureData, "id", func(r Record) bool { ids[r.GetID()] = struct{}{}; return true })
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		if err := tx.reevaluatePosture(id); err != nil {
			return err
		}
	}
	return nil
}

// HasTimedPostureChecks reports whether any posture check can change its
// verdict with time alone (MFA with a timeout or wake/unlock prompts).
func (tx *Tx) HasTimedPostureChecks() bool {
	found := false
	tx.Each(KindPostureCheck, "id", func(r Record) bool {
		pc := r.(*PostureCheck)
		found = pc.TypeID == policy.CheckMFA && (pc.TimeoutSeconds > 0 || pc.PromptOnWake || pc.PromptOnUnlock)
		return !found
	})
	return found
}
