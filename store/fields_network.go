package store

import "edgectl/store/filter"

var serviceFields = map[string]filter.Field{
	"roleAttributes":     {Type: filter.StringList, Get: func(r any) any { return r.(*Service).RoleAttributes }},
	"configs":            {Type: filter.StringList, Get: func(r any) any { return r.(*Service).Configs }},
	"encryptionRequired": {Type: filter.Bool, Get: func(r any) any { return r.(*Service).EncryptionRequired }},
	"terminatorStrategy": {Type: filter.String, Get: func(r any) any { return r.(*Service).TerminatorStrategy }},
}

var edgeRouterFields = map[string]filter.Field{
	"roleAttributes":    {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouter).RoleAttributes }},
	"cost":              {Type: filter.Number, Get: func(r any) any { return int64(r.(*EdgeRouter).Cost) }},
	"disabled":          {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).Disabled }},
	"noTraversal":       {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).NoTraversal }},
	"isTunnelerEnabled": {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).IsTunnelerEnabled }},
	"isVerified":        {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouter).IsVerified }},
	"isOnline":          {Type: filter.Bool, Get: func(r any) any { return false }},
	"hostname":          {Type: filter.String, Get: func(r any) any { return r.(*EdgeRouter).Hostname }},
	"fingerprint":       {Type: filter.String, Get: func(r any) any { return optString(r.(*EdgeRouter).Fingerprint) }},
}

var routerFields = map[string]filter.Field{
	"cost":        {Type: filter.Number, Get: func(r any) any { return int64(r.(*Router).Cost) }},
	"disabled":    {Type: filter.Bool, Get: func(r any) any { return r.(*Router).Disabled }},
	"noTraversal": {Type: filter.Bool, Get: func(r any) any { return r.(*Router).NoTraversal }},
	"isVerified":  {Type: filter.Bool, Get: func(r any) any { return r.(*Router).IsVerified }},
	"isOnline":    {Type: filter.Bool, Get: func(r any) any { return false }},
	"fingerprint": {Type: filter.String, Get: func(r any) any { return optString(r.(*Router).Fingerprint) }},
}

var postureCheckFields = map[string]filter.Field{
	"roleAttributes": {Type: filter.StringList, Get: func(r any) any { return r.(*PostureCheck).RoleAttributes }},
	"typeId":         {Type: filter.String, Get: func(r any) any { return r.(*PostureCheck).TypeID }},
	"version":        {Type: filter.Number, Get: func(r any) any { return r.(*PostureCheck).Version }},
}

var servicePolicyFields = map[string]filter.Field{
	"type":              {Type: filter.String, Get: func(r any) any { return r.(*ServicePolicy).Type }},
	"semantic":          {Type: filter.String, Get: func(r any) any { return r.(*ServicePolicy).Semantic }},
	"identityRoles":     {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).IdentityRoles }},
	"serviceRoles":      {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).ServiceRoles }},
	"postureCheckRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*ServicePolicy).PostureCheckRoles }},
}

var edgeRouterPolicyFields = map[string]filter.Field{
	"semantic":        {Type: filter.String, Get: func(r any) any { return r.(*EdgeRouterPolicy).Semantic }},
	"isSystem":        {Type: filter.Bool, Get: func(r any) any { return r.(*EdgeRouterPolicy).IsSystem }},
	"identityRoles":   {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouterPolicy).IdentityRoles }},
	"edgeRouterRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*EdgeRouterPolicy).EdgeRouterRoles }},
}

var serpFields = map[string]filter.Field{
	"semantic":        {Type: filter.String, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).Semantic }},
	"serviceRoles":    {Type: filter.StringList, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).ServiceRoles }},
	"edgeRouterRoles": {Type: filter.StringList, Get: func(r any) any { return r.(*ServiceEdgeRouterPolicy).EdgeRouterRoles }},
}
