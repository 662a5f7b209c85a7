//go:build !cgo

package cases

// withCgo: this build has no cgo, so cases marked needs_cgo are left out.
const withCgo = false
