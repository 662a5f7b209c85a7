package main

import (
	"errors"
	"net/url"
	"strings"
)

// secretValues returns the secrets in the environment that an error message must never carry: the
// database password and every API key.
func secretValues(getenv func(string) string) []string {
	var out []string
	for _, name := range []string{"DATABASE_URL", "DB_URL"} {
		if u, err := url.Parse(strings.TrimSpace(getenv(name))); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != "" {
				out = append(out, p, url.QueryEscape(p), url.PathEscape(p))
			}
		} else if err != nil {
			// An unparsable URL (url.Parse's error repeats it): take the text between "user:" and "@".
			v := getenv(name)
			if i := strings.Index(v, "://"); i >= 0 {
				if at := strings.LastIndex(v, "@"); at > i {
					if _, pw, ok := strings.Cut(v[i+3:at], ":"); ok && pw != "" {
						out = append(out, pw)
					}
				}
			}
		}
	}
	for _, name := range []string{"GUARD_API_KEYS", "GUARD_ADMIN_API_KEYS", "EXT_API_KEY"} {
		out = append(out, splitList(getenv(name))...)
	}
	if f := getenv("GUARD_API_KEYS_FILE"); f != "" {
		if keys, err := readKeyFile(f); err == nil {
			for _, k := range keys {
				if k.Key != "" {
					out = append(out, k.Key)
				}
			}
		}
	}
	return out
}

// redactedError is an error whose message had secrets replaced; it still unwraps to the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact replaces every secret of the environment in err's message with "xxxxx", so that what main prints
// (and a log collector keeps) never holds a password, whatever a driver put in its error.
func redact(err error, getenv func(string) string) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	msg := err.Error()
	changed := false
	for _, s := range secretValues(getenv) {
		if len(s) >= 3 && strings.Contains(msg, s) {
			msg, changed = strings.ReplaceAll(msg, s, "xxxxx"), true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{msg: msg, err: err}
}
