package guard

import (
	"context"
	"time"
)

// The store interfaces are split by consumer: PolicyReader for whatever evaluates (the server's
// evaluation cache, tools that build an Engine), ControlStore and AgentStore for the control plane,
// EventStore for observability. The store package implements all of them over SQLite and PostgreSQL.

// PolicyReader is the read side evaluation needs.
type PolicyReader interface {
	// AgentControls returns the controls linked to the agent that have data (enabled or not), in
	// control-id order, with the agent's current revision. ErrAgentNotFound if there is no such agent.
	AgentControls(ctx context.Context, agentName string) ([]AgentControl, Revision, error)
	// AgentRevision returns the agent's revision without loading controls.
	AgentRevision(ctx context.Context, agentName string) (Revision, error)
	// PolicyEpoch returns a value that changes whenever any agent's revision changes (a cheap poll for
	// cache invalidation across server replicas).
	PolicyEpoch(ctx context.Context) (int64, error)
}

// Revision identifies one state of an agent's effective controls; it changes whenever a link, a linked
// control's data, name or enabled flag changes. Used for ETags.
type Revision int64

// ControlStore is the control-plane CRUD for controls and their history.
type ControlStore interface {
	// CreateControl creates a control. With nil data it exists disabled and without data.
	CreateControl(ctx context.Context, name string, data *ControlData) (ControlRecord, error)
	GetControl(ctx context.Context, id int64) (ControlRecord, error)
	ListControls(ctx context.Context, filter ControlFilter, page PageRequest) ([]ControlSummary, PageInfo, error)
	// UpdateControl renames and/or enables/disables; each change writes a version.
	UpdateControl(ctx context.Context, id int64, patch ControlPatch) (ControlRecord, error)
	// PutControlData replaces the data and returns the new version number.
	PutControlData(ctx context.Context, id int64, data ControlData) (int, error)
	// UpdateControlIf and PutControlDataIf are UpdateControl and PutControlData applied only when the
	// control is at version ifVersion, checked in the write's transaction: otherwise nothing changes and
	// the error is a *VersionMismatchError. They make concurrent read-modify-write cycles safe (If-Match).
	UpdateControlIf(ctx context.Context, id int64, patch ControlPatch, ifVersion int) (ControlRecord, error)
	PutControlDataIf(ctx context.Context, id int64, data ControlData, ifVersion int) (int, error)
	// DeleteControlIf is DeleteControl under the same condition.
	DeleteControlIf(ctx context.Context, id int64, force bool, ifVersion int) ([]string, error)
	// DeleteControl soft-deletes; without force a linked control gives *ControlInUseError. It returns the
	// agents the control was unlinked from.
	DeleteControl(ctx context.Context, id int64, force bool) ([]string, error)
	ListControlVersions(ctx context.Context, id int64, page PageRequest) ([]ControlVersion, PageInfo, error)
	GetControlVersion(ctx context.Context, id int64, version int) (ControlVersion, error)
	// RestoreControlVersion makes the control's name, enabled flag and data those of the version, writing
	// a new "restored" version.
	RestoreControlVersion(ctx context.Context, id int64, version int) (ControlRecord, error)
}

// AgentSDK is the client library an agent last named itself with (the reference SDKs' X-Agent-Control-SDK
// and X-Agent-Control-SDK-Version headers) and when it was last seen so.
type AgentSDK struct {
	SDK     string    `json:"name"`
	Version string    `json:"version"`
	SeenAt  time.Time `json:"seen_at"`
}

// AgentSDKStore keeps the client library each agent last named itself with; the store package implements
// it (the server shows it on an agent and in the dashboard; a store without it shows none).
type AgentSDKStore interface {
	RecordAgentSDK(ctx context.Context, agent, sdk, version string, at time.Time) error
	// AgentSDK returns the agent's last seen client library; ok is false when none was recorded.
	AgentSDK(ctx context.Context, agent string) (sdk AgentSDK, ok bool, err error)
}

// AgentStore is the control-plane CRUD for agents, their steps and their links to controls.
type AgentStore interface {
	// InitAgent creates or updates an agent with its steps (see ConflictMode).
	InitAgent(ctx context.Context, in AgentInit) (created bool, agent Agent, err error)
	GetAgent(ctx context.Context, name string) (Agent, []StepSchema, error)
	ListAgents(ctx context.Context, filter AgentFilter, page PageRequest) ([]AgentSummary, PageInfo, error)
	PatchAgent(ctx context.Context, name string, patch AgentPatch) (Agent, []StepSchema, error)
	// LinkControl is idempotent.
	LinkControl(ctx context.Context, agentName string, controlID int64) error
	UnlinkControl(ctx context.Context, agentName string, controlID int64) (removed bool, err error)
}

// EventStore stores observability events and aggregates them.
type EventStore interface {
	InsertEvents(ctx context.Context, events []Event) error
	QueryEvents(ctx context.Context, q EventQuery) ([]Event, int, error)
	Stats(ctx context.Context, q StatsQuery) (Stats, error)
	// PruneEvents deletes events older than before and returns how many.
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
}

// Store is everything the server needs.
type Store interface {
	PolicyReader
	ControlStore
	AgentStore
	EventStore
	// Ping reports whether the database answers (ErrUnavailable when not).
	Ping(ctx context.Context) error
	Close() error
}

