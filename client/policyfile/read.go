package policyfile

import (
	"io"

	"github.com/guardrail-control/guard/internal/boundedread"
)

// MaxFileBytes caps one policy file (and the standard input of `guard apply -f -`): a larger one is
// refused with a *TooLargeError naming it and the cap. A regular file is refused from its size without
// being read; a device, FIFO or pipe is read at most MaxFileBytes+1 bytes. An exported policy of a
// thousand controls is a few MiB.
const MaxFileBytes = 64 << 20

// TooLargeError is the error of a policy file over MaxFileBytes.
type TooLargeError = boundedread.TooLargeError

// ReadFile reads the policy file at path under MaxFileBytes, in bounded memory.
func ReadFile(path string) ([]byte, error) {
	return boundedread.File(path, "policy file", MaxFileBytes)
}

// ReadFrom reads a policy file from r (name, "<stdin>" for instance, goes into errors) under
// MaxFileBytes, reading at most MaxFileBytes+1 bytes.
func ReadFrom(r io.Reader, name string) ([]byte, error) {
	return boundedread.Read(r, name, "policy file", MaxFileBytes)
}
