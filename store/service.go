package store

import "edgectl/store/filter"

// Service is a network service that identities dial or bind.
type Service struct {
	Base
	Named
	RoleAttributes     []string `json:"roleAttributes"`
	Configs            []string `json:"configs"` // config ids
	EncryptionRequired bool     `json:"encryptionRequired"`
	TerminatorStrategy string   `json:"terminatorStrategy"`
	MaxIdleTimeMillis  int64    `json:"maxIdleTimeMillis"`
}

// RecordName is the service's name.
func (r *Service) RecordName() string { return r.Name }

// Roles returns the service's role attributes.
func (r *Service) Roles() []string { return r.RoleAttributes }

var serviceFields = map[string]filter.Field{
	"roleAttributes":     {Type: filter.StringList, Get: func(r any) any { return r.(*Service).RoleAttributes }},
	"configs":            {Type: filter.StringList, Get: func(r any) any { return r.(*Service).Configs }},
	"encryptionRequired": {Type: filter.Bool, Get: func(r any) any { return r.(*Service).EncryptionRequired }},
	"terminatorStrategy": {Type: filter.String, Get: func(r any) any { return r.(*Service).TerminatorStrategy }},
}
