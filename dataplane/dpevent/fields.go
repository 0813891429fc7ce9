package dpevent

import (
	"errors"
	"time"

	"edgectl/store/filter"
)

// Fields are the fields a filter of data-plane events may name (the
// filter language of GET /events).
var Fields = &filter.Schema{Fields: map[string]filter.Field{
	"id":           filter.IntField(func(r any) int64 { return r.(*Event).ID }),
	"namespace":    str(func(e *Event) string { return e.Namespace }),
	"action":       str(func(e *Event) string { return e.Action }),
	"nodeId":       str(func(e *Event) string { return e.NodeID }),
	"circuitId":    str(func(e *Event) string { return e.CircuitID }),
	"identityId":   str(func(e *Event) string { return e.IdentityID }),
	"identityName": str(func(e *Event) string { return e.IdentityName }),
	"serviceId":    str(func(e *Event) string { return e.ServiceID }),
	"serviceName":  str(func(e *Event) string { return e.ServiceName }),
	"terminatorId": str(func(e *Event) string { return e.TerminatorID }),
	"routerId":     str(func(e *Event) string { return e.RouterID }),
	"routerName":   str(func(e *Event) string { return e.RouterName }),
	"linkId":       str(func(e *Event) string { return e.LinkID }),
	"srcRouterId":  str(func(e *Event) string { return e.SrcRouterID }),
	"dstRouterId":  str(func(e *Event) string { return e.DstRouterID }),
	"cause":        str(func(e *Event) string { return e.Cause }),
	"reason":       str(func(e *Event) string { return e.Reason }),
	"hostId":       str(func(e *Event) string { return e.HostID }),
	"path":         filter.StringListField(func(r any) []string { return r.(*Event).Path }),
	"pathNames":    filter.StringListField(func(r any) []string { return r.(*Event).PathNames }),
	"bytesIn":      filter.IntField(func(r any) int64 { return int64(deref(r.(*Event).BytesIn)) }),
	"bytesOut":     filter.IntField(func(r any) int64 { return int64(deref(r.(*Event).BytesOut)) }),
	"at":           filter.TimeField(func(r any) time.Time { return r.(*Event).At }),
	"createdAt":    filter.TimeField(func(r any) time.Time { return r.(*Event).At }),
}}

func str(get func(*Event) string) filter.Field {
	return filter.StringField(func(r any) string { return get(r.(*Event)) })
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// Compile compiles a filter of data-plane events: conditions only (a sort,
// skip or limit is an error).
func Compile(src string) (*filter.Query, error) {
	q, err := filter.Compile(src, Fields)
	if err != nil {
		return nil, err
	}
	_, skip := q.Skip()
	_, limit, _ := q.Limit()
	if q.HasSort() || skip || limit {
		return nil, ErrConditionsOnly
	}
	return q, nil
}

// ErrConditionsOnly: a filter of data-plane events has a sort, skip or limit.
var ErrConditionsOnly = errors.New("a filter of data-plane events takes conditions only, not sort by, skip or limit")