// ControlRecord is a stored control.
type ControlRecord struct {
	ID        int64        `json:"control_id"`
	Name      string       `json:"name"`
	Enabled   bool         `json:"enabled"`
	Data      *ControlData `json:"data"` // nil until data is put
	Version   int          `json:"version"`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt time.Time    `json:"updated_at"`
}

// ControlPatch changes a control's name, enabled flag and/or mode; nil fields are left alone.
type ControlPatch struct {
	Name    *string `json:"name,omitempty"`
	Enabled *bool   `json:"enabled,omitempty"`
	// Mode switches the control between enforce and shadow (data.mode), a new version of its data:
	// the promotion of a shadow control.
	Mode *Mode `json:"mode,omitempty"`
}

// ControlFilter narrows ListControls; zero fields do not filter.
type ControlFilter struct {
	Name string // substring, case-insensitive
	// Scope keeps the controls linked to at least one of its agents, and the unlinked ones (which belong
	// to no agent): the controls a scoped key may see.
	Scope    AgentScope
	Enabled  *bool
	Tag      string
	StepType string
	Stage    Stage
}

// ControlSummary is one row of the control list.
type ControlSummary struct {
	ID          int64     `json:"control_id"`
	Name        string    `json:"name"`
	Enabled     bool      `json:"enabled"`
	Description string    `json:"description"`
	Execution   Execution `json:"execution"`
	StepTypes   []string  `json:"step_types"`
	Stages      []Stage   `json:"stages"`
	Tags        []string  `json:"tags"`
	Decision    Decision  `json:"decision"`
	// Mode is the control's data.mode: "shadow" for a control evaluated and recorded but never part of a
	// decision, omitted for an enforcing one (the dashboard marks shadow controls in the list).
	Mode       Mode      `json:"mode,omitempty"`
	AgentCount int       `json:"agent_count"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Version events.
const (
	VersionCreated  = "created"
	VersionUpdated  = "updated"
	VersionRenamed  = "renamed"
	VersionEnabled  = "enabled"
	VersionDisabled = "disabled"
	VersionDeleted  = "deleted"
	VersionRestored = "restored"
)

// ControlVersion is one entry of a control's history: the full snapshot after the change.
type ControlVersion struct {
	ControlID int64        `json:"-"`
	Version   int          `json:"version"`
	Event     string       `json:"event"`
	CreatedAt time.Time    `json:"created_at"`
	Name      string       `json:"name"`
	Enabled   bool         `json:"enabled"`
	Data      *ControlData `json:"data"`
}

// PageRequest asks for one page of a list: Cursor is "" for the first page or a NextCursor the store
// issued; a cursor it did not issue gives ErrBadCursor.
type PageRequest struct {
	Cursor string
	Limit  int
}

// PageInfo describes where a page sits in its list.
type PageInfo struct {
	Limit      int     `json:"limit"`
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

// Agent is a registered agent.
type Agent struct {
	Name        string         `json:"agent_name"`
	Description string         `json:"agent_description"`
	Version     string         `json:"agent_version"`
	Metadata    map[string]any `json:"agent_metadata"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// AgentSummary is one row of the agent list.
type AgentSummary struct {
	Name         string    `json:"agent_name"`
	Description  string    `json:"agent_description"`
	Version      string    `json:"agent_version"`
	StepCount    int       `json:"step_count"`
	ControlCount int       `json:"control_count"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// AgentFilter narrows ListAgents.
type AgentFilter struct {
	Name  string     // substring
	Scope AgentScope // only these agents (a scoped key's)
}

// StepSchema is a step an agent registers; (Type, Name) is unique within an agent.
type StepSchema struct {
	Type         string         `json:"type"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  map[string]any `json:"input_schema,omitempty"`
	OutputSchema map[string]any `json:"output_schema,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	// Labels are session labels the step carries (docs/control-language.md, "Sessions"): a step of this
	// name let through at the pre stage adds them to its session, as action.session.label_steps does.
	// At most MaxSessionLabels, each as CheckLabels accepts.
	Labels []string `json:"labels,omitempty"`
}

// ConflictMode says how InitAgent treats an agent that exists.
type ConflictMode string

// Strict keeps stored steps, adds new ones and refuses a changed schema (ErrSchemaIncompatible);
// overwrite replaces description, version, metadata and the whole step list.
const (
	ConflictStrict    ConflictMode = "strict"
	ConflictOverwrite ConflictMode = "overwrite"
)

// AgentInit is the input of InitAgent.
type AgentInit struct {
	Agent        Agent
	Steps        []StepSchema
	ConflictMode ConflictMode
}

// AgentPatch changes an agent; nil fields are left alone.
type AgentPatch struct {
	Description *string
	Version     *string
	Metadata    map[string]any // replaces when non-nil
	RemoveSteps []StepRef
}

// StepRef names a step of an agent.
type StepRef struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// AgentControl is a control linked to an agent, as GET /agents/{name}/controls returns it.
type AgentControl struct {
	ID        int64       `json:"id"`
	ControlID int64       `json:"control_id"`
	Name      string      `json:"name"`
	Enabled   bool        `json:"enabled"`
	Control   ControlData `json:"control"`
	// Version is the control's current version: engines built from the list put it in their events.
	Version int `json:"version,omitempty"`
}
