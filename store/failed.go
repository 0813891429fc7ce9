package store

import (
	"time"

	"edgectl/store/filter"

	"github.com/hashicorp/go-memdb"
)

// maxFailedRequests is how many failed service requests are kept per identity (spec: the last fifty).
const maxFailedRequests = 50

// FailedServiceRequest records a refused session request and why.
type FailedServiceRequest struct {
	Base
	IdentityID     string          `json:"identityId"`
	APISessionID   string          `json:"apiSessionId"`
	ServiceID      string          `json:"serviceId"`
	ServiceName    string          `json:"serviceName"`
	SessionType    string          `json:"sessionType"`
	When           time.Time       `json:"when"`
	Reason         string          `json:"reason"`
	PolicyFailures []PolicyFailure `json:"policyFailures"`
}

// PolicyFailure is a service policy whose posture checks failed.
type PolicyFailure struct {
	PolicyID   string         `json:"policyId"`
	PolicyName string         `json:"policyName"`
	Checks     []CheckFailure `json:"checks"`
}

// CheckFailure is one failing posture check with what was expected and found.
type CheckFailure struct {
	PostureCheckID   string `json:"postureCheckId"`
	PostureCheckName string `json:"postureCheckName"`
	PostureCheckType string `json:"postureCheckType"`
	ActualValue      any    `json:"actualValue"`
	ExpectedValue    any    `json:"expectedValue"`
}

// KindFailedServiceRequest holds the failed service requests.
var KindFailedServiceRequest = &Kind{Table: "failedServiceRequests", Entity: "failed service request",
	new:     func() Record { return &FailedServiceRequest{} },
	indexes: []*memdb.IndexSchema{strIndex("identity", "IdentityID")},
	Fields: baseFields(map[string]filter.Field{
		"serviceId":   filter.StringField(func(r any) string { return r.(*FailedServiceRequest).ServiceID }),
		"serviceName": filter.StringField(func(r any) string { return r.(*FailedServiceRequest).ServiceName }),
		"sessionType": filter.StringField(func(r any) string { return r.(*FailedServiceRequest).SessionType }),
		"when":        filter.TimeField(func(r any) time.Time { return r.(*FailedServiceRequest).When }),
	})}

// RecordFailedRequest stores a failed request and keeps only the newest fifty of the identity.
func (tx *Tx) RecordFailedRequest(f *FailedServiceRequest) error {
	if !tx.Exists(KindIdentity, f.IdentityID) {
		return nil
	}
	if err := tx.Insert(KindFailedServiceRequest, f); err != nil {
		return err
	}
	var all []*FailedServiceRequest
	tx.Each(KindFailedServiceRequest, "identity", func(r Record) bool {
		all = append(all, r.(*FailedServiceRequest))
		return true
	}, f.IdentityID)
	if len(all) <= maxFailedRequests {
		return nil
	}
	sortFailed(all)
	for _, old := range all[:len(all)-maxFailedRequests] {
		if err := tx.Remove(KindFailedServiceRequest, old.ID); err != nil {
			return err
		}
	}
	return nil
}

// FailedRequests returns an identity's failed requests, oldest first.
func (tx *Tx) FailedRequests(identityID string) []*FailedServiceRequest {
	var all []*FailedServiceRequest
	tx.Each(KindFailedServiceRequest, "identity", func(r Record) bool {
		all = append(all, r.(*FailedServiceRequest))
		return true
	}, identityID)
	sortFailed(all)
	return all
}

func sortFailed(l []*FailedServiceRequest) {
	// Insertion sort: at most fifty-one entries.
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && (l[j].When.Before(l[j-1].When) || (l[j].When.Equal(l[j-1].When) && l[j].ID < l[j-1].ID)); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}
