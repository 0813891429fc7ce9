//go:build tools

package tools
import (
 _ "github.com/hashicorp/raft"
 _ "github.com/hashicorp/raft-boltdb/v2"
 _ "github.com/julienschmidt/httprouter"
 _ "github.com/golang-jwt/jwt/v5"
 _ "github.com/pquerna/otp"
 _ "golang.org/x/crypto/argon2"
 _ "github.com/Masterminds/semver/v3"
 _ "github.com/hashicorp/go-hclog"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/hashicorp/go-memdb"
 _ "github.com/santhosh-tekuri/jsonschema/v6"
)
