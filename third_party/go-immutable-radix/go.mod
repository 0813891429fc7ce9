module github.com/hashicorp/go-immutable-radix

go 1.26.0

require github.com/hashicorp/go-uuid v1.0.0
