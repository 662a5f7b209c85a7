package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

type createControlRequest struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

type dataRequest struct {
	Data json.RawMessage `json:"data"`
}

type patchControlRequest struct {
	Name    *string `json:"name"`
	Enabled *bool   `json:"enabled"`
	Mode    *string `json:"mode"`
}

// parseData decodes and validates the data field of a request body: problems come back with paths
// prefixed by "data.".
//
// The control's own tests (data.tests) are run too: a failing test is a problem at data.tests.<i>, so a
// control can never be saved contradicting its examples.
func (s *Server) parseData(ctx context.Context, raw json.RawMessage) (guard.ControlData, error) {
	d, err := s.parseDataOnly(raw)
	if err != nil {
		return d, err
	}
	return d, s.checkTests(ctx, d)
}

// parseDataOnly is parseData without running the control's tests.
func (s *Server) parseDataOnly(raw json.RawMessage) (guard.ControlData, error) {
	if isNull(raw) {
		return guard.ControlData{}, problem.Validation("data is required", guard.Problem{Field: "data", Code: "required", Message: "is required"})
	}
	d, err := guard.ParseControlData(raw, guard.WithValidationRegistry(s.cfg.registry))
	if err != nil {
		var ve *guard.ValidationError
		if errors.As(err, &ve) {
			return d, problem.Validation("the control data is not valid", ve.WithPrefix("data").Problems...)
		}
		return d, err
	}
	return d, nil
}

// decodeData reads a request body holding only a data field and validates the data as parseData does.
func (s *Server) decodeData(r *http.Request) (guard.ControlData, error) {
	var req dataRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		return guard.ControlData{}, err
	}
	return s.parseData(r.Context(), req.Data)
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

func (s *Server) createControl(w http.ResponseWriter, r *http.Request) {
	var req createControlRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var probs []guard.Problem
	if err := guard.ValidateControlName(req.Name); err != nil {
		probs = append(probs, guard.Problem{Field: "name", Code: "invalid", Message: err.Error()})
	}
	var data *guard.ControlData
	if !isNull(req.Data) {
		d, err := s.parseData(r.Context(), req.Data)
		if err != nil {
			var pe *problem.Error
			if !errors.As(err, &pe) || pe.Code != problem.CodeValidation {
				s.writeErr(w, r, err)
				return
			}
			probs = append(probs, pe.Problems...)
		}
		data = &d
	}
	if len(probs) > 0 {
		s.writeErr(w, r, problem.Validation("the control is not valid", probs...))
		return
	}
	rec, err := s.store.CreateControl(r.Context(), req.Name, data)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	// 200, as the reference answers (its generated clients refuse a 201); the Location names the control.
	w.Header().Set("Location", apiPrefix+"/controls/"+strconv.FormatInt(rec.ID, 10))
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		ControlID int64 `json:"control_id"`
	}{rec.ID})
}

