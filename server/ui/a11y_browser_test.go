package ui_test

// Keyboard and labelling checks over every page, at desktop and phone widths.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// a11yProblems lists, for the page shown: form fields without a label, buttons and links without an
// accessible name, duplicate ids, and elements wider than the viewport (horizontal overflow of the page
// itself; wide tables scroll inside their own box).
const a11yProblems = `(() => {
	const out = [];
	const name = (e) => (e.getAttribute('aria-label') || '') + (e.getAttribute('aria-labelledby') ? 'x' : '') + (e.textContent || '').trim();
	for (const e of document.querySelectorAll('input, select, textarea')) {
		if (e.type === 'hidden') continue;
		if (!(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby')) out.push('unlabelled ' + e.tagName + '#' + e.id);
	}
	for (const e of document.querySelectorAll('button, a[href]')) if (!name(e)) out.push('nameless ' + e.tagName + ' ' + e.outerHTML.slice(0, 80));
	const seen = new Set();
	for (const e of document.querySelectorAll('[id]')) { if (seen.has(e.id)) out.push('duplicate id ' + e.id); seen.add(e.id); }
	if (document.documentElement.scrollWidth > window.innerWidth + 1) {
		const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap, pre'));
		out.push('page overflows horizontally: ' + document.documentElement.scrollWidth + 'px > ' + window.innerWidth + 'px; ' +
			wide.slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : '')).join(', '));
	}
	return out;
})()`

// seedPages creates what every page needs to show something and returns the routes to check.
func seedPages(a *app) []string {
	a.initAgent("support-bot", "answers customers")
	id := a.createControl("block-ssn", regexControl(`\d{3}-\d{2}-\d{4}`, "deny", "pre"))
	a.createControl("steer-refunds", regexControl(`refund`, "steer", "pre", "post"))
	a.call("POST", fmt.Sprintf("/api/v1/agents/support-bot/controls/%d", id), nil, 200, nil)
	a.call("PUT", fmt.Sprintf("/api/v1/controls/%d/data", id), map[string]any{"data": regexControl(`\d{9}`, "warn", "pre")}, 200, nil)
	a.evaluate("support-bot", "pre", "ssn 123456789")
	a.flushEvents()
	return []string{"#/overview", "#/agents", "#/agents/support-bot", "#/controls", "#/controls/new", fmt.Sprintf("#/controls/%d", id),
		fmt.Sprintf("#/controls/%d/history", id), fmt.Sprintf("#/controls/%d/activity", id), "#/evaluators", "#/events",
		fmt.Sprintf("#/events?control=%d&matched=false", id), "#/approvals", "#/agents/support-bot/sessions/s-1"}
}

func TestLabelsNamesAndWidths(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			a := startApp(t, appOptions{width: width, height: 800})
			routes := seedPages(a)
			a.open(routes[0])
			for _, r := range routes {
				a.goTo(r)
				if probs := eval[[]string](a, "a11y checks", a11yProblems); len(probs) > 0 {
					t.Errorf("%s at %d px:\n  %s", r, width, strings.Join(probs, "\n  "))
				}
			}
			a.noPageErrors()
		})
	}
}

// focusables lists the keyboard-reachable elements of the page, in document order, as "tag#id:text".
const focusables = `[...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
	.filter(e => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden' && !e.closest('[hidden]'))
	// Inside a closed <details> only its summary is reachable (the phone layout folds the events filters).
	.filter(e => { const d = e.closest('details'); return !d || d.open || e.closest('summary'); })
	.filter(e => !(e.type === 'radio' && !e.checked))
	.map(e => e.tagName + '#' + e.id + ':' + (e.getAttribute('aria-label') || e.textContent || e.name || '').trim().slice(0, 30))`

const activeKey = `(() => { const e = document.activeElement; return e ? e.tagName + '#' + e.id + ':' + (e.getAttribute('aria-label') || e.textContent || e.name || '').trim().slice(0, 30) : ''; })()`

func TestTabReachesEveryControl(t *testing.T) {
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			a := startApp(t, appOptions{width: width, height: 800})
			routes := seedPages(a)
			a.open(routes[0])
			for _, r := range routes {
				t.Run(strings.ReplaceAll(r, "/", "_"), func(t *testing.T) {
					a.goTo(r)
					want := eval[[]string](a, "focusable elements", focusables)
					a.do("focus the skip link", evalVoid(`document.querySelector('.skip').focus()`))
					reached := map[string]bool{eval[string](a, "active element", activeKey): true}
					// A date-time field takes several Tab presses (one per part), so allow a few per element.
					for i := 0; i < 4*len(want) && !all(want, reached); i++ {
						a.do("tab", chromedp.KeyEvent(kb.Tab))
						reached[eval[string](a, "active element", activeKey)] = true
					}
					var missed []string
					for _, w := range want {
						if !reached[w] {
							missed = append(missed, w)
						}
					}
					if len(missed) > 0 {
						t.Errorf("Tab never reached on %s at %d px:\n  %s", r, width, strings.Join(missed, "\n  "))
					}
				})
			}
		})
	}
}

func all(keys []string, set map[string]bool) bool {
	for _, k := range keys {
		if !set[k] {
			return false
		}
	}
	return true
}
