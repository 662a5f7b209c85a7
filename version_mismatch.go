package guard

import "fmt"

// ErrVersionMismatch is matched (errors.Is) by a *VersionMismatchError.
var ErrVersionMismatch = fmt.Errorf("control version does not match")

// VersionMismatchError is the refusal of a conditional write (ControlStore.UpdateControlIf,
// PutControlDataIf): the control changed since the writer read it. The server answers it with 412
// PRECONDITION_FAILED.
type VersionMismatchError struct {
	ControlID int64
	Expected  int // the version the writer read
	Current   int // the version stored now
}

// Error implements the error interface.
func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("control %d is at version %d, not %d: it changed since it was read", e.ControlID, e.Current, e.Expected)
}

// Is makes errors.Is(err, ErrVersionMismatch) true.
func (e *VersionMismatchError) Is(target error) bool { return target == ErrVersionMismatch }
