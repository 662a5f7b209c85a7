package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sort"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

// remoteFlags are the flags of the commands that talk to a server (apply, diff, export). The key comes
// only from GUARD_API_KEY, never from a flag, so it does not show in process lists or shell history.
type remoteFlags struct {
	server  string
	timeout time.Duration
}

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "server URL (default $GUARD_URL, else "+client.DefaultServerURL+")")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "timeout of each request")
}

// remote is a connection to a server for one command.
type remote struct {
	api    *client.HTTPClient
	url    string
	hasKey bool
	admin  bool // the command writes: it needs an admin key when the server checks keys
}

func (f *remoteFlags) connect(env *commandEnv, admin bool) (*remote, error) {
	url := f.server
	if url == "" {
		url = env.getenv("GUARD_URL")
	}
	if url == "" {
		url = client.DefaultServerURL
	}
	key := env.getenv("GUARD_API_KEY")
	api, err := client.NewHTTPClient(url, key, client.WithTimeout(f.timeout), client.WithUserAgent("guard-cli/"+version))
	if err != nil {
		return nil, err
	}
	return &remote{api: api, url: api.BaseURL(), hasKey: key != "", admin: admin}, nil
}

// explain turns a failed request into a message for an operator: an unreachable server names its URL, a
// 401 or 403 says which key is needed (the key itself is never printed).
func (r *remote) explain(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, client.ErrUnreachable) {
		return fmt.Errorf("cannot reach the guard server at %s (set --server or GUARD_URL): %w", r.url, err)
	}
	var ae *client.APIError
	if errors.As(err, &ae) {
		kind := "a key (regular or admin)"
		if r.admin {
			kind = "an admin key (one of the server's GUARD_ADMIN_API_KEYS)"
		}
		switch ae.Status {
		case http.StatusUnauthorized:
			if !r.hasKey {
				return fmt.Errorf("the server at %s requires an API key: set GUARD_API_KEY to %s", r.url, kind)
			}
			return fmt.Errorf("the server at %s does not accept the key in GUARD_API_KEY: set it to %s", r.url, kind)
		case http.StatusForbidden:
			return fmt.Errorf("the key in GUARD_API_KEY is not allowed to change policy on %s: set it to %s", r.url, kind)
		}
	}
	return err
}

// checkWrite finds out whether the key may change policy before anything is planned: POST /controls/validate
// is an admin route that changes nothing, so an admin key gets a validation answer (422 for empty data) and
// any other key its 401 or 403, explained.
func (r *remote) checkWrite(ctx context.Context) error {
	err := r.api.ValidateControlData(ctx, guard.ControlData{})
	var ae *client.APIError
	if errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden) {
		return r.explain(err)
	}
	if errors.Is(err, client.ErrUnreachable) {
		return r.explain(err)
	}
	return nil
}

// fetchState reads every live control (with its data and version) and the links of the agents named
// (nil: every agent).
func (r *remote) fetchState(ctx context.Context, agents []string) (remoteState, error) {
	st := remoteState{Controls: map[string]remoteControl{}, Agents: map[string][]string{}}
	opts := client.ControlListOptions{PageOptions: client.PageOptions{Limit: 100}}
	for {
		page, err := r.api.ListControls(ctx, opts)
		if err != nil {
			return st, r.explain(err)
		}
		for _, s := range page.Controls {
			rec, err := r.api.GetControl(ctx, s.ID)
			if err != nil {
				return st, r.explain(err)
			}
			st.Controls[rec.Name] = remoteControl{ID: rec.ID, Name: rec.Name, Version: rec.Version, Enabled: rec.Enabled,
				Data: rec.Data, AgentCount: s.AgentCount}
		}
		if !page.Pagination.HasMore || page.Pagination.NextCursor == nil {
			break
		}
		opts.Cursor = *page.Pagination.NextCursor
	}
	if agents == nil {
		aopts := client.AgentListOptions{PageOptions: client.PageOptions{Limit: 100}}
		for {
			page, err := r.api.ListAgents(ctx, aopts)
			if err != nil {
				return st, r.explain(err)
			}
			for _, a := range page.Agents {
				agents = append(agents, a.Name)
			}
			if !page.Pagination.HasMore || page.Pagination.NextCursor == nil {
				break
			}
			aopts.Cursor = *page.Pagination.NextCursor
		}
	}
	for _, name := range agents {
		links, _, _, err := r.api.AgentControls(ctx, name, "")
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			continue // the agent does not exist
		}
		if err != nil {
			return st, r.explain(err)
		}
		names := make([]string, 0, len(links))
		for _, l := range links {
			names = append(names, l.Name)
		}
		sort.Strings(names)
		st.Agents[name] = names
	}
	return st, nil
}

// remoteEnv lists the variables the commands that talk to a server (apply, diff, export) read, for
// `guard help`.
var remoteEnv = []envVar{
	{name: "GUARD_URL", defText: "http://localhost:8000", desc: "the guard server to talk to (--server wins)"},
	{name: "GUARD_API_KEY", desc: "the API key sent as X-API-Key (apply needs an admin key when authentication is on); never printed"},
}
