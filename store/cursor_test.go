package store_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// cursorShape is what a cursor is made of: characters that survive lower-casing (the reference SDKs
// lower-case a cursor and check it like an agent name), at least 10 of them.
var cursorShape = regexp.MustCompile(`^[0-9a-z]{10,}$`)

// TestCursorsAreAuthenticated: a cursor is lower-case and long enough; every store on the same database
// accepts it (the secret is the database's); one edited, forged, taken from another list or issued by
// another database is refused like garbage.
func TestCursorsAreAuthenticated(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		a, err := store.OpenAndMigrate(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := store.Open(ctx, url) // a second replica on the same database
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		for i := range 3 {
			if _, _, err := a.InitAgent(ctx, guard.AgentInit{Agent: guard.Agent{Name: fmt.Sprintf("agent-%d", i)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateControl(ctx, fmt.Sprintf("c%d", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		page1, info, err := a.ListAgents(ctx, guard.AgentFilter{}, guard.PageRequest{Limit: 1})
		if err != nil || info.NextCursor == nil || len(page1) != 1 {
			t.Fatalf("first page: %v %+v", err, info)
		}
		cur := *info.NextCursor
		if !cursorShape.MatchString(cur) || strings.ToLower(cur) != cur {
			t.Fatalf("cursor %q is not made of lower-case letters and digits, at least 10", cur)
		}
		page2, _, err := b.ListAgents(ctx, guard.AgentFilter{}, guard.PageRequest{Limit: 1, Cursor: cur})
		if err != nil || len(page2) != 1 || page2[0].Name == page1[0].Name {
			t.Fatalf("the other replica's page 2: %v %+v", err, page2)
		}
		_, cinfo, err := b.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1})
		if err != nil || cinfo.NextCursor == nil {
			t.Fatalf("controls: %v %+v", err, cinfo)
		}
		if _, _, err := a.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1, Cursor: *cinfo.NextCursor}); err != nil {
			t.Fatalf("controls cursor on the first replica: %v", err)
		}

		other := storetest.SQLite(t) // another database: another secret
		for i := range 2 {
			if _, err := other.CreateControl(ctx, fmt.Sprintf("o%d", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		_, oinfo, err := other.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1})
		if err != nil || oinfo.NextCursor == nil {
			t.Fatalf("other database: %v %+v", err, oinfo)
		}

		flip := func(s string, i int) string {
			c := byte('0')
			if s[i] == '0' {
				c = '1'
			}
			return s[:i] + string(c) + s[i+1:]
		}
		for name, bad := range map[string]string{
			"garbage":           "not-a-cursor",
			"empty-looking":     strings.Repeat("0", len(cur)),
			"mac edited":        flip(cur, len(cur)-1),
			"key edited":        flip(cur, 16),
			"upper case":        strings.ToUpper(cur),
			"truncated":         cur[:len(cur)-1],
			"controls cursor":   *cinfo.NextCursor,
			"other database":    *oinfo.NextCursor,
			"old base64 cursor": "MS5hZ2VudHMuMw",
			"too long":          cur + "0",
		} {
			if _, _, err := b.ListAgents(ctx, guard.AgentFilter{}, guard.PageRequest{Limit: 1, Cursor: bad}); !errors.Is(err, guard.ErrBadCursor) {
				t.Errorf("%s cursor %q: %v, want ErrBadCursor", name, bad, err)
			}
		}
	})
}

// TestControlCursorsArePositions: the control list's cursor is the reference's integer, the id of the
// page's last control; pages walk with it from any replica, a position the server did not issue starts a
// page below it, a signed cursor of the earlier form is still read, and anything else that is not a
// positive integer without leading zeros is refused.
func TestControlCursorsArePositions(t *testing.T) {
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := ctxT(t)
		s, err := store.OpenAndMigrate(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var ids []int64
		for i := range 4 {
			rec, err := s.CreateControl(ctx, fmt.Sprintf("pos-%d", i), nil)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rec.ID)
		}
		var walked []int64
		cursor := ""
		for range 10 {
			page, info, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page {
				walked = append(walked, c.ID)
			}
			if !info.HasMore {
				break
			}
			if want := fmt.Sprint(page[len(page)-1].ID); *info.NextCursor != want {
				t.Fatalf("next_cursor %q, want the last id %s", *info.NextCursor, want)
			}
			cursor = *info.NextCursor
		}
		if fmt.Sprint(walked) != fmt.Sprint([]int64{ids[3], ids[2], ids[1], ids[0]}) {
			t.Fatalf("walked %v, want %v newest first", walked, ids)
		}
		page, _, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 10, Cursor: fmt.Sprint(ids[3] + 100)})
		if err != nil || len(page) != 4 {
			t.Fatalf("a position past the newest: %v, %d controls", err, len(page))
		}
		// A control's versions page the same way, by version number.
		for v := range 3 {
			if _, err := s.UpdateControl(ctx, ids[0], guard.ControlPatch{Name: ptr(fmt.Sprintf("pos-renamed-%d", v))}); err != nil {
				t.Fatal(err)
			}
		}
		vs, vinfo, err := s.ListControlVersions(ctx, ids[0], guard.PageRequest{Limit: 2})
		if err != nil || !vinfo.HasMore || *vinfo.NextCursor != fmt.Sprint(vs[1].Version) {
			t.Fatalf("versions page 1: %v %+v", err, vinfo)
		}
		vs2, _, err := s.ListControlVersions(ctx, ids[0], guard.PageRequest{Limit: 2, Cursor: *vinfo.NextCursor})
		if err != nil || len(vs2) != 2 || vs2[0].Version != vs[1].Version-1 {
			t.Fatalf("versions page 2: %v %+v", err, vs2)
		}
		for _, bad := range []string{"0", "05", "-1", "+3", "1.5", "1e3", "99999999999999999999", " 3", "abc"} {
			if _, _, err := s.ListControls(ctx, guard.ControlFilter{}, guard.PageRequest{Limit: 1, Cursor: bad}); !errors.Is(err, guard.ErrBadCursor) {
				t.Errorf("cursor %q: %v, want ErrBadCursor", bad, err)
			}
		}
	})
}
