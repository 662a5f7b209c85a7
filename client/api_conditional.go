package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/guardrail-control/guard"
)

// Optimistic concurrency: the version of a control (ControlRecord.Version, its ETag on the wire) guards a
// read-modify-write cycle. The *IfVersion methods send it as If-Match; when another writer changed the
// control in between, the server refuses with 412 PRECONDITION_FAILED and the error matches
// guard.ErrVersionMismatch (errors.Is): read the control again and decide.

// CodePreconditionFailed is the error_code of a 412 answer to a stale conditional write.
const CodePreconditionFailed = "PRECONDITION_FAILED"

func ifMatch(version int) http.Header {
	return http.Header{"If-Match": {`"` + strconv.Itoa(version) + `"`}}
}

// PatchControlIfVersion is PatchControl applied only when the control is at version.
func (c *HTTPClient) PatchControlIfVersion(ctx context.Context, id int64, patch guard.ControlPatch, version int) (guard.ControlRecord, error) {
	var out guard.ControlRecord
	_, err := c.do(ctx, call{method: http.MethodPatch, path: controlPath(id), in: patch, out: &out, header: ifMatch(version)})
	return out, err
}

// PutControlDataIfVersion is PutControlData applied only when the control is at version; it returns the
// new version.
func (c *HTTPClient) PutControlDataIfVersion(ctx context.Context, id int64, data guard.ControlData, version int) (int, error) {
	body := struct {
		Data guard.ControlData `json:"data"`
	}{Data: wireData(data)}
	var out struct {
		Version int `json:"version"`
	}
	_, err := c.do(ctx, call{method: http.MethodPut, path: controlPath(id) + "/data", in: body, out: &out, header: ifMatch(version)})
	return out.Version, err
}

// DeleteControlIfVersion is DeleteControl applied only when the control is at version.
func (c *HTTPClient) DeleteControlIfVersion(ctx context.Context, id int64, force bool, version int) ([]string, error) {
	q := url.Values{}
	if force {
		q.Set("force", "true")
	}
	var out struct {
		UnlinkedAgents []string `json:"unlinked_agents"`
	}
	_, err := c.do(ctx, call{method: http.MethodDelete, path: controlPath(id), query: q, out: &out, header: ifMatch(version)})
	return out.UnlinkedAgents, err
}

// Is makes errors.Is(err, guard.ErrVersionMismatch) true for a 412 PRECONDITION_FAILED answer.
func (e *APIError) Is(target error) bool {
	return target == guard.ErrVersionMismatch && e.Code == CodePreconditionFailed
}
