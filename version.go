// Package edgectl holds the release number of this tree, read from the
// file VERSION: the one place it is written (the Makefile reads it too).
// CHANGELOG.md says what each release holds; docs/operations.md, which
// release a cluster may upgrade from.
package edgectl

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is this tree's release, e.g. "v0.2.0".
var Version = strings.TrimSpace(versionFile)
