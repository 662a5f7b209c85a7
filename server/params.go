package server

import (
	"net/http"
	"net/url"
	"strconv"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// Path and query parameters. A path identifier that is not a positive integer, or an agent name that
// breaks the naming rules, is malformed input: 422 VALIDATION_ERROR naming the parameter. A well-formed
// identifier of something that does not exist is a 404.

const (
	defaultLimit = 20
	maxLimit     = 100
)

func invalidParam(field, code, msg string) error {
	return problem.Validation("invalid parameter "+field, guard.Problem{Field: field, Code: code, Message: msg})
}

// pathID parses the positive integer path parameter name.
func pathID(r *http.Request, name string) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || n <= 0 {
		return 0, invalidParam(name, "type", "must be a positive integer")
	}
	return n, nil
}

// pathVersion parses the version number path parameter.
func pathVersion(r *http.Request) (int, error) {
	n, err := strconv.ParseInt(r.PathValue("version"), 10, 32)
	if err != nil || n <= 0 {
		return 0, invalidParam("version", "type", "must be a positive integer")
	}
	return int(n), nil
}

// pathAgent normalises the agent_name path parameter.
func pathAgent(r *http.Request) (string, error) {
	name, err := guard.NormalizeAgentName(r.PathValue("agent_name"))
	if err != nil {
		return "", invalidParam("agent_name", "invalid", err.Error())
	}
	return name, nil
}

// queryLimit reads the limit query parameter of a list (1 to maxLimit, defaultLimit when absent); the
// problem names it.
func queryLimit(q url.Values) (int, *guard.Problem) {
	v, ok := q["limit"]
	if !ok {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(v[0])
	if err != nil || n < 1 || n > maxLimit {
		return 0, &guard.Problem{Field: "limit", Code: "range", Message: "must be an integer from 1 to 100"}
	}
	return n, nil
}

// page reads cursor and limit.
func page(r *http.Request) (guard.PageRequest, error) {
	q := r.URL.Query()
	p := guard.PageRequest{Cursor: q.Get("cursor"), Limit: defaultLimit}
	n, prob := queryLimit(q)
	if prob != nil {
		return p, problem.Validation("invalid parameter limit", *prob)
	}
	p.Limit = n
	if len(p.Cursor) > 512 {
		return p, invalidParam("cursor", "invalid", "not a cursor this server issued")
	}
	return p, nil
}

// queryBool reads an optional boolean query parameter: absent gives nil, "true"/"false" their value,
// anything else a 422.
func queryBool(r *http.Request, name string) (*bool, error) {
	v, ok := r.URL.Query()[name]
	if !ok {
		return nil, nil
	}
	switch v[0] {
	case "true":
		b := true
		return &b, nil
	case "false":
		b := false
		return &b, nil
	}
	return nil, invalidParam(name, "type", "must be true or false")
}

// pageInfo never returns a nil next_cursor pointer problem: it passes the store's PageInfo through.
type listPage struct {
	Limit      int     `json:"limit"`
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

func toPage(p guard.PageInfo) listPage {
	return listPage{Limit: p.Limit, Total: p.Total, NextCursor: p.NextCursor, HasMore: p.HasMore}
}
