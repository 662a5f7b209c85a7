//go:build cgo

package cases

// withCgo: this build has cgo, so cases marked needs_cgo run.
const withCgo = true
