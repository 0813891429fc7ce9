package store

import (
	"time"

	"edgectl/store/filter"
)

// The getters below read one field of a record for the filter language. They
// are resolved once when a query compiles, so a list scan does no name lookups.

func baseFields(extra map[string]filter.Field) *filter.Schema {
	f := map[string]filter.Field{
		"id":        filter.StringField(func(r any) string { return r.(Record).base().ID }),
		"createdAt": filter.TimeField(func(r any) time.Time { return r.(Record).base().CreatedAt }),
		"updatedAt": filter.TimeField(func(r any) time.Time { return r.(Record).base().UpdatedAt }),
	}
	for name, fld := range extra {
		f[name] = fld
	}
	return &filter.Schema{Fields: f, Prefixes: map[string]func(any, string) any{
		"tags": func(r any, key string) any {
			v, ok := r.(Record).base().Tags[key]
			if !ok {
				return nil
			}
			return tagValue(v)
		},
	}}
}

func namedFields(extra map[string]filter.Field) *filter.Schema {
	s := baseFields(extra)
	s.Fields["name"] = filter.StringField(func(r any) string { return r.(Record).RecordName() })
	return s
}

// tagValue converts a decoded JSON tag value to a filter value.
func tagValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case string, bool, nil:
		return x
	default:
		return nil
	}
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func optString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

var identityFields = map[string]filter.Field{
	"typeId":                   {Type: filter.String, Get: func(r any) any { return r.(*Identity).TypeID }},
	"type.id":                  {Type: filter.String, Get: func(r any) any { return r.(*Identity).TypeID }},
	"type.name":                {Type: filter.String, Get: func(r any) any { return r.(*Identity).TypeID }},
	"isAdmin":                  {Type: filter.Bool, Get: func(r any) any { return r.(*Identity).IsAdmin }},
	"isDefaultAdmin":           {Type: filter.Bool, Get: func(r any) any { return r.(*Identity).IsDefaultAdmin }},
	"authPolicyId":             {Type: filter.String, Get: func(r any) any { return r.(*Identity).AuthPolicyID }},
	"externalId":               {Type: filter.String, Get: func(r any) any { return optString(r.(*Identity).ExternalID) }},
	"roleAttributes":           {Type: filter.StringList, Get: func(r any) any { return r.(*Identity).RoleAttributes }},
	"disabled":                 {Type: filter.Bool, Get: func(r any) any { return r.(*Identity).Disabled }},
	"disabledUntil":            {Type: filter.Time, Get: func(r any) any { return optTime(r.(*Identity).DisabledUntil) }},
	"defaultHostingCost":       {Type: filter.Number, Get: func(r any) any { return int64(r.(*Identity).DefaultHostingCost) }},
	"defaultHostingPrecedence": {Type: filter.String, Get: func(r any) any { return r.(*Identity).DefaultHostingPrecedence }},
}

var authenticatorFields = map[string]filter.Field{
	"identityId":        {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).IdentityID }},
	"method":            {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Method }},
	"username":          {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Username }},
	"fingerprint":       {Type: filter.String, Get: func(r any) any { return r.(*Authenticator).Fingerprint }},
	"isExtendRequested": filter.BoolField(func(r any) bool { return r.(*Authenticator).IsExtendRequested }),
}

var apiSessionFields = map[string]filter.Field{
	"identityId":           {Type: filter.String, Get: func(r any) any { return r.(*APISession).IdentityID }},
	"authenticatorId":      {Type: filter.String, Get: func(r any) any { return r.(*APISession).AuthenticatorID }},
	"ipAddress":            {Type: filter.String, Get: func(r any) any { return r.(*APISession).IPAddress }},
	"isMfaRequired":        {Type: filter.Bool, Get: func(r any) any { return r.(*APISession).IsMfaRequired }},
	"isMfaComplete":        {Type: filter.Bool, Get: func(r any) any { return r.(*APISession).IsMfaComplete }},
	"cachedLastActivityAt": {Type: filter.Time, Get: func(r any) any { return r.(*APISession).CachedLastActivityAt }},
}

var enrollmentFields = map[string]filter.Field{
	"identityId": {Type: filter.String, Get: func(r any) any { return r.(*Enrollment).IdentityID }},
	"method":     {Type: filter.String, Get: func(r any) any { return r.(*Enrollment).Method }},
	"expiresAt":  {Type: filter.Time, Get: func(r any) any { return r.(*Enrollment).ExpiresAt }},
	"caId":       {Type: filter.String, Get: func(r any) any { return optString(r.(*Enrollment).CaID) }},
	"username":   {Type: filter.String, Get: func(r any) any { return optString(r.(*Enrollment).Username) }},
}
