package server

import (
	"net/http"
	"time"

	"github.com/guardrail-control/guard/server/problem"
)

// versionSummary is one row of GET /controls/{id}/versions.
type versionSummary struct {
	Version   int       `json:"version"`
	Event     string    `json:"event"`
	CreatedAt time.Time `json:"created_at"`
	// The reference implementation's names of version and event (additive, docs/compatibility.md).
	VersionNum int    `json:"version_num"`
	EventType  string `json:"event_type"`
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "control_id")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	pg, err := page(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	vs, info, err := s.store.ListControlVersions(r.Context(), id, pg)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := make([]versionSummary, len(vs))
	for i, v := range vs {
		out[i] = versionSummary{Version: v.Version, Event: v.Event, CreatedAt: v.CreatedAt, VersionNum: v.Version, EventType: v.Event}
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Versions   []versionSummary `json:"versions"`
		Pagination listPage         `json:"pagination"`
	}{out, toPage(info)})
}

func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) {
	id, n, err := controlAndVersion(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	v, err := s.store.GetControlVersion(r.Context(), id, n)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, versionOut{ControlVersion: v, VersionNum: v.Version, EventType: v.Event})
}

func (s *Server) restoreVersion(w http.ResponseWriter, r *http.Request) {
	id, n, err := controlAndVersion(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	// The restored data must pass its own tests as any saved data does (evaluators may have changed
	// since that version was saved).
	if v, err := s.store.GetControlVersion(r.Context(), id, n); err == nil && v.Data != nil {
		if err := s.checkTests(r.Context(), *v.Data); err != nil {
			s.writeErr(w, r, err)
			return
		}
	}
	rec, err := s.store.RestoreControlVersion(r.Context(), id, n)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	problem.Respond(w, r, s.log, http.StatusOK, toControlOut(rec))
}

func controlAndVersion(r *http.Request) (int64, int, error) {
	id, err := pathID(r, "control_id")
	if err != nil {
		return 0, 0, err
	}
	n, err := pathVersion(r)
	return id, n, err
}
