package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// Optimistic concurrency on a control: GET /controls/{id} (and the answers of PATCH and PUT .../data)
// carry the control's version as a strong entity tag, `ETag: "<version>"`. A writer that sends it back in
// If-Match has its write applied only when the control is still at that version; otherwise 412
// PRECONDITION_FAILED and nothing changes. The store checks the version inside the write's transaction,
// so two writers that read the same version cannot both win.

// versionETag is the entity tag of a control at version v.
func versionETag(v int) string { return `"` + strconv.Itoa(v) + `"` }

// setVersionETag sets the ETag header of a control response.
func setVersionETag(w http.ResponseWriter, v int) {
	if v > 0 {
		w.Header().Set("ETag", versionETag(v))
	}
}

// ifMatchVersion reads If-Match: 0 means unconditional (absent, or "*": the control exists, which the
// write checks anyway); otherwise the version the write requires. A list of several tags is resolved
// against current, which is called only then; a header with no tag that can match is a 412 right away.
func ifMatchVersion(ctx context.Context, r *http.Request, id int64, current func(context.Context, int64) (guard.ControlRecord, error)) (int, error) {
	vals := r.Header.Values("If-Match")
	if len(vals) == 0 {
		return 0, nil
	}
	var versions []int
	for _, v := range vals {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" {
				return 0, nil
			}
			// Strong comparison (RFC 9110 13.1.1): a weak tag (W/"3") never matches.
			if len(t) < 3 || t[0] != '"' || t[len(t)-1] != '"' {
				continue
			}
			n, err := strconv.Atoi(t[1 : len(t)-1])
			if err == nil && n > 0 {
				versions = append(versions, n)
			}
		}
	}
	switch len(versions) {
	case 0:
		return 0, problem.New(http.StatusPreconditionFailed, problem.CodePreconditionFailed,
			`If-Match must hold the control's entity tag, its version as "3" (the ETag of GET /controls/{control_id})`)
	case 1:
		return versions[0], nil
	}
	rec, err := current(ctx, id)
	if err != nil {
		return 0, err
	}
	for _, v := range versions {
		if v == rec.Version {
			return v, nil
		}
	}
	return 0, &guard.VersionMismatchError{ControlID: id, Expected: versions[0], Current: rec.Version}
}