func (s *Server) listControls(w http.ResponseWriter, r *http.Request) {
	pg, err := page(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	q := r.URL.Query()
	f := guard.ControlFilter{Name: q.Get("name"), Tag: q.Get("tag"), StepType: q.Get("step_type")}
	if f.Enabled, err = queryBool(r, "enabled"); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if v, ok := q["stage"]; ok {
		st, err := guard.ParseStage(v[0])
		if err != nil {
			s.writeErr(w, r, invalidParam("stage", "enum", "must be one of pre, post"))
			return
		}
		f.Stage = st
	}
	if f.Scope, err = s.agentScope(r.Context()); err != nil {
		s.writeErr(w, r, err)
		return
	}
	list, info, err := s.store.ListControls(r.Context(), f, pg)
	if errors.Is(err, guard.ErrBadCursor) {
		err = invalidParam("cursor", "invalid", "must be a positive integer without leading zeros: the next_cursor of the previous page (the id of its last control)")
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	for i := range list {
		fixSummary(&list[i])
	}
	if list == nil {
		list = []guard.ControlSummary{}
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Controls   []summaryOut `json:"controls"`
		Pagination listPage     `json:"pagination"`
	}{toSummaries(list), toPage(info)})
}

// fixSummary makes tags a list; step_types and stages stay null when the control does not restrict them,
// as in control data, where an empty list would mean "never applies".
func fixSummary(c *guard.ControlSummary) {
	if c.Tags == nil {
		c.Tags = []string{}
	}
}

// pathControl reads the control named by the control_id path parameter.
func (s *Server) pathControl(r *http.Request) (guard.ControlRecord, error) {
	id, err := pathID(r, "control_id")
	if err != nil {
		return guard.ControlRecord{}, err
	}
	return s.store.GetControl(r.Context(), id)
}

func (s *Server) getControl(w http.ResponseWriter, r *http.Request) {
	rec, err := s.pathControl(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	setVersionETag(w, rec.Version)
	problem.Respond(w, r, s.log, http.StatusOK, toControlOut(rec))
}

func (s *Server) patchControl(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "control_id")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var req patchControlRequest
	if err := problem.DecodeJSON(r, &req); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if req.Name != nil {
		if err := guard.ValidateControlName(*req.Name); err != nil {
			s.writeErr(w, r, problem.Validation("the control patch is not valid", guard.Problem{Field: "name", Code: "invalid", Message: err.Error()}))
			return
		}
	}
	var mode *guard.Mode
	if req.Mode != nil {
		m := guard.Mode(*req.Mode)
		if m != guard.ModeEnforce && m != guard.ModeShadow {
			s.writeErr(w, r, problem.Validation("the control patch is not valid", guard.Problem{Field: "mode", Code: "enum", Message: "must be one of enforce, shadow"}))
			return
		}
		mode = &m
	}
	ifVersion, err := ifMatchVersion(r.Context(), r, id, s.store.GetControl)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	patch := guard.ControlPatch{Name: req.Name, Enabled: req.Enabled, Mode: mode}
	var rec guard.ControlRecord
	if ifVersion > 0 {
		rec, err = s.store.UpdateControlIf(r.Context(), id, patch, ifVersion)
	} else {
		rec, err = s.store.UpdateControl(r.Context(), id, patch)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	setVersionETag(w, rec.Version)
	problem.Respond(w, r, s.log, http.StatusOK, patchControlOut{controlOut: toControlOut(rec), Success: true})
}

func (s *Server) deleteControl(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "control_id")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	force, err := queryBool(r, "force")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	ifVersion, err := ifMatchVersion(r.Context(), r, id, s.store.GetControl)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var agents []string
	if ifVersion > 0 {
		agents, err = s.store.DeleteControlIf(r.Context(), id, force != nil && *force, ifVersion)
	} else {
		agents, err = s.store.DeleteControl(r.Context(), id, force != nil && *force)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	if agents == nil {
		agents = []string{}
	}
	problem.Respond(w, r, s.log, http.StatusOK, deleteControlResponse{Success: true, UnlinkedAgents: agents, DissociatedFromAgents: agents,
		DissociatedFromPolicies: []int64{}, DissociatedFrom: []int64{}, DetachedTargetBindings: []int64{}})
}

func (s *Server) getControlData(w http.ResponseWriter, r *http.Request) {
	rec, err := s.pathControl(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if rec.Data == nil {
		s.writeErr(w, r, guard.ErrNoControlData)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Data *guard.ControlData `json:"data"`
	}{rec.Data})
}

func (s *Server) putControlData(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "control_id")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	data, err := s.decodeData(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	ifVersion, err := ifMatchVersion(r.Context(), r, id, s.store.GetControl)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var version int
	if ifVersion > 0 {
		version, err = s.store.PutControlDataIf(r.Context(), id, data, ifVersion)
	} else {
		version, err = s.store.PutControlData(r.Context(), id, data)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.cache.invalidate()
	setVersionETag(w, version)
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Success bool `json:"success"`
		Version int  `json:"version"`
	}{true, version})
}

func (s *Server) validateControl(w http.ResponseWriter, r *http.Request) {
	if _, err := s.decodeData(r); err != nil {
		s.writeErr(w, r, err)
		return
	}
	problem.Respond(w, r, s.log, http.StatusOK, struct {
		Valid   bool `json:"valid"`
		Success bool `json:"success"` // the reference implementation's name
	}{true, true})
}
