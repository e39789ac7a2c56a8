//go:build tools

// Package tools pins the sops command gitfleet's tests use as the oracle that encrypts fixtures.
package tools

import _ "github.com/getsops/sops/v3/cmd/sops"
