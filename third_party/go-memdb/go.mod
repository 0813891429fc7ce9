module github.com/hashicorp/go-memdb

go 1.26.0

require github.com/hashicorp/go-immutable-radix v1.3.1

// edgectl's patched copy (see ../README.md); a replace here counts only when
// this module's own tests run, edgectl's go.mod names it for the program.
replace github.com/hashicorp/go-immutable-radix => ../go-immutable-radix
